#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import HPKE
import MdocCBOR
@_exported import Presentment
@_exported import DCAPIFraming
@_exported import WebEncoding

/// The errors of the Annex C engine: the presentment error type, one closed code set for every
/// protocol.
public typealias AnnexCError = PresentmentError

/// The Annex C response engine (ISO/IEC 18013-7 Annex C, `org-iso-mdoc`). Immutable after
/// construction and safe to share between threads: one instance serves concurrent `accept` /
/// `parse` / `respond` calls.
public final class AnnexCEngine: Sendable {
    /// The protocol identifier of the Digital Credentials API registry this engine answers.
    public static let protocolIdentifier = "org-iso-mdoc"

    /// The credential context snapshot it answers from.
    public let context: CredentialContext
    /// Clock, accepted origins and protocol aliases, missing-element policy and input bounds, fixed at
    /// construction.
    public let configuration: Configuration

    /// Creates an engine over a context snapshot.
    public init(context: CredentialContext, configuration: Configuration = Configuration()) {
        self.context = context
        self.configuration = configuration
    }

    // MARK: One call

    /// Parses, selects, builds, signs and seals in one call, releasing everything the consent model
    /// would show for the best matching credential (as `respond(to: parse(…))` with `.allRequested`).
    /// - Parameters:
    ///   - rawRequest: the request JSON in any supported framing (at most `maxRequestBytes`).
    ///   - origin: the requesting origin as the platform hands it over (string form; normalized).
    ///   - credentialID: answer with this credential only (for a one-credential provider).
    ///   - format: how to frame the sealed response.
    /// - Returns: the bytes the platform expects (see `ResponseFormat`).
    /// - Throws: `AnnexCError` with the refusal's code; no bytes are produced on any refusal.
    public func accept(
        rawRequest: Data, origin: String, credentialID: String? = nil, format: ResponseFormat = .automatic
    ) throws(PresentmentError) -> Data {
        // The same checks as `parse`, then the plan straight from the DeviceRequest: no consent-screen
        // model (per-element lists, every candidate ranked) is built for a call that shows none.
        // Tests hold this path to `respond(to: parse(…))` response for response.
        var explanation = Explanation()
        let checked = try check(rawRequest: rawRequest, origin: origin, explanation: &explanation, record: false)
        if let credentialID {
            guard context.credential(id: credentialID) != nil else {
                throw PresentmentError(SelectionRule.unknownCredentialID)
            }
        }
        let plan = try Planner.bestPlan(
            checked.queries, documentSets: DocumentSetRule.of(checked.deviceRequest), context: context,
            now: checked.now,
            credentialID: credentialID)
        return try finish(
            plan, transcript: checked.transcript, encryptionInfo: checked.encryptionInfo, framing: checked.framing,
            format: format)
    }

    /// `accept(rawRequest:origin:credentialID:format:)` with an origin already parsed.
    public func accept(
        rawRequest: Data, origin: Origin, credentialID: String? = nil, format: ResponseFormat = .automatic
    ) throws(PresentmentError) -> Data {
        try accept(rawRequest: rawRequest, origin: origin.serialized, credentialID: credentialID, format: format)
    }

    // MARK: Two phases

    /// Parses and validates a request and reports what a consent UI must show. Everything a reader
    /// controls is checked here, before any consent is asked: framing, origin, EncryptionInfo and its
    /// key, DeviceRequest, reader authentication and the holder's trust policy.
    /// - Throws: `AnnexCError` with the refusal's code.
    public func parse(rawRequest: Data, origin: String) throws(PresentmentError) -> PresentmentRequest {
        var explanation = Explanation()
        return try parse(rawRequest: rawRequest, origin: origin, explanation: &explanation, describeSelection: false)
    }

    /// `parse(rawRequest:origin:)` with an origin already parsed.
    public func parse(rawRequest: Data, origin: Origin) throws(PresentmentError) -> PresentmentRequest {
        try parse(rawRequest: rawRequest, origin: origin.serialized)
    }

    /// Everything `parse` checks before selection: framing, origin, EncryptionInfo, transcript,
    /// DeviceRequest and limits, reader authentication and the trust policy.
    struct CheckedRequest {
        let origin: Origin
        let framing: RequestFraming
        /// The protocol identifier the request came under (`org-iso-mdoc`, or the legacy alias).
        let protocolIdentifier: String
        let transcript: SessionTranscript
        let encryptionInfo: EncryptionInfo
        let deviceRequest: DeviceRequest
        /// Each DocRequest prepared for matching (admissible alternative sets).
        let queries: [DocumentQuery]
        let auth: ReaderAuthenticator.Result
        let now: Date
    }

