// Fuzz target: the whole request path — JSON framing, base64url, origin, EncryptionInfo, transcript,
// DeviceRequest, reader authentication, selection, planning, the response — against the built-in test
// context (TestVectors/context, with its reader trust anchors; an empty context if it cannot be
// loaded). The first line of the input is the origin, the rest the raw request.
//
// Properties: parse either succeeds or throws PresentmentError; accept (the best match per DocRequest),
// respond(to: parse(…)) (every match, the consent model) and respond with the consent model's own
// summary as the consented request agree: all three refuse with the same code, or all three answer
// with the same DeviceResponse. The engine seals with a fixed ephemeral key here, so the fuzzer opens
// each answer through the sender's own key schedule and compares the decrypted DeviceResponses with
// their (randomized) device signatures blanked.
@_spi(Testing) import DigitalCredentials
@_spi(Testing) import HPKE
import FoundationEssentials
import FuzzSupport
import MdocCBOR

let ephemeral = try! HPKE.PrivateKey.derive(kem: .p256HKDFSHA256, ikm: [UInt8](repeating: 7, count: 32))

/// An engine that answers Annex C entries only, sealing with the fixed ephemeral key.
let engine = fuzzEngine(protocols: [.annexC], hpke: ephemeral)

/// The DeviceResponse inside a sealed answer, opened with the fixed ephemeral key, with every device
/// signature replaced by zeros.
func plaintext(_ response: Data, for request: DigitalCredentialsRequest) -> [UInt8] {
    guard let recipient = request.details.annexCRecipientKey, let y = recipient.y else {
        preconditionFailure("an answered request has EncryptionInfo")
    }
    let key = try! HPKE.PublicKey(serialized: [0x04] + recipient.x + y, kem: .p256HKDFSHA256)
    let sender = try! HPKE.Sender(
        suite: .annexC, recipient: key, info: request.sessionTranscriptBytes, ephemeralKey: ephemeral)
    // EncryptedResponse = ["dcapi", {"enc": bstr, "cipherText": bstr}], raw or in a JSON framing.
    let sealed = encryptedResponse(response)
    precondition(sealed.enc == sender.encapsulatedKey, "the answer was not sealed with the fixed ephemeral key")
    var out = try! sender.openFirstSealed(sealed.cipherText)
    for doc in try! DeviceResponse(encoded: out).documents {
        guard case .signature(let sig) = doc.deviceSigned.deviceAuth else { continue }
        let r = sig.signature.startIndex..<sig.signature.endIndex
        out.replaceSubrange(r, with: [UInt8](repeating: 0, count: r.count))
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    checkAgreement(
        start, count,
        parse: { (raw, origin) throws(PresentmentError) in try engine.parse(rawRequest: raw, origin: origin) },
        explain: { _ = engine.explain(rawRequest: $0, origin: $1) },
        accept: { (raw, origin) throws(PresentmentError) in try engine.accept(rawRequest: raw, origin: origin) },
        respond: { (p, consented) throws(PresentmentError) in try engine.respond(to: p, consented: consented) },
        normalized: plaintext,
        respondApproving: { (p, a) throws(PresentmentError) in try engine.respond(to: p, approving: a) },
        presented: { (r, p) in try! DeviceResponse(encoded: plaintext(r, for: p)).documents.map(\.docType) },
        documentKey: { (p, i) in p.documents[i].docType })
    return 0
}
