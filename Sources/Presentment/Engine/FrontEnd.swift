#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The contract each presentation protocol fulfils: a front end reads its entry of a request into the
/// engine's protocol-neutral terms (queries, document-set rules, transcript bytes, reader verdicts) and
/// answers a settled plan in its own wire format. Everything else (credential checks, the one planner
/// call, building and signing the DeviceResponse, the self-check, the reader's size limit, approvals
/// and consent) is `PresentmentEngine`'s, the same for every protocol.
///
/// Adding a protocol means writing one type conforming to this (in its own module) and registering
/// it with the facade (`DigitalCredentials`), which routes entries to it by the identifiers it
/// declares (`DCAPIFrontEnd.protocolIdentifiers`).
///
/// An SPI for front-end authors (`@_spi(FrontEnd)`), not API for wallet backends: public only so that
/// the engine's generic entry points can be specialized for each front end in the facade's module.
@_spi(FrontEnd) public protocol PresentmentFrontEnd: Sendable {
    /// What the facade hands over: the protocol's entry of a request as it arrived.
    associatedtype Entry
    /// What the protocol carried, kept to answer and shown to the holder (typed; never `any`).
    associatedtype Details: Sendable

    /// Checks an entry: everything the reader controls, before any consent is asked (its framing,
    /// keys, the request and its bounds, every signature, then the holder's trust policy through
    /// `environment.trust`). Records what it checked in `trace` when one is given.
    /// - Throws: the refusal, by the rule of this front end (or of the layer) that refused.
    func check(_ entry: Entry, origin: Origin, in environment: CheckEnvironment, trace: inout CheckTrace?)
        throws(PresentmentError) -> CheckedRequest<Details>

    /// How the answer is cut into DeviceResponses.
    var responseLayout: ResponseLayout { get }

    /// Seals and frames the built DeviceResponses (in `responses`' order).
    /// - Throws: `sealingFailed` by this front end's sealing rule.
    func answer(_ responses: [BuiltResponse], details: Details, format: ResponseFormat) throws(PresentmentError)
        -> Data
}

/// What a front end checks an entry with.
@_spi(FrontEnd) public struct CheckEnvironment: Sendable {
    /// The bounds every request is held to.
    package let limits: RequestLimits
    /// The holder's trust policy at the engine's clock: one verdict per certificate, every protocol.
    package let trust: ReaderTrustEvaluator
    /// Whether the consent model's per-document verdicts and signature coverage are wanted (`parse`),
    /// or only the refusals (`accept`).
    package let consent: Bool

    /// The engine's clock reading for this request.
    package var now: Date { trust.now }

    package init(limits: RequestLimits, trust: ReaderTrustEvaluator, consent: Bool) {
        self.limits = limits
        self.trust = trust
        self.consent = consent
    }
}

/// What a front end hands the engine after checking its entry: the protocol-neutral part the engine
/// plans from, and the front end's typed details.
@_spi(FrontEnd) public struct CheckedRequest<Details: Sendable>: Sendable {
    /// What the engine plans from.
    public let entry: CheckedEntry
    /// The front end's details.
    public let details: Details

    /// Inlinable: a front end's call is specialized for its `Details` (an opaque generic call looked
    /// up the type's metadata on every request).
    @inlinable package init(_ entry: CheckedEntry, details: Details) {
        self.entry = entry
        self.details = details
    }
}

/// The protocol-neutral part of a checked request.
@_spi(FrontEnd) public struct CheckedEntry: Sendable {
    /// The protocol identifier the entry came under.
    package let protocolIdentifier: String
    /// One query per requested document, `index` = its position.
    package let queries: [DocumentQuery]
    /// Which combinations of documents answer the request; empty: every document.
    package let documentSets: [DocumentSetRule]
    /// The CBOR SessionTranscript the device signatures cover.
    package let sessionTranscript: [UInt8]
    /// Who signed what.
    package let authentication: ReaderAuthentication

