#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Planning from matches: what a match releases under an approval, the plan of a parsed request and
/// of `accept`, the one document-set rule, and the answerability test the facade runs on `parse`.
extension Planner {
    /// What a match releases under an approval, as ascending distinct item indices: the held requested
    /// elements the approval allows, and each substitution whose every replacement element the
    /// approval allows (approving the requested element never approves its replacement; a set is
    /// released whole or not at all). `.allRequested` releases everything the match shows. The match's
    /// `held` list is taken, not copied.
    static func release(_ m: inout DocumentMatch, approving approval: Approval, document: Int) -> [Int] {
        if let selection = m.selection {
            // Under selection rules a set is released whole: the first acceptable set the
            // credential holds and the approval allows entirely, or nothing. `held` is the first set
            // it holds (the one set of every requested element without claim sets): `.allRequested`
            // allows every item, so that is the set.
            var out = [Int]()
            swap(&out, &m.held)
            switch approval {
            case .allRequested: break
            default:
                let items = m.credential.orderedItems
                let allows = { (i: Int) in approval.allows(items[i].id, document: document) }
                if let sets = selection.sets {
                    out = firstSatisfied(sets, selection.heldAt, allows: allows) ?? []
                } else if !out.allSatisfy(allows) {
                    out = []
                }
            }
            sortIndices(&out)
            removeAdjacentDuplicates(&out)
            return out
        }
        var out = [Int]()
        swap(&out, &m.held)
        if case .allRequested = approval {
            for s in m.substitutions { out += s.items }
        } else {
            let items = m.credential.orderedItems
            out.removeAll { !approval.allows(items[$0].id, document: document) }
            for s in m.substitutions
            where s.substitution.replacement.allSatisfy({ approval.allows($0, document: document) }) { out += s.items }
        }
        sortIndices(&out)
        if !m.substitutions.isEmpty { removeAdjacentDuplicates(&out) }
        return out
    }

    /// Plans one DocRequest from its chosen match under an approval; nil when nothing would be released.
    /// Every element released must lie in `consented` when the platform's summary is given. A document
    /// answered with a proof releases every requested claim, each held as requested (a proof discloses
    /// exactly what its circuit was asked for), or nothing; one whose proof request falls back to a
    /// plain presentation releases anything only when `plainFallback` (the holder's separate approval).
    static func planDocument(
        index: Int, docType: String, maximumResponseSize: UInt64?, match: inout DocumentMatch,
        approving approval: Approval, consented: Set<ElementID>?, zeroKnowledge: ZeroKnowledgeAnswer? = nil,
        plainFallback: Bool = false
    ) throws(PresentmentError) -> PlannedDocument? {
        let emptiness = (asksForNothing: match.asksForNoElement, presentable: match.presentableEmpty)
        let requested = match.held.count + match.missing.count + match.substitutions.count
        let whole = match.missing.isEmpty && match.substitutions.isEmpty
        let released = release(&match, approving: approval, document: index)
        var proof: ZkSystemSpec?
        switch zeroKnowledge {
        case .proof(let spec, _)?:
            guard !released.isEmpty else { return nil }
            guard whole, released.count == requested else { throw PresentmentError(ZeroKnowledgeRule.notProvable) }
            proof = spec
        case .plainFallback?:
            guard released.isEmpty || plainFallback else {
                throw PresentmentError(ZeroKnowledgeRule.fallbackNotApproved)
            }
        case nil: break
        }
        if let consented {
            let items = match.credential.orderedItems
            guard released.allSatisfy({ consented.contains(items[$0].id) }) else {
                throw PresentmentError(SelectionRule.releaseNotShown)
            }
        }
        guard
            approval.covers(
                document: index, releasing: released.count, asksForNothing: emptiness.asksForNothing,
                presentableEmpty: emptiness.presentable)
        else { return nil }
        return PlannedDocument(
            index: index, docType: docType, maximumResponseSize: maximumResponseSize, credential: match.credential,
            released: released, missing: match.missing, proof: proof)
    }

