#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import CryptoCore
import DCAPIFraming
@_spi(FrontEnd) import Presentment
import WebEncoding

/// The engine a wallet backend answers Digital Credentials API requests with, in every protocol it
/// speaks for mdocs (ISO/IEC 18013-7 Annex C, OpenID4VP 1.0): it takes whatever the platform hands
/// over and the requesting origin, reads the request's framing once, and answers the entry of the
/// protocol the configured rule picks, from one credential context, with one planner and one
/// reader-trust policy. The consent model says which protocol was used and why
/// (`PresentmentRequest.protocolIdentifier`, `protocolChoice`). Immutable and safe to share between
/// threads: one instance serves concurrent calls.
///
/// Which entry answers, one written rule for `accept` and `parse`: the entries of the enabled
/// protocols are considered in the preference's order (the preferred protocol first, then registration
/// order: Annex C before OpenID4VP), the first
/// entry of each protocol. An entry is answered unless it is refused for a selection reason (no usable
/// credential, or not satisfiable as a whole: `noMatchingCredential`, `cannotSatisfyRequest`); then,
/// under `.answerable` only, the next is considered. Any other refusal (a signature, trust, origin,
/// parameter or policy refusal) is final, whichever entry it came from.
public final class DigitalCredentialsEngine: Sendable {
    /// This release's version (the repository's `VERSION`; the CLI's `--version`, the C ABI's
    /// `mdoc_version()` and Python's `mdoc_respond.__version__` say the same, and a test holds them equal).
    public static let version = "0.20.0"

    /// The configuration, fixed at construction.
    public let configuration: Configuration
    /// The one engine every front end answers through.
    private let core: PresentmentEngine
    /// Every registered front end, in registration order.
    private let frontEnds: [RegisteredFrontEnd]
    /// The enabled front ends, in the order the preference considers them.
    private let order: [RegisteredFrontEnd]

    /// Creates an engine over a context snapshot held in memory (the host owns it: a new snapshot needs
    /// a new engine). Its reader-trust policy is the configuration's `readerTrust`, else the one stored
    /// in the context.
    public convenience init(context: CredentialContext, configuration: Configuration = Configuration()) {
        self.init(source: ContextSource(context), configuration: configuration)
    }

    /// Creates an engine over a context directory (`CredentialContext.load`'s layout): every call reads
    /// the store as it is now (a credential cancelled, removed or reinstated by any process is seen by
    /// the next call, and a request parsed before a cancel is refused at `respond`), at the cost of one
    /// `lstat` per call and a reload when the snapshot was replaced. The engine a long-lived wallet
    /// backend keeps per holder.
    /// - Parameters:
    ///   - contextDirectory: the context's directory.
    ///   - keyResolver: as for `CredentialContext.load` (default: key files in the directory).
    ///   - configuration: fixed at construction; its reader-trust policy, when set, replaces the stored one.
    /// - Throws: `context.noContext` when the directory holds no snapshot; the load's rules otherwise.
    public convenience init(
        contextDirectory: URL, keyResolver: (any DeviceKeyResolver)? = nil,
        configuration: Configuration = Configuration()
    ) throws(PresentmentError) {
        let source = try ContextSource(
            directory: contextDirectory,
            keyResolver: keyResolver ?? FileKeyResolver(directory: contextDirectory, requirePrivateFiles: true))
        self.init(source: source, configuration: configuration)
    }

    /// An engine over a context source (the C ABI's directory and snapshot engines).
    package init(source: ContextSource, configuration: Configuration) {
        self.configuration = configuration
        core = PresentmentEngine(source: source, configuration: configuration.shared)
        frontEnds = FrontEndRegistry.builtIn(configuration).frontEnds
        let enabled = frontEnds.filter { configuration.protocols.contains($0.presentationProtocol) }
        // The preferred protocol's front end first, the others in registration order.
        let preferred = configuration.preference.preferred
        order =
            enabled.filter { $0.presentationProtocol == preferred }
            + enabled.filter {
                $0.presentationProtocol != preferred
            }
    }

    /// The credential context as the engine sees it now (a directory engine re-reads a replaced snapshot).
    /// - Throws: as `init(contextDirectory:)` when the directory's snapshot is gone or no longer loads.
    public func currentContext() throws(PresentmentError) -> CredentialContext { try core.source.current() }

