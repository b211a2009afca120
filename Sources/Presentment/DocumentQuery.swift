#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore
import MdocCBOR

/// A requested element the credential lacks, replaced by an alternative set it holds
/// (18013-5 2nd edition `alternativeDataElements`). The replacement is what leaves the device in
/// the requested element's place, so a consent screen must show it.
public struct Substitution: Sendable, Hashable {
    /// The requested element the credential does not hold.
    public let requested: ElementID
    /// The alternative set released instead, in the reader's order (duplicates removed).
    public let replacement: [ElementID]
}

/// A reader's request for a zero-knowledge proof of a document (ISO/IEC 18013-7 Annex C
/// `requestInfo.zkRequest`), and how the engine answers it (`answer`, decided once at `parse` and
/// `accept`): with a proof when a held circuit matches, else, when the reader accepts one, with a plain
/// presentation only if the holder approves it for this document; otherwise the request is refused.
public struct ZeroKnowledgeOffer: Sendable, Hashable {
    /// `zkRequired`: only a proof answers.
    public let required: Bool
    /// The reader's system specs, in its order.
    public let specs: [ZkSystemSpec]
    /// How the engine answers this document.
    public package(set) var answer: ZeroKnowledgeAnswer
    /// The reader's `zkSystemId`s, in its order.
    public var systemIDs: [String] { specs.map(\.id) }
    /// The `system` of each spec (e.g. `longfellow-libzk-v1`), in the same order.
    public var systems: [String] { specs.map(\.system) }
    /// What a plain presentation reveals that a proof would not (linkable across presentations).
    public static let plainPresentationReveals = [
        "issuerAuth", "mobileSecurityObject", "deviceKey", "validityInfo", "valueDigests", "deviceSignature",
    ]
    /// What a proof reveals: the document type, the claims and their values, the proof's time, the
    /// reader's system id, and the issuer's document-signer certificate (shared by every credential
    /// that issuer key signed).
    public static let proofReveals = ["docType", "claims", "timestamp", "zkSystemId", "documentSignerCertificate"]

    package init(required: Bool, specs: [ZkSystemSpec], answer: ZeroKnowledgeAnswer) {
        self.required = required
        self.specs = specs
        self.answer = answer
    }
}

/// An alternative set from the request that the engine will never honour, and why. Shown in the
/// consent model and the explanation; the request is otherwise answered.
public struct IgnoredAlternative: Sendable, Hashable {
    /// Why the set is not honoured.
    public enum Reason: String, Sendable, Hashable {
        /// An element of the set lies outside the requested element's namespace.
        case leavesNamespace
        /// The set has more elements than `Configuration.maxAlternativeSetSize`.
        case tooLarge
        /// The set stands in for an element the DocRequest does not request.
        case elementNotRequested
    }
    /// The element the set was offered for.
    public let requested: ElementID
    /// The set as the reader sent it.
    public let set: [ElementID]
    /// Why it is not honoured.
    public let reason: Reason
}

/// A rule for which combinations of requested documents answer a request (an 18013-5 2nd edition
/// `UseCase`: one of its document sets must be answerable when it is mandatory).
package struct DocumentSetRule: Sendable {
    /// Whether one of the sets must be answerable for the request to be answered at all.
    package let mandatory: Bool
    /// Each set lists document indices; the first set whose every document is answerable is answered.
    package let documentSets: [[Int]]

    package init(mandatory: Bool, documentSets: [[Int]]) {
        self.mandatory = mandatory
        self.documentSets = documentSets
    }

    /// The rules of a DeviceRequest: its `useCases` (version 1.1 and later), none otherwise.
    package static func of(_ request: DeviceRequest) -> [DocumentSetRule] {
        guard request.isVersion11OrLater, let info = request.deviceRequestInfo else { return [] }
        return info.useCases.map { DocumentSetRule(mandatory: $0.mandatory, documentSets: $0.documentSets) }
    }
}

