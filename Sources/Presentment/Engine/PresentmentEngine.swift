#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore

/// The one engine: accept, parse and respond for every protocol, each protocol's wire format left to
/// its front end (`PresentmentFrontEnd`). It owns what every protocol shares: the credential checks,
/// the one planner call, building and signing the DeviceResponse, the reader's size limit, the
/// self-check, approvals and consent. Immutable and safe to share between threads.
///
/// The three entry points are generic over the front end and do only the front end's two steps (check
/// the entry, answer the plan) around one non-generic step of the engine's own; they are inlinable, so
/// the facade's module specializes them for each registered front end (no generic dispatch at run
/// time). An SPI (`@_spi(FrontEnd)`): a wallet backend answers through `DigitalCredentialsEngine`.
@_spi(FrontEnd) public final class PresentmentEngine: Sendable {
    /// Where the credential context comes from: read on every call, so each answers from the store as
    /// it is now.
    @usableFromInline package let source: ContextSource
    /// The shared settings.
    package let configuration: EngineConfiguration

    /// The last stored policy narrowed by `readerTrustOverStore`, with the anchors object it was made
    /// from (a reloaded snapshot brings a new one).
    private let narrowed = LockedValue<(from: TrustAnchors, policy: ReaderTrustPolicy)?>(nil)

    package init(source: ContextSource, configuration: EngineConfiguration) {
        self.source = source
        self.configuration = configuration
    }

    /// The reader-trust policy in force over `context`: the configuration's, else the context's stored
    /// one as the configuration narrows it.
    /// - Throws: `context.configurationWidensStore` while the narrowing would widen the stored policy.
    package func readerTrust(_ context: CredentialContext) throws(PresentmentError) -> ReaderTrustPolicy {
        if let fixed = configuration.readerTrust { return fixed }
        guard let narrow = configuration.readerTrustOverStore else { return context.readerTrust }
        let stored = context.readerTrust
        if let hit = narrowed.withLock({ $0?.from === stored.anchors ? $0!.policy : nil }) { return hit }
        let policy = try narrow(stored)
        narrowed.withLock { $0 = (stored.anchors, policy) }
        return policy
    }

    /// Checks, plans and answers in one call, releasing everything the consent model would show for
    /// the best candidate of each document: the same decisions as `respond(to: parse(…))` approving
    /// everything, without building the consent model.
    /// - Parameter credentialID: answer with this credential only.
    /// - Parameter stages: measures the stages when given (an observer is installed).
    @inlinable public func accept<F: PresentmentFrontEnd>(
        _ entry: F.Entry, origin: Origin, via frontEnd: F, credentialID: String?, format: ResponseFormat,
        stages: StageClock? = nil
    ) throws(PresentmentError) -> Data {
        let context = try source.current()
        let environment = try environment(consent: false, context)
        var trace: CheckTrace?
        let checked = try frontEnd.check(entry, origin: origin, in: environment, trace: &trace)
        stages?.mark(.check)
        let responses = try bestResponses(
            checked.entry, in: environment, context: context, credentialID: credentialID,
            layout: frontEnd.responseLayout, stages: stages)
        stages?.mark(.build)
        let out = try frontEnd.answer(responses, details: checked.details, format: format)
        stages?.mark(.seal)
        return out
    }

    /// Checks an entry and builds the consent model: who asks, and per requested document every
    /// candidate credential with what it would release (and the credentials the query's rules exclude).
    /// - Parameter details: how the request carries the front end's details (the facade wraps them in
    ///   its enum of every protocol's).
    @inlinable public func parse<F: PresentmentFrontEnd, D: Sendable>(
        _ entry: F.Entry, origin: Origin, via frontEnd: F, trace: inout CheckTrace?, details: (F.Details) -> D,
        stages: StageClock? = nil
    ) throws(PresentmentError) -> PresentmentRequest<D> {
        let context = try source.current()
        let environment = try environment(consent: true, context)
        let checked = try frontEnd.check(entry, origin: origin, in: environment, trace: &trace)
        stages?.mark(.check)
        let request = PresentmentRequest(
            model: try consentModel(checked.entry, origin: origin, in: environment, context: context),
            details: details(checked.details))
        stages?.mark(.plan)
        return request
    }

