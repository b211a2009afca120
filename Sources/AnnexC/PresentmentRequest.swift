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

/// A stored credential that can answer a requested document, and what it can release.
public struct CandidateCredential: Sendable {
    /// The credential.
    public let credentialID: String
    /// Requested elements the credential holds (before the user's approval).
    public let releasable: [ElementID]
    /// Requested elements it does not hold and that no alternative covers.
    public let missing: [ElementID]
    /// For requested elements it lacks: the alternative elements (2nd-edition
    /// alternativeDataElements) it would release instead.
    public let substitutions: [ElementID: [ElementID]]
    /// `releasable` as indices into the credential's item table (ascending).
    let releasableItems: [Int]
    /// `substitutions` as item indices.
    let substitutionItems: [ElementID: [Int]]
}

/// One DocRequest as a consent UI shows it.
public struct RequestedDocument: Sendable {
    /// Index in `docRequests`.
    public let index: Int
    /// The docType.
    public let docType: String
    /// The requested elements, in request order.
    public let elements: [RequestedElement]
    /// alternativeDataElements: requested element → alternative sets.
    public let alternatives: [ElementID: [[ElementID]]]
    /// maximumResponseSize, if the reader set one.
    public let maximumResponseSize: UInt64?
    /// Stored credentials that can answer, best first.
    public let candidates: [CandidateCredential]
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
    /// The reader-authentication verdict.
    public let readerVerdict: ReaderVerdict
    /// The requested documents.
    public let documents: [RequestedDocument]
    /// What was checked, for debugging.
    public let explanation: Explanation
}

/// The user's per-element choice.
public enum Approval: Sendable, Hashable {
    /// Everything requested (the default).
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
/// anything beyond it is refused.
public struct ConsentedRequest: Sendable, Hashable {
    /// Consented elements per docType.
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