    /// The snapshot the engine was opened over (a directory engine: as first loaded).
    public var context: CredentialContext { core.source.initial }

    /// The reader-trust policy in force over `context` (the configuration's, else the context's).
    /// While the configuration's narrowing would widen the store's policy (every call is then refused),
    /// a policy that trusts no one and requires reader authentication.
    public var readerTrust: ReaderTrustPolicy {
        (try? core.readerTrust(context)) ?? ReaderTrustPolicy(requireReaderAuthentication: true)
    }

    // MARK: One call

    /// Answers a raw request in one call, releasing everything requested and held by the best
    /// candidate of each document (as `respond(to: parse(…))` approving everything shown).
    /// - Parameters:
    ///   - rawRequest: the request as the platform handed it over, in any framing (at most
    ///     `limits.maxRequestBytes`).
    ///   - origin: the requesting origin as the platform reports it (serialized as a browser does).
    ///   - credentialID: answer with this credential only (a one-credential provider).
    ///   - format: how to frame the response (default: what the request's framing implies).
    /// - Returns: the bytes the platform expects.
    /// - Throws: `PresentmentError` with the refusal's code and rule; no bytes are produced on any
    ///   refusal.
    public func accept(
        rawRequest: Data, origin: String, credentialID: String? = nil, format: ResponseFormat = .automatic
    ) throws(PresentmentError) -> Data {
        let stages = configuration.observer == nil ? nil : StageClock()
        do throws(PresentmentError) {
            let (out, answered) = try ForkGuard.around { () throws(PresentmentError) in
                try answer(rawRequest, origin: origin, credentialID: credentialID, format: format, stages: stages)
            }
            if let stages {
                configuration.observer?.observe(
                    EngineEvent(
                        operation: .accept, presentationProtocol: answered, code: nil, rule: nil, readerStatus: nil,
                        clock: stages))
            }
            return out
        } catch {
            let disclosed = configuration.errorDisclosure.disclose(error)
            observeRefusal(.accept, disclosed, stages)
            throw disclosed
        }
    }

    /// Tells the observer, if any, that a call was refused.
    private func observeRefusal(_ operation: EngineEvent.Operation, _ error: PresentmentError, _ stages: StageClock?) {
        guard let stages else { return }
        configuration.observer?.observe(
            EngineEvent(
                operation: operation, presentationProtocol: nil, code: error.code, rule: error.rule, readerStatus: nil,
                clock: stages))
    }

    /// Tells the observer, if any, that a call on `request` succeeded.
    private func observeSuccess(
        _ operation: EngineEvent.Operation, _ request: DigitalCredentialsRequest, _ stages: StageClock?
    ) {
        guard let stages else { return }
        configuration.observer?.observe(
            EngineEvent(
                operation: operation, presentationProtocol: request.details.presentationProtocol, code: nil, rule: nil,
                readerStatus: EngineEvent.ReaderStatus(request.readerVerdict), clock: stages))
    }

    /// `accept`'s rule between the entries.
    private func answer(
        _ rawRequest: Data, origin: String, credentialID: String?, format: ResponseFormat, stages: StageClock?
    ) throws(PresentmentError) -> (Data, PresentationProtocol) {
        let entries = try read(rawRequest)
        let origin = try Origin(origin, allowAppOrigins: configuration.shared.allowAppOrigins)
        stages?.mark(.read)
        var refusal: PresentmentError?
        for frontEnd in order {
            guard let entry = entries.entry(for: frontEnd) else { continue }
            do {
                return (
                    try frontEnd.accept(core, entry, origin, credentialID, format, stages),
                    frontEnd.presentationProtocol
                )
            } catch {
                guard Self.isSelectionRefusal(error) else { throw error }
                if refusal == nil { refusal = error }
                if configuration.preference != .answerable { throw error }
            }
        }
        throw refusal ?? PresentmentError(FramingRule.noEntry)
    }

    // MARK: Two phases

