#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR

/// One requested element.
public struct RequestedElement: Sendable, Hashable {
    /// Namespace and DataElementIdentifier as the request names them.
    public let id: ElementID
    /// Whether the verifier says it will retain the value (ISO/IEC 18013-5 `IntentToRetain`, DCQL
    /// `intent_to_retain`); nil when the request does not say (a DCQL claim without the member).
    public let intentToRetain: Bool?

    /// Creates a requested element.
    package init(id: ElementID, intentToRetain: Bool?) {
        self.id = id
        self.intentToRetain = intentToRetain
    }
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
    /// When the document is answered with a proof: the claims and their values as the proof reveals
    /// them in plaintext; empty otherwise.
    public let provenClaims: [ProvenClaim]
    /// The match behind this view (what `respond` plans from).
    let match: DocumentMatch

    init(_ m: DocumentMatch, proven: Bool = false) {
        credentialID = m.credential.id
        releasable = m.held.map { m.credential.orderedItems[$0].id }
        missing = m.missing
        substitutions = m.substitutions.map(\.substitution)
        provenClaims =
            proven
            ? releasable.compactMap { id in
                m.credential.element(id).map { ProvenClaim(element: id, value: CBORDiagnostic.describe($0)) }
            } : []
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

/// A claim a proof discloses in plaintext, with its value as the credential holds it.
public struct ProvenClaim: Sendable, Hashable {
    /// The element.
    public let element: ElementID
    /// Its value in CBOR diagnostic notation (e.g. `true`).
    public let value: String
}

/// A stored credential of the requested docType that cannot answer a query, and why (shown so the
/// holder sees the request even when nothing can be released; never sent to the verifier).
public struct ExcludedCredential: Sendable, Hashable {
    /// Why.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// The verifier's issuer or algorithm rules (`trusted_authorities`, `vp_formats_supported`)
        /// do not admit it.
        case issuerNotAccepted
        /// A held element's value is not among the verifier's `values` for it.
        case valueNotAccepted
        /// It does not hold every claim of any acceptable claim set.
        case claimsNotHeld
        /// The holder cancelled it (revoked or removed by the host app): never presented.
        case cancelled
        /// Its validity (MSO `validUntil`) ended before the engine's time.
        case expired
        /// Its validity (MSO `validFrom`) starts after the engine's time.
        case notYetValid

        /// Whether the verifier's query rules excluded it (the others are the credential's own state).
        package var byQueryRules: Bool { self == .valueNotAccepted || self == .claimsNotHeld }
    }
    /// The credential's identifier in the context.
    public let credentialID: String
    /// Why it cannot answer.
    public let reason: Reason

    /// Creates an entry.
    package init(credentialID: String, reason: Reason) {
        self.credentialID = credentialID
        self.reason = reason
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
    /// The acceptable combinations of `elements`, most preferred first (DCQL `claim_sets`): a
    /// credential releases the first one it holds, never more. Empty: all of `elements` (under DCQL
    /// every one is then required) or, for ISO/IEC 18013-5, whatever is held.
    public let claimSets: [[ElementID]]
    /// Values an element must have to count as held (DCQL `values`); an element not listed: any value.
    public let valueConstraints: [ElementID: [ClaimValue]]
    /// The admissible alternative sets per requested element (1.1 `alternativeDataElements`), in the
    /// reader's order; the first one a credential fully holds replaces a missing element.
    public let alternatives: [ElementID: [[ElementID]]]
    /// Alternative sets the engine refuses to honour (outside the element's namespace, too large, or
    /// for an element not requested); shown so a reviewer sees what the reader tried.
    public let ignoredAlternatives: [IgnoredAlternative]
    /// maximumResponseSize in bytes, if the reader set one (a larger DeviceResponse is refused).
    public let maximumResponseSize: UInt64?
    /// The reader would accept a zero-knowledge proof for this document (`zkRequest` with
    /// `zkRequired: false`); the answer is a plain presentation, which reveals what
    /// `ZeroKnowledgeOffer.plainPresentationReveals` lists. Nil when the reader did not ask.
    public let zeroKnowledge: ZeroKnowledgeOffer?
    /// How a proof request is answered; nil when no proof was asked (the usual case reads no offer).
    package var zeroKnowledgeAnswer: ZeroKnowledgeAnswer? { zeroKnowledge == nil ? nil : zeroKnowledge!.answer }
    /// Whether the holder may present this document with no element at all, by document-level consent
    /// (`Approval.perDocument([index: []])`): true for an ISO/IEC 18013-5 DocRequest and for a DCQL
    /// query without claims, false for a query whose claims must be released. Such a presentation
    /// still reveals the docType, the issuer's signature and MSO (validity, the device public key) and
    /// a device signature.
    public let presentableWithoutElements: Bool
    /// Stored credentials that can answer, best first (the first is the default choice).
    public let candidates: [CandidateCredential]
    /// Usable credentials of the docType that the query's rules exclude, with why (DCQL only).
    public let excluded: [ExcludedCredential]
    /// Who asks for this document: the strongest verdict among the reader signatures covering it (its
    /// own readerAuth and every readerAuthAll), or `.notAuthenticated` when none does.
    public let readerVerdict: ReaderVerdict
    /// The signatures covering this document (`docRequests[i].readerAuth`, `readerAuthAll[j]`).
    public let readerAuthentication: [String]

    package init(
        _ q: DocumentQuery, candidates: [DocumentMatch], excluded: [ExcludedCredential] = [],
        readerVerdict: ReaderVerdict, readerAuthentication: [String]
    ) {
        self.excluded = excluded
        self.readerVerdict = readerVerdict
        self.readerAuthentication = readerAuthentication
        index = q.index
        docType = q.docType
        let requested = q.requestedElements
        elements = requested
        if let rules = q.rules {
            claimSets = rules.claimSets?.map { $0.map { requested[$0].id } } ?? []
            var constraints = [ElementID: [ClaimValue]]()
            for (k, v) in rules.values.enumerated() { if let v { constraints[requested[k].id] = v } }
            valueConstraints = constraints
        } else {
            claimSets = []
            valueConstraints = [:]
        }
        var alternatives = [ElementID: [[ElementID]]]()
        for a in q.alternatives { alternatives[a.requested] = a.sets }
        self.alternatives = alternatives
        ignoredAlternatives = q.ignored
        maximumResponseSize = q.maximumResponseSize
        zeroKnowledge = q.zeroKnowledge
        presentableWithoutElements = q.rules == nil || q.elementCount == 0
        let proven: Bool
        if case .proof? = q.zeroKnowledge?.answer { proven = true } else { proven = false }
        self.candidates = candidates.map { CandidateCredential($0, proven: proven) }
    }
}

/// The protocol-neutral part of a parsed request: who asks, from which origin, and per requested
/// document what each stored credential would release. `PresentmentRequest` shows it beside the
/// protocol's details; the engine plans from it.
@usableFromInline struct ConsentModel: Sendable {
    let origin: Origin
    let protocolIdentifier: String
    let readerVerdict: ReaderVerdict
    let readers: [ReaderVerdict]
    let signatures: [RequestSignature]
    let documents: [RequestedDocument]
    let sessionTranscriptBytes: [UInt8]
    let documentSets: [DocumentSetRule]
}

/// Everything a consent screen must show, whatever protocol the request came in: who asks, from which
/// origin, and per requested document what each stored credential would release; `details` says what
/// the protocol itself carried (typed: `Details` is the front end's own details type, or the facade's
/// enum of them). Produced by `parse`, answered by `respond`.
public struct PresentmentRequest<Details: Sendable>: Sendable {
    /// The protocol-neutral part, which the engine plans from.
    @usableFromInline let model: ConsentModel
    /// What the protocol carried: its framing, keys, nonce, transcript inputs.
    public let details: Details
    /// Why this protocol's entry is the one answered, when the page offered several.
    public package(set) var protocolChoice: ProtocolChoice?
    /// The engine's time when it is not the system's (a clock fixed for testing, or one more than
    /// `clockTolerance` away from the system's): credentials were judged valid or not at this time.
    public package(set) var fixedClock: Date?
    /// How far the engine's clock may be from the system's before the consent model shows it, in seconds.
    public static var clockTolerance: Double { 300 }

    /// The requesting origin, as serialized into the SessionTranscript.
    public var origin: Origin { model.origin }
    /// The presentation protocol the request came in, as the Digital Credentials API names it (e.g.
    /// `org-iso-mdoc`, `openid4vp-v1-signed`).
    public var protocolIdentifier: String { model.protocolIdentifier }
    /// The weakest of the documents' reader verdicts: what a one-line summary may show. A consent
    /// screen shows each document's own `readerVerdict`.
    public var readerVerdict: ReaderVerdict { model.readerVerdict }
    /// Each distinct reader certificate that signed the request, in signature order, with its verdict.
    public var readers: [ReaderVerdict] { model.readers }
    /// Every signature over the request that verified, in request order, with its signer and verdict.
    public var signatures: [RequestSignature] { model.signatures }
    /// True when different reader certificates signed parts of the request: the consent screen must
    /// say who asks for what.
    public var signedByDifferentReaders: Bool { model.readers.count > 1 }
    /// The requested documents, in request order.
    public var documents: [RequestedDocument] { model.documents }
    /// The CBOR-encoded SessionTranscript the device signatures of the answer cover.
    public var sessionTranscriptBytes: [UInt8] { model.sessionTranscriptBytes }
    /// Which combinations of documents answer the request (1.1 use cases, DCQL credential sets);
    /// empty: every document.
    package var documentSets: [DocumentSetRule] { model.documentSets }

    /// Assembles a request (the engine only).
    @usableFromInline init(model: ConsentModel, details: Details) {
        self.model = model
        self.details = details
    }

    /// The same request with other details (the facade wraps a front end's details in its enum and
    /// unwraps them to answer).
    package func withDetails<D: Sendable>(_ details: D) -> PresentmentRequest<D> {
        var r = PresentmentRequest<D>(model: model, details: details)
        r.protocolChoice = protocolChoice
        return r
    }
}

/// Which entry of a page's request is answered, and why (the rule of `DigitalCredentialsEngine`).
public struct ProtocolChoice: Sendable, Hashable {
    /// Why.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// The first entry in the preference's order (later entries were not considered).
        case preferred
        /// An earlier entry in the preference's order cannot be answered from the stored credentials
        /// (no usable credential, or not satisfiable as a whole), so this one is answered.
        case preferredNotAnswerable
        /// No entry can be answered from the stored credentials; this is the first one, shown with
        /// nothing releasable (declining it gives the page the refusal it gets when the holder declines).
        case noneAnswerable
    }
    /// The protocol identifiers of the entries considered, in order (the chosen one among them).
    public let considered: [String]
    /// Why this entry was chosen.
    public let reason: Reason
    /// The protocol identifiers of the entries considered before this one and passed over that asked
    /// for a zero-knowledge proof (they could not be answered from the stored credentials): a consent
    /// screen says that the page asked for a proof and is answered without one.
    public let passedOverProofRequests: [String]

    /// Creates a choice (the facade only).
    package init(considered: [String], reason: Reason, passedOverProofRequests: [String] = []) {
        self.considered = considered
        self.reason = reason
        self.passedOverProofRequests = passedOverProofRequests
    }
}

extension PresentmentRequest {
    /// What a consent screen shows when the user keeps the default choices: per docType, every
    /// requested element and every substitute of the candidate `respond(to:using:)` would use. Pass
    /// it (or the platform's own summary) as `consented` to have anything beyond it refused.
    public func consentSummary(using: [Int: String] = [:]) -> ConsentedRequest {
        var out = [String: Set<ElementID>]()
        for d in documents {
            var shown = Set(d.elements.map(\.id))
            let chosen =
                using[d.index].flatMap { id in d.candidates.first { $0.credentialID == id } } ?? d.candidates.first
            if let chosen { for s in chosen.substitutions { shown.formUnion(s.replacement) } }
            out[d.docType, default: []].formUnion(shown)
        }
        return ConsentedRequest(documents: out)
    }
}
