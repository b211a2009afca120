/// The user's per-element choice. An approval only narrows what the consent model shows: approving an
/// element that was not shown releases nothing, and approving a requested element never approves the
/// alternative set that would replace it (each replacement element must be approved itself).
public enum Approval: Sendable, Hashable {
    /// Everything shown: every requested element held and every substitution (the default).
    case allRequested
    /// Only these elements, in every document.
    case elements(Set<ElementID>)
    /// Per document index, only these elements.
    case perDocument([Int: Set<ElementID>])

    package func allows(_ e: ElementID, document: Int) -> Bool {
        switch self {
        case .allRequested: true
        case .elements(let s): s.contains(e)
        case .perDocument(let m): m[document]?.contains(e) ?? false
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