    /// Answers a parsed request under the holder's approval.
    /// - Parameters:
    ///   - using: document index → credential id; unlisted documents use their best candidate.
    ///   - approving: the holder's choice; nothing outside it is released, and a substitute only when
    ///     each of its elements is approved.
    ///   - consented: what the platform showed; a request asking for more, or an answer that would
    ///     release more, is refused (`consentMismatch`).
    ///   - plainFallback: documents whose proof request may be answered with a plain presentation
    ///     (`ZeroKnowledgeAnswer.plainFallback`, approved by the holder as a separate choice).
    @inlinable public func respond<F: PresentmentFrontEnd>(
        to request: PresentmentRequest<F.Details>, via frontEnd: F, using: [Int: String], approving: Approval,
        consented: ConsentedRequest?, plainFallback: Set<Int> = [], format: ResponseFormat, stages: StageClock? = nil
    ) throws(PresentmentError) -> Data {
        let responses = try plannedResponses(
            request.model, using: using, approving: approving, consented: consented, plainFallback: plainFallback,
            layout: frontEnd.responseLayout, stages: stages)
        stages?.mark(.build)
        let out = try frontEnd.answer(responses, details: request.details, format: format)
        stages?.mark(.seal)
        return out
    }

    /// What `respond` would do if the holder approved everything shown: answer, refuse for a
    /// selection reason (no credential for a required document, nothing releasable, no answerable use
    /// case or credential set), or refuse finally (a proof request that cannot be proven or whose
    /// plain fallback is not approved); plans by the planner's own decisions and signs nothing.
    package func answerability<D>(_ request: PresentmentRequest<D>) -> Planner.Answerability {
        Planner.answerability(request.model.documents, documentSets: request.model.documentSets)
    }

    /// Plans a parsed request as `respond` approving everything shown would, without building,
    /// signing or proving anything: the refusal `respond` would give, or nil when it would answer.
    package func planningRefusal<D>(_ request: PresentmentRequest<D>) -> PresentmentError? {
        do throws(PresentmentError) {
            let plan = try Planner.plan(
                request.model.documents, documentSets: request.model.documentSets, context: try source.current(),
                using: [:], approving: .allRequested, consented: nil)
            try confirmPresentable(plan, current: try source.current())
            return nil
        } catch { return error }
    }

    // MARK: The engine's own steps (not generic)

    /// The environment a front end checks with over `context`, at the clock's current reading.
    @usableFromInline func environment(consent: Bool, _ context: CredentialContext) throws(PresentmentError)
        -> CheckEnvironment
    {
        CheckEnvironment(
            limits: configuration.limits,
            trust: ReaderTrustEvaluator(policy: try readerTrust(context), now: configuration.clock()),
            consent: consent)
    }

    /// `accept`'s plan (the best candidate per document, everything it shows) as built DeviceResponses.
    @usableFromInline func bestResponses(
        _ checked: CheckedEntry, in environment: CheckEnvironment, context: CredentialContext, credentialID: String?,
        layout: ResponseLayout, stages: StageClock?
    ) throws(PresentmentError) -> [BuiltResponse] {
        if let credentialID, context.credential(id: credentialID) == nil {
            throw PresentmentError(SelectionRule.unknownCredentialID)
        }
        try context.indexCandidates(checked.queries, at: environment.now)
        let plan = try Planner.bestPlan(
            try decidingZeroKnowledge(checked.queries), documentSets: checked.documentSets, context: context,
            now: environment.now, credentialID: credentialID)
        stages?.mark(.plan)
        return try responses(plan, transcript: checked.sessionTranscript, layout: layout, current: nil)
    }