    /// Runs the checks; `record` fills `explanation` (the consent and `explain` paths), otherwise
    /// only a refusal by the reader checks is recorded.
    func check(rawRequest: Data, origin originText: String, explanation: inout Explanation, record: Bool)
        throws(PresentmentError) -> CheckedRequest
    {
        guard rawRequest.count <= configuration.maxRequestBytes else {
            throw PresentmentError(FramingRule.tooLarge)
        }
        // Framing read straight from the caller's buffer (no copy of the request).
        let found: Result<Envelope, PresentmentError> = rawRequest.withUnsafeBytes { raw in
            Result { () throws(PresentmentError) in
                try Envelope.parse(
                    raw.assumingMemoryBound(to: UInt8.self), acceptLegacyAlias: configuration.acceptLegacyProtocolAlias,
                    maxBytes: configuration.maxRequestBytes)
            }
        }
        let envelope = try found.get()
        if record { explanation.framing = envelope.framing }
        let origin = try Origin(originText, allowAppOrigins: configuration.allowAppOrigins)
        if record { explanation.origin = origin.serialized }
        let encryptionInfo = try EncryptionInfo(base64url: envelope.encryptionInfo)
        let transcript = SessionTranscript(encryptionInfo: envelope.encryptionInfo, origin: origin)
        if record {
            explanation.dcapiInfo = transcript.dcapiInfo
            explanation.sessionTranscript = transcript.bytes
        }

        guard let drBytes = Base64URL.decode(envelope.deviceRequest) else {
            throw PresentmentError(AnnexCRule.deviceRequestNotBase64URL)
        }
        if record { explanation.deviceRequest = drBytes }
        let options = CBORDecodingOptions(
            maxDepth: configuration.maxNestingDepth, maxItems: configuration.maxDataItems,
            maxInputSize: configuration.maxRequestBytes)
        let request: DeviceRequest
        do { request = try DeviceRequest(encoded: drBytes, options: options) } catch {
            if error.code == .cbor, let c = error.cbor,
                [.itemLimitExceeded, .depthLimitExceeded, .inputTooLarge].contains(c.code)
            {
                throw PresentmentError(AnnexCRule.deviceRequestOverLimits, underlying: c)
            }
            throw PresentmentError(AnnexCRule.deviceRequestInvalid, underlying: error)
        }
        guard request.docRequests.count <= configuration.maxDocRequests else {
            throw PresentmentError(AnnexCRule.tooManyDocRequests)
        }
        guard Self.elementReferences(request) <= configuration.maxRequestedElements else {
            throw PresentmentError(AnnexCRule.tooManyElements)
        }
        // A reader that requires a zero-knowledge proof must never get a plain, linkable presentation.
        if request.docRequests.contains(where: { $0.itemsRequest.requestInfo?.zkRequest?.required == true }) {
            throw PresentmentError(AnnexCRule.zkRequired)
        }
        let now = configuration.clock()
        let auth: ReaderAuthenticator.Result
        do {
            auth = try ReaderAuthenticator(policy: context.readerTrust, now: now).authenticate(
                request: request, transcript: transcript, record: record,
                checks: &explanation.readerChecks)
        } catch {
            explanation.error = error
            throw error
        }
        if record {
            explanation.readerVerdict = auth.verdict
            explanation.documentVerdicts = request.docRequests.indices.map(auth.verdict(forDocument:))
            explanation.readers = auth.readers
        }
        return CheckedRequest(
            origin: origin, framing: envelope.framing,
            protocolIdentifier: envelope.protocolIdentifier ?? Self.protocolIdentifier,
            transcript: transcript, encryptionInfo: encryptionInfo,
            deviceRequest: request,
            queries: DocumentQuery.prepare(request, maxSetSize: configuration.maxAlternativeSetSize),
            auth: auth, now: now)
    }

    /// Every element a DeviceRequest names: requested elements, and each `alternativeDataElements`
    /// entry's requested element and alternatives (counted in any version: they were parsed).
    static func elementReferences(_ request: DeviceRequest) -> Int {
        var n = 0
        for d in request.docRequests {
            n += d.itemsRequest.elementCount
            for a in d.itemsRequest.requestInfo?.alternativeDataElements ?? [] {
                n += 1
                for s in a.alternativeElementSets { n += s.count }
            }
        }
        return n
    }

    func parse(rawRequest: Data, origin originText: String, explanation: inout Explanation, describeSelection: Bool)
        throws(PresentmentError) -> PresentmentRequest
    {
        let checked = try check(rawRequest: rawRequest, origin: originText, explanation: &explanation, record: true)
        let documents = checked.queries.map { q in
            RequestedDocument(
                q, candidates: Planner.candidates(q, context: context, now: checked.now),
                readerVerdict: checked.auth.verdict(forDocument: q.index),
                readerAuthentication: checked.auth.coverage.isEmpty ? [] : checked.auth.coverage[q.index])
        }
        if describeSelection {
            explanation.documents = documents
            for d in documents { explanation.selection.append(Self.describe(d)) }
        }
        let state = AnnexCRequestState(
            framing: checked.framing, transcript: checked.transcript, encryptionInfo: checked.encryptionInfo,
            deviceRequest: checked.deviceRequest, explanation: explanation)
        return PresentmentRequest(
            origin: checked.origin, protocolIdentifier: checked.protocolIdentifier, readerVerdict: checked.auth.verdict,
            readers: checked.auth.readers, documents: documents, sessionTranscriptBytes: checked.transcript.bytes,
            documentSets: DocumentSetRule.of(checked.deviceRequest), frontEnd: state)
    }

