#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MdocCBOR

/// One requested element.
public struct RequestedElement: Sendable, Hashable {
    /// Namespace and identifier.
    public let id: ElementID
    /// IntentToRetain (a UI hint).
    public let intentToRetain: Bool
}

/// A stored credential that can answer a requested document, and what it would release: the consent
/// screen's view of one `Planner` match.
public struct CandidateCredential: Sendable {
    /// The credential's identifier in the context.
    public let credentialID: String
    /// Requested elements the credential holds, in request order (before the user's approval).
    public let releasable: [ElementID]
    /// Requested elements it does not hold and that no admissible alternative set replaces.
    public let missing: [ElementID]
    /// Requested elements it lacks, each with the alternative set (18013-5 2nd edition
    /// `alternativeDataElements`) that would be released instead, in request order. A replacement is
    /// released only when each of its elements is itself approved (or under `.allRequested`).
    public let substitutions: [Substitution]
    /// The match behind this view (what `respond` plans from).
    let match: DocumentMatch

    init(_ m: DocumentMatch) {
        credentialID = m.credential.id
        releasable = m.held.map { m.credential.orderedItems[$0].id }
        missing = m.missing
        substitutions = m.substitutions.map(\.substitution)
        match = m
    }

    /// Every element this credential would release if everything shown were approved: the held
    /// requested elements and every replacement, each once, in request order.
    public var shownElements: [ElementID] {
        var out = releasable
        for s in substitutions { for e in s.replacement where !out.contains(e) { out.append(e) } }
        return out
    }
}

/// One DocRequest as a consent UI shows it.
public struct RequestedDocument: Sendable {
    /// Position of the DocRequest in `docRequests` (the key of `Approval.perDocument` and `respond(using:)`).
    public let index: Int
    /// The requested document type, e.g. `org.iso.18013.5.1.mDL`.
    public let docType: String
    /// The requested elements with their IntentToRetain, in request order.
    public let elements: [RequestedElement]
    /// The admissible alternative sets per requested element (1.1 `alternativeDataElements`), in the
    /// reader's order; the first one a credential fully holds replaces a missing element.
    public let alternatives: [ElementID: [[ElementID]]]
    /// Alternative sets the engine refuses to honour (outside the element's namespace, too large, or
    /// for an element not requested); shown so a reviewer sees what the reader tried.
    public let ignoredAlternatives: [IgnoredAlternative]
    /// maximumResponseSize in bytes, if the reader set one (a larger DeviceResponse is refused).
    public let maximumResponseSize: UInt64?
    /// Stored credentials that can answer, best first (the first is the default choice).
    public let candidates: [CandidateCredential]
    /// Who asks for this document: the strongest verdict among the reader signatures covering it (its
    /// own readerAuth and every readerAuthAll), or `.notAuthenticated` when none does.
    public let readerVerdict: ReaderVerdict
    /// The signatures covering this document (`docRequests[i].readerAuth`, `readerAuthAll[j]`).
    public let readerAuthentication: [String]

    init(_ q: DocumentQuery, candidates: [DocumentMatch], readerVerdict: ReaderVerdict, readerAuthentication: [String]) {
        self.readerVerdict = readerVerdict
        self.readerAuthentication = readerAuthentication
        index = q.index
        docType = q.docType
        var elements = [RequestedElement]()
        elements.reserveCapacity(q.request.elementCount)
        // Through `nameSpaces`: well-known names come from the interned table, not a fresh String each.
        for ns in q.request.nameSpaces {
            for e in ns.elements { elements.append(RequestedElement(id: ElementID(ns.name, e.identifier), intentToRetain: e.intentToRetain)) }
        }
        self.elements = elements
        var alternatives = [ElementID: [[ElementID]]]()
        for a in q.alternatives { alternatives[a.requested] = a.sets }
        self.alternatives = alternatives
        ignoredAlternatives = q.ignored
        maximumResponseSize = q.maximumResponseSize
        self.candidates = candidates.map(CandidateCredential.init)
    }
}

/// Everything a consent screen must show, produced by `AnnexCEngine.parse`. Pass it back to
/// `respond(to:using:approving:consented:format:)`.
public struct PresentmentRequest: Sendable {
    /// The origin, as serialized into the transcript.
    public let origin: Origin
    /// The framing the request came in.
    public let framing: RequestFraming
    /// The SessionTranscript.
    public let sessionTranscript: SessionTranscript
    /// The reader's encryption parameters.
    public let encryptionInfo: EncryptionInfo
    /// The DeviceRequest.
    public let deviceRequest: DeviceRequest
    /// The weakest of the documents' reader verdicts: what a one-line summary may show. A consent
    /// screen shows each document's own `readerVerdict`.
    public let readerVerdict: ReaderVerdict
    /// Each distinct reader certificate that signed the request, in signature order, with its verdict.
    public let readers: [ReaderVerdict]
    /// True when different reader certificates signed parts of the request: the consent screen must
    /// say who asks for what.
    public var signedByDifferentReaders: Bool { readers.count > 1 }
    /// The requested documents.
    public let documents: [RequestedDocument]
    /// What was checked, for debugging.
    public let explanation: Explanation
}

extension PresentmentRequest {
    /// What a consent screen shows when the user keeps the default choices: per docType, every
    /// requested element and every substitute of the candidate `respond(to:using:)` would use. Pass
    /// it (or the platform's own summary) as `consented` to have anything beyond it refused.
    public func consentSummary(using: [Int: String] = [:]) -> ConsentedRequest {
        var out = [String: Set<ElementID>]()
        for d in documents {
            var shown = Set(d.elements.map(\.id))
            let chosen = using[d.index].flatMap { id in d.candidates.first { $0.credentialID == id } } ?? d.candidates.first
            if let chosen { for s in chosen.substitutions { shown.formUnion(s.replacement) } }
            out[d.docType, default: []].formUnion(shown)
        }
        return ConsentedRequest(documents: out)
    }
}

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

    func allows(_ e: ElementID, document: Int) -> Bool {
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

/// How the sealed response is framed.
public enum ResponseFormat: String, Sendable, Hashable, CaseIterable {
    /// Raw CBOR for a `data` object request (iOS), the Android envelope for the other framings.
    case automatic
    /// The CBOR `EncryptedResponse` (iOS `responseData`).
    case encryptedResponseCBOR
    /// `{"response": "<base64url>"}` (the DC API `data` object).
    case responseJSON
    /// `{"protocol":"org-iso-mdoc","data":{"response":"<base64url>"}}` (Android `DigitalCredential`).
    case androidEnvelope
}

/// What to do with requested elements the credential does not hold.
public enum MissingElementPolicy: Sendable, Hashable {
    /// Leave them out silently (Multipaz behaviour, the default).
    case omit
    /// Add `errors: {ns: {elem: 0}}` per document and `documentErrors` for optional documents not answered.
    case report
}
