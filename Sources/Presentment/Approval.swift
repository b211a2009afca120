/// The user's choice: which documents are presented and which of their elements are released. An
/// approval only narrows what the consent model shows: approving an element that was not shown
/// releases nothing, and approving a requested element never approves the alternative set that would
/// replace it (each replacement element must be approved itself).
///
/// A document is presented only when the approval covers it:
///
/// | approval | covers document `i` when |
/// | --- | --- |
/// | `.allRequested` | it releases an element, or it asks for none (a DCQL query without claims) and may be presented without elements |
/// | `.elements(s)` | it releases an element of `s` (an empty `s` presents nothing) |
/// | `.perDocument(m)` | `m[i]` is present and it releases an element of `m[i]`; or `m[i]` is the empty set and the document may be presented without elements (`RequestedDocument.presentableWithoutElements`): docType, issuerAuth and device signature, no element |
///
/// So "approve nothing" (`.elements([])`, `.perDocument([:])`) answers nothing, and presenting a
/// document with no elements (which still reveals the issuer's signature, validity and the device
/// public key) needs the explicit document-level consent `.perDocument([i: []])` (or
/// `.allRequested` for a query that asks for no element at all).
public enum Approval: Sendable, Hashable {
    /// Everything shown: every requested element held and every substitution (the default).
    case allRequested
    /// Only these elements, in every document.
    case elements(Set<ElementID>)
    /// Per document index, only these elements; a document whose index is absent is not presented.
    case perDocument([Int: Set<ElementID>])

    /// Whether element `e` of document `document` may be released. `e` is evaluated only when the
    /// approval names elements (`.allRequested` allows any: a caller reading it out of a credential's
    /// items pays nothing then).
    package func allows(_ e: @autoclosure () -> ElementID, document: Int) -> Bool {
        switch self {
        case .allRequested: true
        case .elements(let s): s.contains(e())
        case .perDocument(let m): m[document]?.contains(e()) ?? false
        }
    }

    /// Whether document `document`, releasing `count` elements under this approval, is presented (the
    /// table above). `asksForNothing`: the query names no element; `presentableEmpty`: the document
    /// may go out with no element at all.
    package func covers(document: Int, releasing count: Int, asksForNothing: Bool, presentableEmpty: Bool) -> Bool {
        switch self {
        case .allRequested: return count > 0 || (asksForNothing && presentableEmpty)
        case .elements: return count > 0
        case .perDocument(let m):
            guard let approved = m[document] else { return false }
            return count > 0 || (approved.isEmpty && presentableEmpty)
        }
    }
}

/// What the platform showed the user (docType → elements). When given, a raw request asking for
/// anything beyond it, or a response that would release an element beyond it (a substitute
/// included), is refused with `consentMismatch`.
public struct ConsentedRequest: Sendable, Hashable {
    /// Consented elements per docType: requested elements and any substitutes shown.
    public var documents: [String: Set<ElementID>]
    /// Creates a summary.
    public init(documents: [String: Set<ElementID>]) { self.documents = documents }
}

/// What to do with requested elements the credential does not hold.
public enum MissingElementPolicy: Sendable, Hashable {
    /// Leave them out silently (Multipaz behaviour, the default).
    case omit
    /// Add `errors: {ns: {elem: 0}}` per document and `documentErrors` for optional documents not answered.
    case report
}