    /// Builds, signs and seals the answer to a parsed request.
    /// - Parameters:
    ///   - request: the result of this engine's `parse`.
    ///   - using: document index → credential id; unlisted documents use their best candidate.
    ///   - approving: the user's choice; nothing outside it is released, and a substitute only when
    ///     each of its elements is approved.
    ///   - consented: what the platform showed the user; a request asking for more, or an answer that
    ///     would release more (a substitute included), is refused with `consentMismatch`.
    ///   - format: how to frame the sealed response.
    /// - Throws: `unsupportedProtocol` for a request another front end parsed; the planning, signing
    ///   and sealing refusals otherwise.
    public func respond(
        to request: PresentmentRequest, using: [Int: String] = [:], approving: Approval = .allRequested,
        consented: ConsentedRequest? = nil, format: ResponseFormat = .automatic
    ) throws(PresentmentError) -> Data {
        guard let state = request.annexC else {
            throw PresentmentError(FramingRule.noEntry)
        }
        let plan = try Planner.plan(request, context: context, using: using, approving: approving, consented: consented)
        return try finish(
            plan, transcript: state.transcript, encryptionInfo: state.encryptionInfo, framing: state.framing,
            format: format)
    }

    /// Builds the DeviceResponse for a plan, enforces maximumResponseSize, self-checks if configured, seals.
    private func finish(
        _ plan: Plan, transcript: SessionTranscript, encryptionInfo: EncryptionInfo, framing: RequestFraming,
        format: ResponseFormat
    ) throws(PresentmentError) -> Data {
        let response = try DeviceResponseBuilder.build(
            plan: plan, sessionTranscript: transcript.bytes, missingElements: configuration.missingElements)
        for d in plan.answered {
            if let max = d.maximumResponseSize, UInt64(response.count) > max {
                throw PresentmentError(ResponseRule.tooLarge)
            }
        }
        if configuration.selfCheck {
            try DeviceResponseBuilder.selfCheck(response, plan: plan, sessionTranscript: transcript.bytes)
        }
        return try seal(
            response, encryptionInfo: encryptionInfo, transcript: transcript, framing: framing, format: format)
    }

    /// One line of `explain`'s selection record for a requested document: what each candidate would
    /// release (substitutes named with what they replace), what it lacks, and alternatives not honoured.
    static func describe(_ d: RequestedDocument) -> String {
        var line = "docRequests[\(d.index)] \(d.docType): \(d.elements.count) elements requested; "
        line +=
            d.candidates.isEmpty
            ? "no usable credential"
            : d.candidates.map { c in
                "\(c.credentialID) can release \(c.shownElements.count)"
                    + (c.releasable.isEmpty ? "" : " [\(c.releasable.map(\.identifier).joined(separator: ", "))]")
                    + c.substitutions.map {
                        ", replaces \($0.requested.identifier) with [\($0.replacement.map(\.identifier).joined(separator: ", "))]"
                    }.joined()
                    + (c.missing.isEmpty ? "" : ", lacks [\(c.missing.map(\.identifier).joined(separator: ", "))]")
            }.joined(separator: "; ")
        for i in d.ignoredAlternatives {
            line +=
                "; alternative for \(i.requested.identifier) not honoured (\(i.reason.rawValue)): [\(i.set.map(\.description).joined(separator: ", "))]"
        }
        return line
    }

    /// Explains what the engine does with a request (framing, origin, transcript, reader checks,
    /// selection), without building a response. Never throws: a refusal is recorded in `error`.
    public func explain(rawRequest: Data, origin: String) -> Explanation {
        var e = Explanation()
        do { _ = try parse(rawRequest: rawRequest, origin: origin, explanation: &e, describeSelection: true) } catch {
            e.error = error
        }
        return e
    }
}

/// What `AnnexCEngine` keeps in a `PresentmentRequest` to answer it.
struct AnnexCRequestState: Sendable {
    let framing: RequestFraming
    let transcript: SessionTranscript
    let encryptionInfo: EncryptionInfo
    let deviceRequest: DeviceRequest
    let explanation: Explanation
}

extension PresentmentRequest {
    /// The Annex C front end's state, when `AnnexCEngine.parse` produced this request.
    var annexC: AnnexCRequestState? { frontEnd as? AnnexCRequestState }

    /// The framing an Annex C request came in (nil for another protocol's request).
    public var framing: RequestFraming? { annexC?.framing }
    /// The Annex C SessionTranscript (nil for another protocol's request).
    public var sessionTranscript: SessionTranscript? { annexC?.transcript }
    /// The reader's encryption parameters (nil for another protocol's request).
    public var encryptionInfo: EncryptionInfo? { annexC?.encryptionInfo }
    /// The DeviceRequest (nil for another protocol's request).
    public var deviceRequest: DeviceRequest? { annexC?.deviceRequest }
    /// What the engine checked, for debugging (nil for another protocol's request).
    public var explanation: Explanation? { annexC?.explanation }
}
