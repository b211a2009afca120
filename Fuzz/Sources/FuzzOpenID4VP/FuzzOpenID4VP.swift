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
import FoundationEssentials
import MdocCBOR
@_spi(Testing) import OpenID4VP
import Presentment

let ephemeral = try! JWEEphemeralKey(p256Scalar: [UInt8](repeating: 0, count: 31) + [7])

let engine: OpenID4VPEngine = {
    let clock = MdocDate.parseDateTime("2026-09-01T00:00:00Z")!
    let ctx =
        (try? CredentialContext.load(from: URL(fileURLWithPath: "TestVectors/context"), requirePrivateFiles: false))
        ?? nil
    var configuration = OpenID4VPEngine.Configuration(clock: { clock })
    configuration.ephemeralKeySource = { ephemeral }
    return OpenID4VPEngine(
        context: ctx ?? (try! CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:]))),
        configuration: configuration)
}()

/// The payload of an answer with every device signature in every presentation zeroed.
func normalized(_ response: Data, for request: PresentmentRequest) -> [UInt8] {
    guard let payload = OpenID4VPEngine.payload(of: response, for: request, ephemeral: ephemeral) else {
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
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let newline = bytes.firstIndex(of: 0x0a) ?? bytes.count
    let origin = String(decoding: bytes[0..<newline], as: UTF8.self)
    let raw = Data(newline < bytes.count ? Array(bytes[(newline + 1)...]) : [])
    let parsed = Result { () throws(PresentmentError) in try engine.parse(rawRequest: raw, origin: origin) }
    _ = engine.explain(rawRequest: raw, origin: origin)
    let direct = Result { () throws(PresentmentError) in try engine.accept(rawRequest: raw, origin: origin) }
    let reference = parsed.flatMap { p in Result { () throws(PresentmentError) in try engine.respond(to: p) } }
    let consented = parsed.flatMap { p in
        Result { () throws(PresentmentError) in try engine.respond(to: p, consented: p.consentSummary()) }
    }
    for other in [reference, consented] {
        switch (direct, other) {
        case (.success(let a), .success(let b)):
            guard case .success(let p) = parsed else { preconditionFailure("an answer without a parse") }
            precondition(
                normalized(a, for: p) == normalized(b, for: p),
                "accept and respond(to: parse) released different payloads")
        case (.failure(let a), .failure(let b)):
            precondition(a.code == b.code, "accept and respond(to: parse) refused differently")
        default: preconditionFailure("accept and respond(to: parse) disagree")
        }
    }
    return 0
}
