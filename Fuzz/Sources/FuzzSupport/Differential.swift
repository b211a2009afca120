// What the two request-path fuzz targets (FuzzRequest for Annex C, FuzzOpenID4VP) share: the built-in
// test context, the input's split into origin and raw request, and the differential property that
// accept, respond(to: parse(…)) and respond with the consent model's own summary agree.
import FoundationEssentials
import MdocCBOR
import Presentment

/// The fixed clock both targets answer at.
public let fuzzClock = MdocDate.parseDateTime("2026-09-01T00:00:00Z")!

/// The built-in test context (TestVectors/context, with its reader trust anchors), or an empty context
/// when it cannot be loaded.
public func builtInContext() -> CredentialContext {
    let loaded =
        (try? CredentialContext.load(from: URL(fileURLWithPath: "TestVectors/context"), requirePrivateFiles: false))
        ?? nil
    return loaded ?? (try! CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:])))
}

/// Runs one input through an engine's three paths and checks they agree: all refuse with the same
/// code, or all answer with the same `normalized` bytes (device signatures blanked by the caller). The
/// first line of the input is the origin, the rest the raw request.
public func checkAgreement(
    _ start: UnsafeRawPointer, _ count: Int,
    parse: (Data, String) throws(PresentmentError) -> PresentmentRequest,
    explain: (Data, String) -> Void,
    accept: (Data, String) throws(PresentmentError) -> Data,
    respond: (PresentmentRequest, ConsentedRequest?) throws(PresentmentError) -> Data,
    normalized: (Data, PresentmentRequest) -> [UInt8]
) {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let newline = bytes.firstIndex(of: 0x0a) ?? bytes.count
    let origin = String(decoding: bytes[0..<newline], as: UTF8.self)
    let raw = Data(newline < bytes.count ? Array(bytes[(newline + 1)...]) : [])
    let parsed = Result { () throws(PresentmentError) in try parse(raw, origin) }
    explain(raw, origin)
    let direct = Result { () throws(PresentmentError) in try accept(raw, origin) }
    let reference = parsed.flatMap { p in Result { () throws(PresentmentError) in try respond(p, nil) } }
    let consented = parsed.flatMap { p in
        Result { () throws(PresentmentError) in try respond(p, p.consentSummary()) }
    }
    for other in [reference, consented] {
        switch (direct, other) {
        case (.success(let a), .success(let b)):
            guard case .success(let p) = parsed else { preconditionFailure("an answer without a parse") }
            precondition(
                normalized(a, p) == normalized(b, p), "accept and respond(to: parse) released different answers")
        case (.failure(let a), .failure(let b)):
            precondition(a.code == b.code, "accept and respond(to: parse) refused differently")
        default: preconditionFailure("accept and respond(to: parse) disagree")
        }
    }
}