    /// Parses and validates a request for a consent screen, by the rule of `accept`: everything the
    /// reader controls is checked before any consent is asked. An entry that cannot be answered from
    /// what is stored gives way to the next (under `.answerable`); when none can, the preferred entry's
    /// consent model is returned with nothing releasable (never a refusal at `parse` for that: the
    /// holder sees the request, and the page gets the refusal it gets when the holder declines).
    /// `protocolChoice` says which entry and why.
    public func parse(rawRequest: Data, origin: String) throws(PresentmentError) -> DigitalCredentialsRequest {
        var none: Explanation?
        let stages = configuration.observer == nil ? nil : StageClock()
        do {
            let request = try ForkGuard.around { () throws(PresentmentError) in
                try parse(rawRequest, origin: origin, explanation: &none, stages: stages)
            }
            observeSuccess(.parse, request, stages)
            return request
        } catch {
            let disclosed = configuration.errorDisclosure.disclose(error)
            observeRefusal(.parse, disclosed, stages)
            throw disclosed
        }
    }

    /// Answers a parsed request with the holder's approval, through the front end that parsed it.
    /// - Parameters:
    ///   - request: the result of `parse` (of an engine over the same context).
    ///   - using: document index → credential id; unlisted documents use their best candidate.
    ///   - approving: the holder's choice; nothing outside it is released, and a substitute only when
    ///     each of its elements is approved (see `Approval` for when a document is presented).
    ///   - consented: what the platform showed; a request asking for more, or an answer that would
    ///     release more, is refused (`consentMismatch`).
    ///   - plainFallback: documents whose proof request (`zeroKnowledge.answer` `.plainFallback`) the
    ///     holder agreed to answer with a plain, linkable presentation instead; any other such document
    ///     with something to release is refused (`zk.fallbackNotApproved`). A proof is never replaced by
    ///     a plain presentation otherwise.
    ///   - format: how to frame the response (default: what the request's framing implies).
    /// - Throws: the planning, proving, signing and sealing refusals; may be called again (each call
    ///   signs, proves and seals afresh).
    public func respond(
        to request: DigitalCredentialsRequest, using: [Int: String] = [:], approving: Approval = .allRequested,
        consented: ConsentedRequest? = nil, plainFallback: Set<Int> = [], format: ResponseFormat = .automatic
    ) throws(PresentmentError) -> Data {
        let stages = configuration.observer == nil ? nil : StageClock()
        do throws(PresentmentError) {
            let out = try ForkGuard.around { () throws(PresentmentError) in
                for frontEnd in frontEnds {
                    if let out = try frontEnd.respond(
                        core, request, using, approving, consented, plainFallback, format, stages)
                    {
                        return out
                    }
                }
                throw PresentmentError(FramingRule.noEntry)  // no registered front end holds these details
            }
            observeSuccess(.respond, request, stages)
            return out
        } catch {
            let disclosed = configuration.errorDisclosure.disclose(error)
            observeRefusal(.respond, disclosed, stages)
            throw disclosed
        }
    }

    /// Explains what the engine does with a request (framing, origin, the protocol's structures and
    /// signature checks, the consent model and selection) without answering it. Never throws: a
    /// refusal is recorded in `error`, with everything checked before it.
    public func explain(rawRequest: Data, origin: String) -> Explanation {
        var explanation: Explanation? = Explanation()
        ForkGuard.around { () -> Void in
            do throws(PresentmentError) {
                let request = try parse(rawRequest, origin: origin, explanation: &explanation)
                explanation!.request = request
                explanation!.respondWouldRefuse = core.planningRefusal(request).map(
                    configuration.errorDisclosure.disclose)
            } catch {
                explanation!.error = error
            }
        }
        return explanation!
    }

    // MARK: The rule

    /// A refusal for a selection reason: the entry cannot be answered from what is stored (no usable
    /// credential, not satisfiable as a whole). Only these let the next entry be tried.
    package static func isSelectionRefusal(_ e: PresentmentError) -> Bool {
        e.code == .noMatchingCredential || e.code == .cannotSatisfyRequest
    }

    /// The envelope read once, and which entry each enabled protocol considers: its first entry, or
    /// a bare `data` object when it is the first registered front end that recognises it.
    private struct Entries {
        let envelope: RequestEnvelope
        /// For a bare `data` object, the protocol it belongs to.
        let bareOwner: PresentationProtocol?