/// The request side of one requested document, prepared once and matched against every credential:
/// an ISO/IEC 18013-5 DocRequest (its ItemsRequest read in place), or a list of requested elements
/// with selection rules (a DCQL credential query).
package struct DocumentQuery: Sendable {
    /// Where the requested elements come from.
    enum Source: Sendable {
        /// An ItemsRequest, read in place (no `String` per element on the hot path).
        case itemsRequest(ItemsRequest)
        /// Elements listed by a front end, as bytes (no `String` per element on the hot path either).
        case listed(RequestedElementList)
    }

    /// What a query never changes once prepared, in one object: a query is handed from the request's
    /// check to the planner and into every plan, and a copy then costs one reference count, not one
    /// per member (an ItemsRequest alone holds a dozen).
    final class Core: Sendable {
        let docType: String
        let source: Source
        let alternatives: [(requested: ElementID, sets: [[ElementID]])]
        let ignored: [IgnoredAlternative]
        let maximumResponseSize: UInt64?
        let rules: ClaimRules?

        init(
            docType: String, source: Source, alternatives: [(requested: ElementID, sets: [[ElementID]])],
            ignored: [IgnoredAlternative], maximumResponseSize: UInt64?, rules: ClaimRules?
        ) {
            self.docType = docType
            self.source = source
            self.alternatives = alternatives
            self.ignored = ignored
            self.maximumResponseSize = maximumResponseSize
            self.rules = rules
        }
    }

    /// Position in the request (the DocRequest index, or the credential query's position).
    package let index: Int
    let core: Core
    package var docType: String { core.docType }
    var source: Source { core.source }
    /// The honoured alternatives (1.1 only): requested element → its admissible sets, in the reader's order.
    var alternatives: [(requested: ElementID, sets: [[ElementID]])] { core.alternatives }
    /// Sets refused by the rules below.
    var ignored: [IgnoredAlternative] { core.ignored }
    package var maximumResponseSize: UInt64? { core.maximumResponseSize }
    /// Selection rules (DCQL); nil: release what is held (ISO/IEC 18013-5).
    package var rules: ClaimRules? { core.rules }
    /// The reader's zero-knowledge ask (`requestInfo.zkRequest`), if any; its answer is the engine's.
    package var zeroKnowledge: ZeroKnowledgeOffer?
    /// How a proof request is answered; nil when no proof was asked (the usual case reads no offer).
    package var zeroKnowledgeAnswer: ZeroKnowledgeAnswer? { zeroKnowledge == nil ? nil : zeroKnowledge!.answer }

    init(
        index: Int, request: ItemsRequest, alternatives: [(requested: ElementID, sets: [[ElementID]])],
        ignored: [IgnoredAlternative]
    ) {
        self.index = index
        core = Core(
            docType: request.docType, source: .itemsRequest(request), alternatives: alternatives, ignored: ignored,
            maximumResponseSize: request.requestInfo?.maximumResponseSize, rules: nil)
        zeroKnowledge = request.requestInfo?.zkRequest.map {
            ZeroKnowledgeOffer(
                required: $0.required, specs: $0.systemSpecs.map(ZkSystemSpec.init),
                answer: .plainFallback(why: PresentmentError.Rule(ZeroKnowledgeRule.noProver)))
        }
    }

    /// A query for `elements` of `docType` under `rules` (front ends other than ISO/IEC 18013-5).
    /// `rules.values` must be empty or have one entry per element, and the claim sets valid positions.
    package init(index: Int, docType: String, elements: RequestedElementList, rules: ClaimRules) {
        precondition(rules.values.isEmpty || rules.values.count == elements.count)
        precondition(rules.claimSets?.allSatisfy { $0.allSatisfy { $0 >= 0 && $0 < elements.count } } ?? true)
        self.index = index
        core = Core(
            docType: docType, source: .listed(elements), alternatives: [], ignored: [], maximumResponseSize: nil,
            rules: rules)
        zeroKnowledge = nil
    }

    /// The number of requested elements.
    var elementCount: Int {
        switch core.source {
        case .itemsRequest(let r): r.elementCount
        case .listed(let l): l.count
        }
    }

    /// Calls `body` with each requested element's namespace and identifier bytes and IntentToRetain,
    /// in request order.
    @inline(__always)
    func forEachElement(
        // unsafe: the element names as views of the request's own bytes, valid during `body` only (no String per element).
        _ body: (_ nameSpace: UnsafeBufferPointer<UInt8>, _ identifier: UnsafeBufferPointer<UInt8>, _ intent: Bool)
            -> Void
    ) {
        switch core.source {
        case .itemsRequest(let r): r.forEachElement(body)
        case .listed(let l): l.forEachElement(body)
        }
    }

    /// The requested elements, in request order (for the consent model).
    var requestedElements: [RequestedElement] {
        switch core.source {
        case .listed(let l): return l.elements
        case .itemsRequest(let r):
            var out = [RequestedElement]()
            out.reserveCapacity(r.elementCount)
            // Through `nameSpaces`: well-known names come from the interned table, not a fresh String each.
            for ns in r.nameSpaces {
                for e in ns.elements {
                    out.append(RequestedElement(id: ElementID(ns.name, e.identifier), intentToRetain: e.intentToRetain))
                }
            }
            return out
        }
    }

    /// Prepares every DocRequest of `request`. Which alternative sets are admissible:
    ///
    /// - only in a 1.1 (or later) request (`requestInfo` is a 2nd-edition field);
    /// - only for an element the DocRequest requests (an entry for any other element could only widen
    ///   what is released);
    /// - at most `maxSetSize` elements per set (a set is released as a whole, so its size is what one
    ///   missing element can cost the holder);
    /// - every element in the requested element's namespace. ISO/IEC 18013-5:2025 §8.3.2.1.2.1
    ///   (DocRequestInfo `alternativeDataElements`, CDDL `ElementReference = [NameSpace,
    ///   DataElementIdentifier]`) gives each alternative its own namespace but, in the text available
    ///   to us, no rule that lets an alternative leave the requested element's namespace; we follow the
    ///   stricter reading: an alternative describes the same fact within the same namespace.
    ///
    /// A request repeating an element in `alternativeDataElements` is answered by its last entry.
    package static func prepare(_ request: DeviceRequest, maxSetSize: Int) -> [DocumentQuery] {
        var out = [DocumentQuery]()
        out.reserveCapacity(request.docRequests.count)
        let docRequests = request.docRequests
        for index in docRequests.indices {
            // The usual request (no alternatives) is read in place: no DocRequest or ItemsRequest copied
            // but the one the query keeps.
            guard request.isVersion11OrLater,
                let entries = docRequests[index].itemsRequest.requestInfo?.alternativeDataElements, !entries.isEmpty
            else {
                out.append(
                    DocumentQuery(index: index, request: docRequests[index].itemsRequest, alternatives: [], ignored: [])
                )
                continue
            }
            let ir = docRequests[index].itemsRequest
            var requested = Set<ElementID>()
            ir.forEachElement { ns, e, _ in
                requested.insert(ElementID(String(decoding: ns, as: UTF8.self), String(decoding: e, as: UTF8.self)))
            }
            var alternatives = [(requested: ElementID, sets: [[ElementID]])]()
            var ignored = [IgnoredAlternative]()
            for entry in entries {
                let target = ElementID(entry.requestedElement.nameSpace, entry.requestedElement.identifier)
                var sets = [[ElementID]]()
                for raw in entry.alternativeElementSets {
                    var set = [ElementID]()
                    for p in raw {
                        let e = ElementID(p.nameSpace, p.identifier)
                        if !set.contains(e) { set.append(e) }
                    }
                    let reason: IgnoredAlternative.Reason? =
                        !requested.contains(target)
                        ? .elementNotRequested
                        : set.contains(where: { $0.nameSpace != target.nameSpace })
                            ? .leavesNamespace
                            : set.count > maxSetSize ? .tooLarge : nil
                    if let reason {
                        ignored.append(IgnoredAlternative(requested: target, set: set, reason: reason))
                    } else {
                        sets.append(set)
                    }
                }
                alternatives.removeAll { $0.requested == target }
                if !sets.isEmpty { alternatives.append((target, sets)) }
            }
            out.append(DocumentQuery(index: index, request: ir, alternatives: alternatives, ignored: ignored))
        }
        return out
    }
}
