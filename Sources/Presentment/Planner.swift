#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR

/// One DocRequest matched against one credential: the single decision of what that credential could
/// release for it. Both the consent path (`parse`, which keeps every match) and `accept` (which keeps
/// the best) are built on `Planner.match`.
package struct DocumentMatch: Sendable {
    let credential: StoredCredential
    /// Requested elements the credential holds, as item indices, in request order.
    var held: [Int]
    /// Requested elements it lacks that an admissible alternative set it fully holds replaces, with
    /// the set's position among the reader's sets for that element (0: the reader's first choice).
    var substitutions: [(substitution: Substitution, items: [Int], preference: Int)]
    /// Requested elements neither held nor replaced.
    var missing: [ElementID]
    /// Under selection rules (DCQL): each requested element's item index when held with an
    /// acceptable value, by request position, and the acceptable sets; `held` is then the first set
    /// the credential fully holds. Nil for ISO/IEC 18013-5 queries.
    var selection: (heldAt: [Int?], sets: [[Int]], chosen: Int)?

    /// How well the credential answers the verifier, as a key compared lexicographically (smaller is
    /// better; registration order breaks ties). Never "whoever releases most":
    /// - under selection rules (DCQL): the position of the first claim set it satisfies (the
    ///   verifier's order of preference, OpenID4VP §6.4.1), then the fewest elements released;
    /// - for ISO/IEC 18013-5: the fewest requested elements left unanswered, then the substitutes'
    ///   positions in the reader's order (an element held beats a substitute; an earlier alternative
    ///   set beats a later one), then the fewest elements released.
    var rank: (Int, Int, Int) {
        if let selection { return (selection.chosen, held.count, 0) }
        var cost = 0
        var released = held.count
        for s in substitutions {
            cost += 1 + s.preference
            released += s.items.count
        }
        return (missing.count, cost, released)
    }

    /// Whether the document may be presented with no issuer-signed element: an ISO/IEC 18013-5
    /// DocRequest (its elements are all optional to the reader), or a query that asks for none (a
    /// DCQL credential query without claims). A query whose claim sets name elements never is.
    var presentableEmpty: Bool { selection.map { $0.heldAt.isEmpty } ?? true }

    /// Whether the query asks for no element at all (before `release` takes `held`).
    var asksForNoElement: Bool {
        selection.map { $0.heldAt.isEmpty } ?? (held.isEmpty && missing.isEmpty && substitutions.isEmpty)
    }

    /// Whether this match ranks before `other` when `self` was registered first on equal rank.
    @inline(__always)
    func ranksBefore(_ other: DocumentMatch) -> Bool { rank < other.rank }
}

/// A DocRequest answered by one credential: what the DeviceResponse releases for it.
package struct PlannedDocument {
    /// Index in `docRequests`.
    package let index: Int
    package let docType: String
    package let maximumResponseSize: UInt64?
    package let credential: StoredCredential
    /// Items to release: ascending, distinct indices into the credential's item table (so grouped
    /// by namespace in deterministic order).
    package let released: [Int]
    /// Requested elements not held and not replaced (for the error policy).
    package let missing: [ElementID]

    /// `count` empty slots, one per DocRequest. (`Array(repeating:count:)` would allocate through
    /// the standard library's unspecialized path: a generic-metadata lookup on every call.)
    static func slots(_ count: Int) -> [PlannedDocument?] {
        var s = [PlannedDocument?]()
        s.reserveCapacity(count)
        for _ in 0..<count { s.append(nil) }
        return s
    }
}

/// The documents a DeviceResponse answers.
package struct Plan {
    package var answered: [PlannedDocument]
    /// docTypes of the DocRequests left unanswered (optional use cases), in request order.
    package var unanswered: [String]

    package init(answered: [PlannedDocument], unanswered: [String]) {
        self.answered = answered
        self.unanswered = unanswered
    }
}

