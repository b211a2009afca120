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
}
