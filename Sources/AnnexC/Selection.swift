#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MdocCBOR

/// Matches requested documents against stored credentials.
enum Selection {
    static func requestedDocuments(_ request: DeviceRequest, context: CredentialContext, now: Date) -> [RequestedDocument] {
        request.docRequests.enumerated().map { index, dr in
            let ir = dr.itemsRequest
            var elements = [RequestedElement]()
            elements.reserveCapacity(ir.elementCount)
            for ns in ir.nameSpaces {
                for e in ns.elements { elements.append(RequestedElement(id: ElementID(ns.name, e.identifier), intentToRetain: e.intentToRetain)) }
            }
            var alternatives = [ElementID: [[ElementID]]]()
            if request.isVersion11OrLater, let info = ir.requestInfo {
                for a in info.alternativeDataElements {
                    alternatives[ElementID(a.requestedElement.nameSpace, a.requestedElement.identifier)] =
                        a.alternativeElementSets.map { $0.map { ElementID($0.nameSpace, $0.identifier) } }
                }
            }
            var candidates = [CandidateCredential]()
            for c in context.credentials where c.isUsable(at: now) && c.docTypes.contains(ir.docType) {
                var releasable = [ElementID](), missing = [ElementID](), subs = [ElementID: [ElementID]]()
                var releasableItems = [Int](), subItems = [ElementID: [Int]]()
                releasable.reserveCapacity(elements.count)
                releasableItems.reserveCapacity(elements.count)
                for e in elements {
                    if let i = c.itemIndex[e.id] {
                        releasable.append(e.id)
                        releasableItems.append(i)
                    } else if let alts = alternatives[e.id], let set = alts.first(where: { $0.allSatisfy { c.itemIndex[$0] != nil } }) {
                        subs[e.id] = set
                        subItems[e.id] = set.map { c.itemIndex[$0]! }
                    } else {
                        missing.append(e.id)
                    }
                }
                releasableItems.sort()
                candidates.append(CandidateCredential(credentialID: c.id, releasable: releasable, missing: missing, substitutions: subs,
                                                      releasableItems: releasableItems, substitutionItems: subItems))
            }
            // Best first: most releasable elements, then registration order (stable sort).
            if candidates.count > 1 { candidates = candidates.enumerated().sorted {
                let a = $0.element.releasable.count + $0.element.substitutions.count, b = $1.element.releasable.count + $1.element.substitutions.count
                return a != b ? a > b : $0.offset < $1.offset
            }.map(\.element) }
            return RequestedDocument(index: index, docType: ir.docType, elements: elements, alternatives: alternatives,
                                     maximumResponseSize: ir.requestInfo?.maximumResponseSize, candidates: candidates)
        }
    }

    /// The plan `accept` answers with: for each DocRequest the best usable credential (most requested
    /// elements held or substituted by an alternative set, then registration order; only
    /// `credentialID` when given), releasing everything requested that it can. The same decisions as
    /// `requestedDocuments` followed by `AnnexCEngine.plan(…, approving: .allRequested)`, without
    /// the consent-screen model: no per-element lists, no ranking of every candidate.
    static func directPlan(_ request: DeviceRequest, context: CredentialContext, now: Date, credentialID: String?) throws(AnnexCError) -> AnnexCEngine.Plan {
        var perDoc = AnnexCEngine.PlannedDocument.slots(request.docRequests.count)
        let honourAlternatives = request.isVersion11OrLater
        for (index, dr) in request.docRequests.enumerated() {
            let ir = dr.itemsRequest
            let alternatives = honourAlternatives ? ir.requestInfo?.alternativeDataElements ?? [] : []
            var best: (credential: StoredCredential, score: Int, items: [Int], missing: [ElementID])?
            for c in context.credentials where c.isUsable(at: now) && c.docTypes.contains(ir.docType) {
                if let credentialID, c.id != credentialID { continue }
                var items = [Int](), missing = [ElementID]()
                items.reserveCapacity(ir.elementCount)
                var score = 0
                var substituted = false
                // Looked up by their bytes; an ElementID (two Strings) only for an element not held.
                ir.forEachElement { ns, identifier, _ in
                    if let i = c.itemIndex.probe(identifier, ns) {
                        items.append(i)
                        score += 1
                        return
                    }
                    let id = ElementID(String(decoding: ns, as: UTF8.self), String(decoding: identifier, as: UTF8.self))
                    if let set = Self.alternative(for: id, in: alternatives, heldBy: c) {
                        for alt in set { items.append(c.itemIndex[alt]!) }
                        score += 1
                        substituted = true
                    } else {
                        missing.append(id)
                    }
                }
                guard best == nil || score > best!.score else { continue }
                if substituted { items = Array(Set(items)) }
                Self.sortIndices(&items)
                best = (c, score, items, missing)
            }
            guard let best, !best.items.isEmpty else { continue }
            perDoc[index] = AnnexCEngine.PlannedDocument(index: index, docType: ir.docType, maximumResponseSize: ir.requestInfo?.maximumResponseSize,
                                                         credential: best.credential, released: best.items, missing: best.missing)
        }
        // Only consulted to word a refusal.
        return try AnnexCEngine.settle(perDoc, request: request) { i in
            let docType = request.docRequests[i].itemsRequest.docType
            return context.credentials.contains { $0.isUsable(at: now) && $0.docTypes.contains(docType) }
        }
    }

    /// Sorts item indices ascending: insertion sort for the usual handful (already nearly in order:
    /// requests tend to list elements in the credential's order), the standard sort beyond.
    static func sortIndices(_ a: inout [Int]) {
        guard a.count <= 32 else { a.sort(); return }
        a.withUnsafeMutableBufferPointer { b in
            for i in b.indices.dropFirst() {
                let v = b[i]
                var j = i
                while j > 0 && b[j - 1] > v { b[j] = b[j - 1]; j -= 1 }
                b[j] = v
            }
        }
    }

    /// The first alternative set for `id` whose every element `c` holds. When a request repeats an
    /// element in alternativeDataElements, its last entry counts (as in `requestedDocuments`).
    private static func alternative(for id: ElementID, in alternatives: [DocRequestInfo.AlternativeDataElements], heldBy c: StoredCredential) -> [ElementID]? {
        guard let entry = alternatives.last(where: { $0.requestedElement.nameSpace == id.nameSpace && $0.requestedElement.identifier == id.identifier }) else {
            return nil
        }
        for set in entry.alternativeElementSets {
            let ids = set.map { ElementID($0.nameSpace, $0.identifier) }
            if ids.allSatisfy({ c.itemIndex[$0] != nil }) { return ids }
        }
        return nil
    }
}