    /// The plan `accept` answers with: for each DocRequest the best usable credential (only
    /// `credentialID` when given), releasing everything it shows. The same decisions as `parse`
    /// followed by `respond(approving: .allRequested)`: both go through `match` and `planDocument`.
    package static func bestPlan(
        _ queries: [DocumentQuery], documentSets: [DocumentSetRule], context: CredentialContext, now: Date,
        credentialID: String?
    ) throws(PresentmentError) -> Plan {
        var answered = [PlannedDocument]()
        answered.reserveCapacity(queries.count)
        for q in queries {
            guard var m = best(q, context: context, now: now, credentialID: credentialID) else { continue }
            if let d = try planDocument(
                index: q.index, docType: q.docType, maximumResponseSize: q.maximumResponseSize, match: &m,
                approving: .allRequested, consented: nil, zeroKnowledge: q.zeroKnowledgeAnswer)
            {
                answered.append(d)
            }
        }
        // Only consulted to word a refusal.
        return try settle(
            answered, count: queries.count, documentSets: documentSets, docTypes: { queries[$0].docType },
            hasCandidates: { holdsAdmitted(queries[$0], context: context, now: now) })
    }

    /// The plan for a parsed request: per document the chosen candidate (`using`, else the best),
    /// narrowed by the approval and checked against the consented summary.
    package static func plan(
        _ documents: [RequestedDocument], documentSets: [DocumentSetRule], context: CredentialContext,
        using: [Int: String], approving: Approval, consented: ConsentedRequest?, plainFallback: Set<Int> = []
    ) throws(PresentmentError) -> Plan {
        if let consented {
            for d in documents {
                guard let allowed = consented.documents[d.docType], d.elements.allSatisfy({ allowed.contains($0.id) })
                else {
                    throw PresentmentError(SelectionRule.requestNotShown)
                }
            }
        }
        var answered = [PlannedDocument]()
        answered.reserveCapacity(documents.count)
        // Each document's fields are read in place (a RequestedDocument is copied field by field, not
        // whole: it holds a dozen arrays and strings).
        for k in documents.indices {
            let index = documents[k].index
            let chosen: Int?
            if let id = using[index] {
                chosen = documents[k].candidates.firstIndex { $0.credentialID == id }
                if chosen == nil && context.credential(id: id) != nil {
                    // The requested credential exists but cannot answer this document: leave it unanswered.
                    continue
                }
                guard chosen != nil else { throw PresentmentError(SelectionRule.chosenCredentialUnknown) }
            } else {
                chosen = documents[k].candidates.isEmpty ? nil : 0
            }
            guard let chosen else { continue }
            var m = documents[k].candidates[chosen].match
            let docType = documents[k].docType
            if let d = try planDocument(
                index: index, docType: docType, maximumResponseSize: documents[k].maximumResponseSize, match: &m,
                approving: approving, consented: consented?.documents[docType],
                zeroKnowledge: documents[k].zeroKnowledgeAnswer, plainFallback: plainFallback.contains(index))
            {
                answered.append(d)
            }
        }
        return try settle(
            answered, count: documents.count, documentSets: documentSets, docTypes: { documents[$0].docType },
            hasCandidates: { i in
                let d = documents[i]
                return !d.candidates.isEmpty || d.excluded.contains { $0.reason.byQueryRules }
            })
    }

    /// Decides which of `count` documents are answered, given the planned documents of those that
    /// can be (in request order, each index once: every front end lists its queries in request
    /// order): with document-set rules (1.1 useCases), the first answerable set of each rule (a
    /// mandatory rule must have one); otherwise every document. `hasCandidates(i)` tells the two
    /// refusals apart. The unanswered documents' docTypes come from their queries in `docTypes`.
    static func settle(
        _ answered: [PlannedDocument], count: Int, documentSets: [DocumentSetRule], docTypes: (Int) -> String,
        hasCandidates: (Int) -> Bool
    ) throws(PresentmentError) -> Plan {
        switch choose(count, documentSets: documentSets, answered: { i in answered.contains { $0.index == i } }) {
        case .every:
            return Plan(answered: answered, unanswered: [])
        case .unanswered(let i):
            throw PresentmentError(hasCandidates(i) ? SelectionRule.nothingReleasable : .noUsableCredential)
        case .refused(let rule):
            throw PresentmentError(rule)
        case .sets(let chosen):
            return Plan(
                answered: answered.filter { chosen[$0.index] },
                unanswered: (0..<count).filter { !chosen[$0] }.map(docTypes))
        }
    }

    /// Which documents answer under the document-set rules, given which documents could.
    enum Choice {
        /// No rules: every document answers.
        case every
        /// No rules, and this document cannot answer.
        case unanswered(Int)
        /// The rules refuse: a mandatory use case has no answerable set, or no use case has one.
        case refused(SelectionRule)
        /// Per document, whether the first answerable set of some rule holds it.
        case sets([Bool])
    }