/// Selection and planning: the one place that decides which credential answers a DocRequest and
/// which of its items leave the device.
package enum Planner {
    /// Matches one requested document against one credential: each requested element is held (looked
    /// up by its bytes; an `ElementID` is made only for an element not held), replaced by the first
    /// admissible alternative set the credential fully holds, or missing. Under selection rules
    /// (DCQL) the credential must be admitted (issuer authority, algorithms), an element counts as
    /// held only with an acceptable value, and the credential answers only with the first acceptable
    /// set it fully holds: nil when it cannot answer at all.
    static func match(_ q: DocumentQuery, _ c: StoredCredential) -> DocumentMatch? {
        if let rules = q.rules { return match(q, c, rules: rules) }
        var held = [Int]()
        held.reserveCapacity(q.elementCount)
        var substitutions = [(substitution: Substitution, items: [Int], preference: Int)]()
        var missing = [ElementID]()
        q.forEachElement { ns, identifier, _ in
            if let i = c.itemIndex.probe(identifier, ns) {
                held.append(i)
                return
            }
            let id = ElementID(String(decoding: ns, as: UTF8.self), String(decoding: identifier, as: UTF8.self))
            if !q.alternatives.isEmpty, let entry = q.alternatives.first(where: { $0.requested == id }) {
                for (preference, set) in entry.sets.enumerated() {
                    var items = [Int]()
                    items.reserveCapacity(set.count)
                    for e in set {
                        guard let i = c.itemIndex[e] else { break }
                        items.append(i)
                    }
                    if items.count == set.count {
                        substitutions.append((Substitution(requested: id, replacement: set), items, preference))
                        return
                    }
                }
            }
            missing.append(id)
        }
        return DocumentMatch(credential: c, held: held, substitutions: substitutions, missing: missing)
    }

    /// `match` under selection rules.
    private static func match(_ q: DocumentQuery, _ c: StoredCredential, rules: ClaimRules) -> DocumentMatch? {
        guard rules.admits(c) else { return nil }
        var heldAt = [Int?]()
        heldAt.reserveCapacity(q.elementCount)
        q.forEachElement { ns, identifier, _ in
            var i = c.itemIndex.probe(identifier, ns)
            if let item = i, !valueAccepted(rules, at: heldAt.count, c, item) { i = nil }
            heldAt.append(i)
        }
        let sets = rules.sets(count: heldAt.count)
        for (position, set) in sets.enumerated() where set.allSatisfy({ heldAt[$0] != nil }) {
            return DocumentMatch(
                credential: c, held: set.map { heldAt[$0]! }, substitutions: [], missing: [],
                selection: (heldAt, sets, position))
        }
        return nil
    }

    /// Whether the credential's item `item`, requested at `position`, has a value the rules accept
    /// (any value when the request names none).
    private static func valueAccepted(_ rules: ClaimRules, at position: Int, _ c: StoredCredential, _ item: Int)
        -> Bool
    {
        guard let accepted = rules.values[position] else { return true }
        guard let value = c.items[c.orderedItems[item].id]?.elementValue else { return false }
        return accepted.contains { $0.matches(value) }
    }

    /// The item indices of the first set whose every position is held and allowed, in request order;
    /// nil when none is. (An empty set, a query with no elements, is satisfied by any credential.)
    private static func firstSatisfied(_ sets: [[Int]], _ heldAt: [Int?], allows: (Int) -> Bool) -> [Int]? {
        for set in sets {
            var items = [Int]()
            items.reserveCapacity(set.count)
            for p in set {
                guard let i = heldAt[p], allows(i) else { break }
                items.append(i)
            }
            if items.count == set.count { return items }
        }
        return nil
    }

    /// Why each usable credential of the query's docType that the rules exclude cannot answer (DCQL
    /// only: an ISO/IEC 18013-5 query matches every usable credential of its docType), in registration
    /// order: for the consent model, so a probe that does not match is shown, not refused.
    package static func excluded(_ q: DocumentQuery, context: CredentialContext, now: Date) -> [ExcludedCredential] {
        guard let rules = q.rules else { return [] }
        var out = [ExcludedCredential]()
        for c in context.credentials where isCandidate(c, docType: q.docType, now: now) && match(q, c) == nil {
            guard rules.admits(c) else {
                out.append(ExcludedCredential(credentialID: c.id, reason: .issuerNotAccepted))
                continue
            }
            // A held element whose value the verifier's `values` do not accept, or claims not held.
            var valueMismatch = false
            var k = 0
            q.forEachElement { ns, identifier, _ in
                if let i = c.itemIndex.probe(identifier, ns), !valueAccepted(rules, at: k, c, i) {
                    valueMismatch = true
                }
                k += 1
            }
            out.append(
                ExcludedCredential(credentialID: c.id, reason: valueMismatch ? .valueNotAccepted : .claimsNotHeld))
        }
        return out
    }

    /// Whether the holder has a usable credential of the query's docType that the verifier's issuer
    /// and algorithm rules admit: then a query it cannot answer (claims not held, a `values` probe
    /// that does not match) is refused as one the holder declined (`cannotSatisfyRequest`), so the
    /// refusal never tells the page whether a probed value matched.
    static func holdsAdmitted(_ q: DocumentQuery, context: CredentialContext, now: Date) -> Bool {
        context.credentials.contains { isCandidate($0, docType: q.docType, now: now) && (q.rules?.admits($0) ?? true) }
    }

    /// Whether `c` may answer a DocRequest for `docType` at `now`: not cancelled, within its validity,
    /// holding the docType.
    @inline(__always)
    static func isCandidate(_ c: StoredCredential, docType: String, now: Date) -> Bool {
        c.isUsable(at: now) && c.docTypes.contains(docType)
    }

    /// Every usable credential's match for a DocRequest (only `credentialID` when given), best first
    /// by `DocumentMatch.rank`, then registration order. `best` is the first of these: the one
    /// ranking, written once.
    package static func candidates(
        _ q: DocumentQuery, context: CredentialContext, now: Date, credentialID: String? = nil
    ) -> [DocumentMatch] {
        var all = [DocumentMatch]()
        for c in context.credentials where isCandidate(c, docType: q.docType, now: now) {
            if let credentialID, c.id != credentialID { continue }
            if let m = match(q, c) { all.append(m) }
        }
        if all.count > 1 {
            // A stable insertion sort by rank: equal ranks keep registration order.
            for i in 1..<all.count {
                let m = all[i]
                var j = i
                while j > 0 && m.ranksBefore(all[j - 1]) {
                    all[j] = all[j - 1]
                    j -= 1
                }
                all[j] = m
            }
        }
        return all
    }

    /// The best usable credential's match (only `credentialID` when given): the first of `candidates`,
    /// found without keeping the others.
    static func best(_ q: DocumentQuery, context: CredentialContext, now: Date, credentialID: String?) -> DocumentMatch?
    {
        var best: DocumentMatch?
        for c in context.credentials where isCandidate(c, docType: q.docType, now: now) {
            if let credentialID, c.id != credentialID { continue }
            guard let m = match(q, c) else { continue }
            if best == nil || m.ranksBefore(best!) { best = m }
        }
        return best
    }

    /// What a match releases under an approval, as ascending distinct item indices: the held requested
    /// elements the approval allows, and each substitution whose every replacement element the
    /// approval allows (approving the requested element never approves its replacement; a set is
    /// released whole or not at all). `.allRequested` releases everything the match shows. The match's
    /// `held` list is taken, not copied.
    static func release(_ m: inout DocumentMatch, approving approval: Approval, document: Int) -> [Int] {
        if let selection = m.selection {
            // Under selection rules a set is released whole: the first acceptable set the
            // credential holds and the approval allows entirely, or nothing.
            let items = m.credential.orderedItems
            var out =
                firstSatisfied(
                    selection.sets, selection.heldAt, allows: { approval.allows(items[$0].id, document: document) })
                ?? []
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
    /// Every element released must lie in `consented` when the platform's summary is given.
    static func planDocument(
        index: Int, docType: String, maximumResponseSize: UInt64?, match: inout DocumentMatch,
        approving approval: Approval, consented: Set<ElementID>?
    ) throws(PresentmentError) -> PlannedDocument? {
        let emptiness = (asksForNothing: match.asksForNoElement, presentable: match.presentableEmpty)
        let released = release(&match, approving: approval, document: index)
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
            released: released, missing: match.missing)
    }

    /// The plan `accept` answers with: for each DocRequest the best usable credential (only
    /// `credentialID` when given), releasing everything it shows. The same decisions as `parse`
    /// followed by `respond(approving: .allRequested)`: both go through `match` and `planDocument`.
    package static func bestPlan(
        _ queries: [DocumentQuery], documentSets: [DocumentSetRule], context: CredentialContext, now: Date,
        credentialID: String?
    ) throws(PresentmentError) -> Plan {
        var perDoc = PlannedDocument.slots(queries.count)
        for q in queries {
            guard var m = best(q, context: context, now: now, credentialID: credentialID) else { continue }
            perDoc[q.index] = try planDocument(
                index: q.index, docType: q.docType, maximumResponseSize: q.maximumResponseSize, match: &m,
                approving: .allRequested, consented: nil)
        }
        // Only consulted to word a refusal.
        return try settle(
            perDoc, documentSets: documentSets, docTypes: { queries[$0].docType },
            hasCandidates: { holdsAdmitted(queries[$0], context: context, now: now) })
    }

    /// The plan for a parsed request: per document the chosen candidate (`using`, else the best),
    /// narrowed by the approval and checked against the consented summary.
    package static func plan(
        _ documents: [RequestedDocument], documentSets: [DocumentSetRule], context: CredentialContext,
        using: [Int: String], approving: Approval, consented: ConsentedRequest?
    ) throws(PresentmentError) -> Plan {
        if let consented {
            for d in documents {
                guard let allowed = consented.documents[d.docType], d.elements.allSatisfy({ allowed.contains($0.id) })
                else {
                    throw PresentmentError(SelectionRule.requestNotShown)
                }
            }
        }
        var perDoc = PlannedDocument.slots(documents.count)
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
            perDoc[index] = try planDocument(
                index: index, docType: docType, maximumResponseSize: documents[k].maximumResponseSize, match: &m,
                approving: approving, consented: consented?.documents[docType])
        }
        return try settle(
            perDoc, documentSets: documentSets, docTypes: { documents[$0].docType },
            hasCandidates: { i in
                let d = documents[i]
                return !d.candidates.isEmpty || d.excluded.contains { $0.reason != .issuerNotAccepted }
            })
    }

    /// Decides which documents are answered, given each one's planned document (nil: none): with
    /// document-set rules (1.1 useCases), the first answerable set of each rule (a mandatory rule must
    /// have one); otherwise every document. `hasCandidates(i)` tells the two refusals apart. The unanswered
    /// documents' docTypes come from the planned documents' queries in `docTypes`.
    static func settle(
        _ perDoc: [PlannedDocument?], documentSets: [DocumentSetRule], docTypes: (Int) -> String,
        hasCandidates: (Int) -> Bool
    ) throws(PresentmentError) -> Plan {
        switch choose(perDoc.count, documentSets: documentSets, answered: { perDoc[$0] != nil }) {
        case .every:
            return Plan(answered: perDoc.map { $0! }, unanswered: [])
        case .unanswered(let i):
            throw PresentmentError(hasCandidates(i) ? SelectionRule.nothingReleasable : .noUsableCredential)
        case .refused(let rule):
            throw PresentmentError(rule)
        case .sets(let chosen):
            let answer = chosen.indices.filter { chosen[$0] }
            return Plan(
                answered: answer.map { perDoc[$0]! }, unanswered: perDoc.indices.filter { !chosen[$0] }.map(docTypes))
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

    /// Whether `plan(documents, documentSets:, context:, using: [:], approving: .allRequested,
    /// consented: nil)` answers, by the same decisions (each document's best candidate, what `release`
    /// would release, `Approval.covers`, `choose`) without building the plan: the facade's
    /// answerability test, run on every `parse`.
    package static func answersAllRequested(_ documents: [RequestedDocument], documentSets: [DocumentSetRule])
        -> Bool
    {
        // A document's index is its position (as `plan` and `settle` read them).
        let answers = choose(documents.count, documentSets: documentSets) { i in
            guard let m = documents[i].candidates.first?.match else { return false }
            return Approval.allRequested.covers(
                document: i, releasing: releasesAnything(m) ? 1 : 0, asksForNothing: m.asksForNoElement,
                presentableEmpty: m.presentableEmpty)
        }
        if case .refused = answers { return false }
        if case .unanswered = answers { return false }
        return true
    }

    /// Whether `release(&m, approving: .allRequested, ...)` releases at least one item.
    static func releasesAnything(_ m: DocumentMatch) -> Bool {
        if let selection = m.selection {
            // The first set the credential holds whole (every item allowed).
            for set in selection.sets where set.allSatisfy({ selection.heldAt[$0] != nil }) { return !set.isEmpty }
            return false
        }
        return !m.held.isEmpty || m.substitutions.contains { !$0.items.isEmpty }
    }

    /// Sorts item indices ascending: insertion sort for the usual handful (already nearly in order:
    /// requests tend to list elements in the credential's order), the standard sort beyond.
    package static func sortIndices(_ a: inout [Int]) {
        guard a.count <= 32 else {
            a.sort()
            return
        }
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
