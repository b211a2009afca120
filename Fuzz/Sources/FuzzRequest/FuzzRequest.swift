// Fuzz target: the whole request path — JSON framing, base64url, origin, EncryptionInfo, transcript,
// DeviceRequest, reader authentication, selection, planning, the response — against the built-in test
// context (TestVectors/context, with its reader trust anchors; an empty context if it cannot be
// loaded). The first line of the input is the origin, the rest the raw request.
//
// Properties: parse either succeeds or throws AnnexCError; accept (the best match per DocRequest),
// respond(to: parse(…)) (every match, the consent model) and respond with the consent model's own
// summary as the consented request agree: all three refuse with the same code, or all three answer
// with the same DeviceResponse. The engine seals with a fixed ephemeral key here, so the fuzzer opens
// each answer through the sender's own key schedule and compares the decrypted DeviceResponses with
// their (randomized) device signatures blanked.
@_spi(Testing) import AnnexC
@_spi(Testing) import HPKE
import FoundationEssentials
import MdocCBOR

let ephemeral = try! HPKE.PrivateKey.derive(kem: .p256HKDFSHA256, ikm: [UInt8](repeating: 7, count: 32))

let engine: AnnexCEngine = {
    let clock = MdocDate.parseDateTime("2026-09-01T00:00:00Z")!
    let ctx =
        (try? CredentialContext.load(from: URL(fileURLWithPath: "TestVectors/context"), requirePrivateFiles: false))
        ?? nil
    var configuration = AnnexCEngine.Configuration(clock: { clock })
    configuration.ephemeralKeySource = { ephemeral }
    return AnnexCEngine(
        context: ctx ?? (try! CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:]))),
        configuration: configuration)
}()

/// The DeviceResponse inside a sealed answer, opened with the fixed ephemeral key, with every device
/// signature replaced by zeros.
func plaintext(_ response: Data, for request: PresentmentRequest) -> [UInt8] {
    guard let info = request.encryptionInfo, let y = info.recipientPublicKey.y else {
        preconditionFailure("an answered request has EncryptionInfo")
    }
    let key = try! HPKE.PublicKey(serialized: [0x04] + info.recipientPublicKey.x + y, kem: .p256HKDFSHA256)
    let sender = try! HPKE.Sender(
        suite: .annexC, recipient: key, info: request.sessionTranscriptBytes, ephemeralKey: ephemeral)
    let sealed = try! EncryptedResponse(response: response)
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
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let newline = bytes.firstIndex(of: 0x0a) ?? bytes.count
    let origin = String(decoding: bytes[0..<newline], as: UTF8.self)
    let raw = Data(newline < bytes.count ? Array(bytes[(newline + 1)...]) : [])
    let parsed = Result { () throws(AnnexCError) in try engine.parse(rawRequest: raw, origin: origin) }
    _ = engine.explain(rawRequest: raw, origin: origin)
    let direct = Result { () throws(AnnexCError) in try engine.accept(rawRequest: raw, origin: origin) }
    let reference = parsed.flatMap { p in Result { () throws(AnnexCError) in try engine.respond(to: p) } }
    let consented = parsed.flatMap { p in
        Result { () throws(AnnexCError) in try engine.respond(to: p, consented: p.consentSummary()) }
    }
    for other in [reference, consented] {
        switch (direct, other) {
        case (.success(let a), .success(let b)):
            guard case .success(let p) = parsed else { preconditionFailure("an answer without a parse") }
            precondition(
                plaintext(a, for: p) == plaintext(b, for: p),
                "accept and respond(to: parse) released different DeviceResponses")
        case (.failure(let a), .failure(let b)):
            precondition(a.code == b.code, "accept and respond(to: parse) refused differently")
        default: preconditionFailure("accept and respond(to: parse) disagree")
        }
    }
    return 0
}