    /// The consent model of a checked entry.
    @usableFromInline func consentModel(
        _ checked: CheckedEntry, origin: Origin, in environment: CheckEnvironment, context: CredentialContext
    ) throws(PresentmentError) -> ConsentModel {
        let now = environment.now
        let auth = checked.authentication
        try context.indexCandidates(checked.queries, at: now)
        let documents = try decidingZeroKnowledge(checked.queries).map { q in
            RequestedDocument(
                q, candidates: Planner.candidates(q, context: context, now: now),
                excluded: Planner.excluded(q, context: context, now: now),
                readerVerdict: auth.verdict(forDocument: q.index),
                readerAuthentication: auth.signatures(forDocument: q.index))
        }
        return ConsentModel(
            origin: origin, protocolIdentifier: checked.protocolIdentifier, readerVerdict: auth.verdict,
            readers: auth.readers, signatures: auth.signatures, documents: documents,
            sessionTranscriptBytes: checked.sessionTranscript, documentSets: checked.documentSets)
    }

    /// `respond`'s plan (the chosen candidates under the approval) as built DeviceResponses.
    @usableFromInline func plannedResponses(
        _ model: ConsentModel, using: [Int: String], approving: Approval, consented: ConsentedRequest?,
        plainFallback: Set<Int>, layout: ResponseLayout, stages: StageClock?
    ) throws(PresentmentError) -> [BuiltResponse] {
        let context = try source.current()
        let plan = try Planner.plan(
            model.documents, documentSets: model.documentSets, context: context, using: using, approving: approving,
            consented: consented, plainFallback: plainFallback)
        stages?.mark(.plan)
        return try responses(plan, transcript: model.sessionTranscriptBytes, layout: layout, current: context)
    }

    /// Confirms, just before anything is signed, that every credential of `plan` may still be presented:
    /// usable at the clock's current reading and, for a plan made from an earlier snapshot (`current`
    /// given: a request parsed before), still in the store as it is now, the same credential and not
    /// cancelled.
    /// - Throws: `selection.credentialWithdrawn` (cancelled, removed or replaced since the request was
    ///   parsed), `selection.credentialNotValidNow` (outside its validity period now).
    func confirmPresentable(_ plan: Plan, current: CredentialContext?) throws(PresentmentError) {
        let now = configuration.clock()
        for d in plan.answered {
            var credential = d.credential
            if let current {
                guard let stored = current.credential(id: credential.id), stored.isSameCredential(as: credential) else {
                    throw PresentmentError(SelectionRule.credentialWithdrawn)
                }
                credential = stored
            }
            guard !credential.isCancelled else { throw PresentmentError(SelectionRule.credentialWithdrawn) }
            guard credential.isUsable(at: now) else { throw PresentmentError(SelectionRule.credentialNotValidNow) }
        }
    }

    /// The DeviceResponses of a plan as the front end cuts them, each within every answered document's
    /// `maximumResponseSize` and (when configured) self-checked.
    private func responses(_ plan: Plan, transcript: [UInt8], layout: ResponseLayout, current: CredentialContext?)
        throws(PresentmentError) -> [BuiltResponse]
    {
        try confirmPresentable(plan, current: current)
        switch layout {
        case .single(let missing):
            return [try built(plan, transcript: transcript, missingElements: missing)]
        case .perDocument:
            var out = [BuiltResponse]()
            out.reserveCapacity(plan.answered.count)
            // In request order, as the plan keeps them.
            assert(zip(plan.answered, plan.answered.dropFirst()).allSatisfy { $0.index < $1.index })
            for d in plan.answered {
                out.append(
                    try built(Plan(answered: [d], unanswered: []), transcript: transcript, missingElements: .omit))
            }
            return out
        }
    }

    /// One DeviceResponse for `plan`.
    private func built(_ plan: Plan, transcript: [UInt8], missingElements: MissingElementPolicy)
        throws(PresentmentError) -> BuiltResponse
    {
        let (plain, zkDocuments) = try proving(plan, sessionTranscript: transcript)
        let response = try DeviceResponseBuilder.build(
            plan: plain, zkDocuments: zkDocuments, sessionTranscript: transcript, missingElements: missingElements)
        for d in plan.answered {
            if let max = d.maximumResponseSize, UInt64(response.count) > max {
                throw PresentmentError(ResponseRule.tooLarge)
            }
        }
        if configuration.selfCheck {
            try DeviceResponseBuilder.selfCheck(response.contiguous, plan: plain, sessionTranscript: transcript)
        }
        return BuiltResponse(response: response, documents: plan.answered.map(\.index))
    }
}