        /// The entry `frontEnd` answers, if any.
        func entry(for frontEnd: RegisteredFrontEnd) -> RequestEntry? {
            if envelope.framing == .dataObject {
                return bareOwner == frontEnd.presentationProtocol ? envelope.entries[0] : nil
            }
            return envelope.entries.first(where: frontEnd.answers)
        }
    }

    /// The engine's time when the consent model must show it: a clock fixed for testing, or one further
    /// than `clockTolerance` from the system's.
    private func fixedClock() -> Date? {
        let now = configuration.shared.clock()
        let tolerance = DigitalCredentialsRequest.clockTolerance
        guard configuration.shared.clockFixedForTesting || abs(now.timeIntervalSinceNow) > tolerance else {
            return nil
        }
        return now
    }

    /// Reads the envelope (the protocols' entries are then taken in `order`, with no list of them made).
    private func read(_ raw: Data) throws(PresentmentError) -> Entries {
        let limits = configuration.shared.limits
        let frontEnds = self.frontEnds
        // The owner of a bare data object, found when the envelope asks (it asks once, of the top-level
        // object, and frames it `.dataObject` exactly when one front end recognises it).
        var owner: PresentationProtocol?
        // Read straight from the caller's buffer (no copy of the request; its size read there too:
        // each look into a `Data`'s storage is a dynamically checked access).
        let found: Result<RequestEnvelope, PresentmentError> = raw.withUnsafeBytes { bytes in
            Result { () throws(PresentmentError) in
                guard bytes.count <= limits.maxRequestBytes else { throw PresentmentError(FramingRule.tooLarge) }
                return try RequestEnvelope.parse(
                    bytes.assumingMemoryBound(to: UInt8.self), maxBytes: limits.maxRequestBytes,
                    isBareData: { json in
                        owner = frontEnds.first { $0.isBareData(json) }?.presentationProtocol
                        return owner != nil
                    })
            }
        }
        return Entries(envelope: try found.get(), bareOwner: owner)
    }

    /// `parse` by the rule, recording into `explanation` when one is given.
    private func parse(
        _ raw: Data, origin originText: String, explanation: inout Explanation?, stages: StageClock? = nil
    ) throws(PresentmentError) -> DigitalCredentialsRequest {
        let entries = try read(raw)
        explanation?.framing = entries.envelope.framing
        let origin = try Origin(originText, allowAppOrigins: configuration.shared.allowAppOrigins)
        explanation?.origin = origin.serialized
        stages?.mark(.read)
        // No entry for any enabled protocol ends below, with `FramingRule.noEntry`.
        var considered = [String]()
        var passedOverProofs = [String]()
        var unanswerable: (request: DigitalCredentialsRequest, trace: CheckTrace?)?
        for frontEnd in order {
            guard let entry = entries.entry(for: frontEnd) else { continue }
            var trace: CheckTrace? = explanation == nil ? nil : CheckTrace()
            var request: DigitalCredentialsRequest
            do { request = try frontEnd.parse(core, entry, origin, &trace, stages) } catch {
                explanation?.trace = trace ?? CheckTrace()
                throw error
            }
            considered.append(request.protocolIdentifier)
            // `accept`'s rule: only a selection refusal passes the entry over. An entry `accept` would
            // refuse finally (a proof that cannot be made, a plain fallback not approved) stays chosen:
            // its consent model shows the proof asked and why it cannot be made.
            if configuration.preference == .answerable, case .notAnswerable = core.answerability(request) {
                if unanswerable == nil { unanswerable = (request, trace) }
                if request.documents.contains(where: { $0.zeroKnowledge != nil }) {
                    passedOverProofs.append(request.protocolIdentifier)
                }
                continue
            }
            request.protocolChoice = ProtocolChoice(
                considered: considered, reason: unanswerable == nil ? .preferred : .preferredNotAnswerable,
                passedOverProofRequests: passedOverProofs)
            request.fixedClock = fixedClock()
            explanation?.trace = trace ?? CheckTrace()
            return request
        }
        guard var shown = unanswerable else { throw PresentmentError(FramingRule.noEntry) }
        shown.request.protocolChoice = ProtocolChoice(
            considered: considered, reason: .noneAnswerable, passedOverProofRequests: passedOverProofs)
        shown.request.fixedClock = fixedClock()
        explanation?.trace = shown.trace ?? CheckTrace()
        return shown.request
    }
}
