// What the two request-path fuzz targets (FuzzRequest for Annex C, FuzzOpenID4VP) share: the built-in
// test context, the input's split into origin and raw request, and the differential property that
// accept, respond(to: parse(…)) and respond with the consent model's own summary agree.
@_spi(Testing) import DigitalCredentials
import FoundationEssentials
import HPKE
import MdocCBOR

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

/// An engine over the built-in context at the fixed clock, answering `protocols`, sealing with fixed
/// ephemeral keys (Annex C's `hpke`, OpenID4VP's from `jweP256Scalar`).
public func fuzzEngine(
    protocols: Set<PresentationProtocol>, prover: (any ZeroKnowledgeProver)? = nil,
    hpke: HPKE.PrivateKey = try! HPKE.PrivateKey.derive(kem: .p256HKDFSHA256, ikm: [UInt8](repeating: 7, count: 32)),
    jweP256Scalar: [UInt8] = [UInt8](repeating: 0, count: 31) + [7]
) -> DigitalCredentialsEngine {
    var configuration = DigitalCredentialsEngine.Configuration(protocols: protocols)
    configuration.clock = { fuzzClock }
    // No proofs while fuzzing (a proof takes seconds and up to 0.8 GB): a zkRequest is decided and,
    // when it requires a proof, refused; the zkRequest reader is what the request targets exercise.
    configuration.zeroKnowledge = ZeroKnowledgeSettings(prover: prover)
    try! configuration.useEphemeralKeys(hpke: hpke, jweP256Scalar: jweP256Scalar)
    return DigitalCredentialsEngine(context: builtInContext(), configuration: configuration)
}

/// Runs one input through an engine's three paths and checks they agree: all refuse with the same
/// code, or all answer with the same `normalized` bytes (device signatures blanked by the caller). The
/// first line of the input is the origin, the rest the raw request.
public func checkAgreement(
    _ start: UnsafeRawPointer, _ count: Int,
    parse: (Data, String) throws(PresentmentError) -> DigitalCredentialsRequest,
    explain: (Data, String) -> Void,
    accept: (Data, String) throws(PresentmentError) -> Data,
    respond: (DigitalCredentialsRequest, ConsentedRequest?) throws(PresentmentError) -> Data,
    normalized: (Data, DigitalCredentialsRequest) -> [UInt8],
    respondApproving: (DigitalCredentialsRequest, Approval) throws(PresentmentError) -> Data,
    presented: (Data, DigitalCredentialsRequest) -> [String],
    documentKey: (DigitalCredentialsRequest, Int) -> String
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
    guard case .success(let p) = parsed else { return }
    checkCoverage(p, respondApproving: respondApproving, presented: presented, documentKey: documentKey)
}

/// The approval rules on a parsed request (the document-level consent of the third privacy review):
/// approving nothing answers nothing; a per-document approval that leaves a document out never
/// presents it; document-level consent alone presents only documents that may go out without
/// elements, and releases none.
func checkCoverage(
    _ p: DigitalCredentialsRequest,
    respondApproving: (DigitalCredentialsRequest, Approval) throws(PresentmentError) -> Data,
    presented: (Data, DigitalCredentialsRequest) -> [String], documentKey: (DigitalCredentialsRequest, Int) -> String
) {
    for nothing in [Approval.elements([]), .perDocument([:])] {
        precondition((try? respondApproving(p, nothing)) == nil, "approving nothing answered")
    }
    var everything = [Int: Set<ElementID>]()
    for d in p.documents { everything[d.index] = Set(d.candidates.first?.shownElements ?? []) }
    for d in p.documents.prefix(4) {
        var without = everything
        without[d.index] = nil
        guard let answer = try? respondApproving(p, .perDocument(without)) else { continue }
        let key = documentKey(p, d.index)
        // Another approved document of the same key (a repeated docType) may be presented.
        let sharedKey = p.documents.contains { $0.index != d.index && documentKey(p, $0.index) == key }
        precondition(sharedKey || !presented(answer, p).contains(key), "a document left out of the approval went out")
    }
    var bare = [Int: Set<ElementID>]()
    for d in p.documents { bare[d.index] = [] }
    if let answer = try? respondApproving(p, .perDocument(bare)) {
        let allowed = Set(p.documents.filter(\.presentableWithoutElements).map { documentKey(p, $0.index) })
        precondition(
            presented(answer, p).allSatisfy(allowed.contains), "document-level consent presented a query with claims")
    }
}

/// `enc` and `cipherText` of the EncryptedResponse in an answer (raw CBOR, `{"response"}` or the
/// `{"protocol", "data"}` envelope).
public func encryptedResponse(_ response: Data) -> (enc: [UInt8], cipherText: [UInt8]) {
    var cbor = Array(response)
    if cbor.first == UInt8(ascii: "{") {
        struct Framed: Decodable {
            struct Data: Decodable { let response: String }
            let response: String?
            let data: Data?
        }
        let framed = try! JSONDecoder().decode(Framed.self, from: response)
        let text = (framed.response ?? framed.data!.response).map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 }
        cbor = Array(Data(base64Encoded: String(text) + String(repeating: "=", count: (4 - text.count % 4) % 4))!)
    }
    let root = try! CBORDocument(decoding: cbor).root
    return (root[1]!["enc"]!.byteStringValue!, root[1]!["cipherText"]!.byteStringValue!)
}
