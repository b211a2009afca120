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
    /// Under selection rules (DCQL): the acceptable sets (nil: no claim sets, so the one set of every
    /// requested position) and, with sets, each requested element's item index when held with an
    /// acceptable value, by request position (empty without sets: every requested element is then
    /// held, and `held` lists them in request order); `held` is the first set the credential fully
    /// holds, `chosen` its position. Nil for ISO/IEC 18013-5 queries.
    var selection: (heldAt: [Int?], sets: [[Int]]?, chosen: Int)?

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
    /// (Before `release` takes `held`.)
    var presentableEmpty: Bool { selectionAsksForNoElement ?? true }

    /// Whether the query asks for no element at all (before `release` takes `held`).
    var asksForNoElement: Bool {
        selectionAsksForNoElement ?? (held.isEmpty && missing.isEmpty && substitutions.isEmpty)
    }

    /// Under selection rules, whether the query names no element (without claim sets every requested
    /// element is in `held`; with them, `heldAt` has a position for each); nil for ISO/IEC 18013-5.
    private var selectionAsksForNoElement: Bool? {
        selection.map { $0.sets == nil ? held.isEmpty : $0.heldAt.isEmpty }
    }

    /// Whether this match ranks before `other` when `self` was registered first on equal rank.
    @inline(__always)
    func ranksBefore(_ other: DocumentMatch) -> Bool { rank < other.rank }
}

/// A DocRequest answered by one credential: what the DeviceResponse releases for it.
package struct PlannedDocument {
    /// What a planned document never changes, in one object (a plan is copied from the planner to the
    /// builder and the consent model: one reference count a copy, not one per member).
    final class Core: Sendable {
        let docType: String
        let maximumResponseSize: UInt64?
        let credential: StoredCredential
        let released: [Int]
        let missing: [ElementID]
        let proof: ZkSystemSpec?

        init(
            docType: String, maximumResponseSize: UInt64?, credential: StoredCredential, released: [Int],
            missing: [ElementID], proof: ZkSystemSpec?
        ) {
            self.docType = docType
            self.maximumResponseSize = maximumResponseSize
            self.credential = credential
            self.released = released
            self.missing = missing
            self.proof = proof
        }
    }

    /// Index in `docRequests`.
    package let index: Int
    let core: Core
    package var docType: String { core.docType }
    package var maximumResponseSize: UInt64? { core.maximumResponseSize }
    package var credential: StoredCredential { core.credential }
    /// Items to release: ascending, distinct indices into the credential's item table (so grouped
    /// by namespace in deterministic order).
    package var released: [Int] { core.released }
    /// Requested elements not held and not replaced (for the error policy).
    package var missing: [ElementID] { core.missing }
    /// The reader's spec this document is proven for (answered as a ZkDocument), nil for a plain one.
    package var proof: ZkSystemSpec? { core.proof }

    package init(
        index: Int, docType: String, maximumResponseSize: UInt64?, credential: StoredCredential, released: [Int],
        missing: [ElementID], proof: ZkSystemSpec? = nil
    ) {
        self.index = index
        core = Core(
            docType: docType, maximumResponseSize: maximumResponseSize, credential: credential, released: released,
            missing: missing, proof: proof)
    }
}

/// The documents a DeviceResponse answers.
package struct Plan {
    /// The answered documents in request order (ascending `index`: the planner keeps them so), the
    /// order a DeviceResponse lists them in.
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
        let itemIndex = c.itemIndex
        q.forEachElement { ns, identifier, _ in
            if let i = itemIndex.probe(identifier, ns) {
                held.append(i)
                return
            }
            let id = ElementID(String(decoding: ns, as: UTF8.self), String(decoding: identifier, as: UTF8.self))
            if !q.alternatives.isEmpty, let entry = q.alternatives.first(where: { $0.requested == id }) {
                for (preference, set) in entry.sets.enumerated() {
                    var items = [Int]()
                    items.reserveCapacity(set.count)
                    for e in set {
                        guard let i = itemIndex[e] else { break }
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
        let itemIndex = c.itemIndex
        guard let sets = rules.claimSets else {
            // No claim sets: the one set of every requested element, each held with an acceptable
            // value, or no match (no per-position list kept: the positions are `held`'s).
            var held = [Int]()
            held.reserveCapacity(q.elementCount)
            var holdsAll = true
            q.forEachElement { ns, identifier, _ in
                guard holdsAll else { return }
                if let i = itemIndex.probe(identifier, ns), valueAccepted(rules, at: held.count, c, i) {
                    held.append(i)
                } else {
                    holdsAll = false
                }
            }
            guard holdsAll else { return nil }
            return DocumentMatch(credential: c, held: held, substitutions: [], missing: [], selection: ([], nil, 0))
        }
        var heldAt = [Int?]()
        heldAt.reserveCapacity(q.elementCount)
        q.forEachElement { ns, identifier, _ in
            var i = itemIndex.probe(identifier, ns)
            if let item = i, !valueAccepted(rules, at: heldAt.count, c, item) { i = nil }
            heldAt.append(i)
        }
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
        guard !rules.values.isEmpty, let accepted = rules.values[position] else { return true }
        let value = c.item(at: item).elementValue
        return accepted.contains { $0.matches(value) }
    }

    /// The item indices of the first set whose every position is held and allowed, in the set's
    /// order; nil when none is. (An empty set is satisfied by any credential.)
    static func firstSatisfied(_ sets: [[Int]], _ heldAt: [Int?], allows: (Int) -> Bool) -> [Int]? {
        sets: for set in sets {
            var items = [Int]()
            items.reserveCapacity(set.count)
            for p in set {
                guard let i = heldAt[p], allows(i) else { continue sets }
                items.append(i)
            }
            return items
        }
        return nil
    }

    /// Why each credential of the query's docType that is not a candidate cannot answer, in
    /// registration order, for the consent model (the holder's own screen; never sent): one cancelled,
    /// expired or not yet valid at `now`, and (DCQL only: an ISO/IEC 18013-5 query matches every usable
    /// credential of its docType) one the query's rules exclude, so a probe that does not match is
    /// shown, not refused.
    package static func excluded(_ q: DocumentQuery, context: CredentialContext, now: Date) -> [ExcludedCredential] {
        var out = [ExcludedCredential]()
        for c in context.credentials where c.docTypes.contains(q.docType) {
            guard c.isUsable(at: now) else {
                let reason: ExcludedCredential.Reason =
                    c.isCancelled ? .cancelled : now < c.validFrom ? .notYetValid : .expired
                out.append(ExcludedCredential(credentialID: c.id, reason: reason))
                continue
            }
            guard let rules = q.rules, c.isIndexable, match(q, c) == nil else { continue }
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
    /// holding the docType, and indexed (indexing it now if it was not: a credential is parsed only
    /// when a request can select it; one whose bytes fail is never a candidate, and the engine refuses
    /// it typed first, `CredentialContext.indexCandidates`).
    @inline(__always)
    static func isCandidate(_ c: StoredCredential, docType: String, now: Date) -> Bool {
        c.isUsable(at: now) && c.docTypes.contains(docType) && c.isIndexable
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
}