    /// The one document-set rule (`settle` plans by it, `answersAllRequested` tests by it): without
    /// rules every document must answer; with rules, each rule answers with its first set whose
    /// documents all answer, a mandatory rule without one refuses, and something must be answered.
    static func choose(_ count: Int, documentSets: [DocumentSetRule], answered: (Int) -> Bool) -> Choice {
        guard !documentSets.isEmpty else {
            for i in 0..<count where !answered(i) { return .unanswered(i) }
            return .every
        }
        var chosen = [Bool](repeating: false, count: count)
        var any = false
        for rule in documentSets {
            if let set = rule.documentSets.first(where: { $0.allSatisfy { $0 >= 0 && $0 < count && answered($0) } }) {
                for i in set {
                    chosen[i] = true
                    any = true
                }
            } else if rule.mandatory {
                return .refused(.mandatoryUseCase)
            }
        }
        return any ? .sets(chosen) : .refused(.noUseCase)
    }

    /// What `plan(documents, documentSets:, context:, using: [:], approving: .allRequested,
    /// consented: nil)` would do, by the same decisions (each document's best candidate, what `release`
    /// would release, a proof request's answer, `Approval.covers`, `choose`) without building the plan:
    /// the facade's test between protocols, run on every `parse`. A proof request whose best candidate
    /// would release something but cannot be proven, or whose plain fallback the holder has not
    /// approved, is `.refused` with the rule `accept` refuses it by (final for the page: it is never
    /// passed over for another protocol's plain answer).
    package static func answerability(_ documents: [RequestedDocument], documentSets: [DocumentSetRule])
        -> Answerability
    {
        // The zero-knowledge refusals first: `plan` meets them document by document before settling.
        for d in documents {
            guard let m = d.candidates.first?.match, releasesAnything(m) else { continue }
            switch d.zeroKnowledgeAnswer {
            case .plainFallback?: return .refused(PresentmentError(ZeroKnowledgeRule.fallbackNotApproved))
            case .proof? where !(m.missing.isEmpty && m.substitutions.isEmpty):
                return .refused(PresentmentError(ZeroKnowledgeRule.notProvable))
            default: continue
            }
        }
        // A document's index is its position (as `plan` and `settle` read them).
        let answers = choose(documents.count, documentSets: documentSets) { i in
            guard let m = documents[i].candidates.first?.match else { return false }
            return Approval.allRequested.covers(
                document: i, releasing: releasesAnything(m) ? 1 : 0, asksForNothing: m.asksForNoElement,
                presentableEmpty: m.presentableEmpty)
        }
        switch answers {
        case .refused, .unanswered: return .notAnswerable
        case .every, .sets: return .answers
        }
    }

    /// What approving everything shown would do with a parsed request.
    package enum Answerability: Sendable {
        /// It is answered.
        case answers
        /// It cannot be answered from what is stored (a selection refusal: another protocol's entry
        /// may be tried).
        case notAnswerable
        /// It is refused for a reason that is final for the page (a proof that cannot be made, a plain
        /// fallback not approved).
        case refused(PresentmentError)
    }

    /// Whether `release(&m, approving: .allRequested, ...)` releases at least one item.
    static func releasesAnything(_ m: DocumentMatch) -> Bool {
        // Under selection rules `held` is the first set the credential holds whole (every item
        // allowed), and a match has no substitutions.
        !m.held.isEmpty || m.substitutions.contains { !$0.items.isEmpty }
    }

    /// Sorts item indices ascending: insertion sort for the usual handful (already nearly in order:
    /// requests tend to list elements in the credential's order), the standard sort beyond.
    package static func sortIndices(_ a: inout [Int]) {
        guard a.count <= 32 else {
            a.sort()
            return
        }
        // unsafe: a handful of swaps without a uniqueness check per store (RequestRuleTests holds it to the standard sort).
        a.withUnsafeMutableBufferPointer { b in
            for i in b.indices.dropFirst() {
                let v = b[i]
                var j = i
                while j > 0 && b[j - 1] > v {
                    b[j] = b[j - 1]
                    j -= 1
                }
                b[j] = v
            }
        }
    }

    /// Removes repeats from a sorted array (an alternative set may overlap a requested element, or another set).
    static func removeAdjacentDuplicates(_ a: inout [Int]) {
        guard a.count > 1 else { return }
        var w = 1
        for r in 1..<a.count where a[r] != a[w - 1] {
            a[w] = a[r]
            w += 1
        }
        a.removeLast(a.count - w)
    }
}
