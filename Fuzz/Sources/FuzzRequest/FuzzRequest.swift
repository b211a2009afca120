// Fuzz target: the whole request path — JSON framing, base64url, origin, EncryptionInfo, transcript,
// DeviceRequest, reader authentication, selection — against the built-in test context
// (TestVectors/context, with its reader trust anchors; an empty context if it cannot be loaded).
// The first line of the input is the origin, the rest the raw request. Properties: parse either
// succeeds or throws AnnexCError; accept (the best match per DocRequest) and respond(to: parse(…))
// (every match, the consent model) agree — both refuse with the same error, or both answer with
// responses of the same length (their ECDSA signatures differ; the unit tests compare the contents);
// and so does respond with the consent model's own summary as the consented request (substitutes
// included), which must never be refused as a consent mismatch.
import AnnexC
import FoundationEssentials
import MdocCBOR

let engine: AnnexCEngine = {
    let clock = MdocDate.parseDateTime("2026-09-01T00:00:00Z")!
    let ctx = (try? CredentialContext.load(from: URL(fileURLWithPath: "TestVectors/context"), requirePrivateFiles: false)) ?? nil
    return AnnexCEngine(context: ctx ?? (try! CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:]))),
                        configuration: .init(clock: { clock }))
}()

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
    let consented = parsed.flatMap { p in Result { () throws(AnnexCError) in try engine.respond(to: p, consented: p.consentSummary()) } }
    for other in [reference, consented] {
        switch (direct, other) {
        case (.success(let a), .success(let b)): precondition(a.count == b.count, "accept and respond(to: parse) answered differently")
        case (.failure(let a), .failure(let b)): precondition(a == b, "accept and respond(to: parse) refused differently")
        default: preconditionFailure("accept and respond(to: parse) disagree")
        }
    }
    return 0
}
