// Fuzz target: the OpenID4VP request path — JSON framing, the request object (unsigned, compact JWS,
// JWS JSON in three placements), JOSE headers and x5c, client identifiers, expected_origins, trust,
// parameters, client_metadata (JWKs, enc, formats), DCQL, the transcript, planning and the response
// (vp_token, JWE) — against the built-in test context. The first line of the input is the origin,
// the rest the raw request.
//
// Properties: parse either succeeds or throws PresentmentError; accept, respond(to: parse(…)) and
// respond with the consent model's own summary agree: all three refuse with the same code, or all
// three answer with the same payload. The engine encrypts with a fixed ephemeral key here, so the
// fuzzer reads each answer back through that key and compares the payloads with every (randomized)
// device signature blanked.
@_spi(Testing) import DigitalCredentials
import FoundationEssentials
import FuzzSupport
import MdocCBOR

let scalar = [UInt8](repeating: 0, count: 31) + [7]

/// An engine that answers OpenID4VP entries only, encrypting with the fixed ephemeral key.
let engine = fuzzEngine(protocols: [.openID4VP], jweP256Scalar: scalar)

/// The payload of an answer with every device signature in every presentation zeroed.
func normalized(_ response: Data, for request: DigitalCredentialsRequest) -> [UInt8] {
    guard let payload = request.details.openID4VPPayload(of: response, jweP256Scalar: scalar) else {
        preconditionFailure("an answer the engine cannot read back")
    }
    let token = try! JSONDecoder().decode([String: [String: [String]]].self, from: Data(payload))
    var out = [UInt8]()
    for (id, presentations) in token["vp_token"]!.sorted(by: { $0.key < $1.key }) {
        out += Array(id.utf8)
        for p in presentations {
            var bytes = Array(Data(base64Encoded: base64(p))!)
            for doc in try! DeviceResponse(encoded: bytes).documents {
                guard case .signature(let sig) = doc.deviceSigned.deviceAuth else { continue }
                let r = sig.signature.startIndex..<sig.signature.endIndex
                bytes.replaceSubrange(r, with: [UInt8](repeating: 0, count: r.count))
            }
            out += bytes
        }
    }
    return out
}

/// base64url to padded standard base64.
func base64(_ s: String) -> String {
    let t = String(s.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
    return t + String(repeating: "=", count: (4 - t.utf8.count % 4) % 4)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    checkAgreement(
        start, count,
        parse: { (raw, origin) throws(PresentmentError) in try engine.parse(rawRequest: raw, origin: origin) },
        explain: { _ = engine.explain(rawRequest: $0, origin: $1) },
        accept: { (raw, origin) throws(PresentmentError) in try engine.accept(rawRequest: raw, origin: origin) },
        respond: { (p, consented) throws(PresentmentError) in try engine.respond(to: p, consented: consented) },
        normalized: normalized,
        respondApproving: { (p, a) throws(PresentmentError) in try engine.respond(to: p, approving: a) },
        presented: { (r, p) in
            let payload = p.details.openID4VPPayload(of: r, jweP256Scalar: scalar)!
            let token = try! JSONDecoder().decode([String: [String: [String]]].self, from: Data(payload))
            return Array(token["vp_token"]!.keys)
        },
        documentKey: { (p, i) in p.details.openID4VP!.credentialQueryIDs[i] })
    return 0
}