    package init(
        protocolIdentifier: String, queries: [DocumentQuery], documentSets: [DocumentSetRule],
        sessionTranscript: [UInt8], authentication: ReaderAuthentication
    ) {
        self.protocolIdentifier = protocolIdentifier
        self.queries = queries
        self.documentSets = documentSets
        self.sessionTranscript = sessionTranscript
        self.authentication = authentication
    }
}

/// How a front end's answer is cut into DeviceResponses.
@_spi(FrontEnd) public enum ResponseLayout: Sendable, Hashable {
    /// One DeviceResponse answering every answered document (Annex C), reporting requested elements
    /// that are not held as the policy says.
    case single(missingElements: MissingElementPolicy)
    /// One DeviceResponse per answered document, in document order (OpenID4VP: one presentation per
    /// credential query); elements not held are left out.
    case perDocument
}

/// One DeviceResponse the engine built, signed and (when configured) self-checked.
@_spi(FrontEnd) public struct BuiltResponse: Sendable {
    /// The DeviceResponse, in the pieces the builder left (large verbatim items referred to, not copied).
    package let response: DeviceResponseBytes
    /// The indexes of the documents it answers, ascending.
    package let documents: [Int]
}

/// How the answer is framed for the platform, in every protocol.
public enum ResponseFormat: String, Sendable, Hashable, CaseIterable {
    /// What the request's framing implies. Annex C: its binary EncryptedResponse for a bare `data`
    /// object (iOS), `{"protocol", "data"}` for the other framings (Android). OpenID4VP: its data
    /// object for a bare or `{"protocol", "data"}` request, `{"protocol", "data"}` for request lists.
    case automatic
    /// The protocol's response data object: `{"response": "<base64url EncryptedResponse>"}` (Annex C),
    /// `{"vp_token": {…}}` or `{"response": "<JWE>"}` (OpenID4VP).
    case dataObject
    /// `{"protocol": "<identifier>", "data": <data object>}` (Android `DigitalCredential`).
    case protocolAndData
    /// The protocol's binary response where it has one: Annex C's CBOR EncryptedResponse (iOS
    /// `responseData`). A protocol whose response is JSON (OpenID4VP) answers with its data object.
    case binary
}

/// What a front end checked, step by step, for an explanation (`explain`, `mdoc-respond inspect`):
/// recorded as the checks run, so a refused request still shows how far it got. Holds structure bytes
/// and certificate subjects, never element values or keys.
public struct CheckTrace: Sendable {
    /// One protocol structure the checks read or derived, with its exact bytes.
    public struct Structure: Sendable, Hashable {
        /// Its name in the protocol's specification (`dcapiInfo`, `DeviceRequest`,
        /// `OpenID4VPDCAPIHandoverInfo`, `SessionTranscript`, …).
        public let name: String
        /// Its bytes (CBOR for every structure named so far).
        public let bytes: [UInt8]
    }

    /// One reader or verifier signature that verified, and what the holder's policy made of its signer.
    public struct SignatureCheck: Sendable, Hashable {
        /// The signature, its signer and verdict.
        public let signature: RequestSignature
        /// Its algorithm (`ES256`, `ESP256`, …).
        public let algorithm: String
        /// The bytes it was verified over (ReaderAuthenticationBytes, or the JWS signing input).
        public let signedBytes: [UInt8]
        /// The rule by which the holder's policy refused this signer, if it did.
        public let refusal: PresentmentError.Rule?

        package init(
            _ signature: RequestSignature, algorithm: String, signedBytes: [UInt8], refusal: PresentmentError.Rule?
        ) {
            self.signature = signature
            self.algorithm = algorithm
            self.signedBytes = signedBytes
            self.refusal = refusal
        }
    }

    /// The structures, in the order the checks reached them.
    public private(set) var structures: [Structure] = []
    /// Every signature that verified, in request order (a signature that does not verify refuses the
    /// request before any is recorded).
    public package(set) var signatures: [SignatureCheck] = []

    package init() {}

    /// The structure named `name`, if the checks reached it.
    public func structure(_ name: String) -> [UInt8]? { structures.first { $0.name == name }?.bytes }

    package mutating func record(_ name: String, _ bytes: [UInt8]) {
        structures.append(Structure(name: name, bytes: bytes))
    }
}
