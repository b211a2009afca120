#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import AnnexC
import DCAPIFraming
import HPKE
import MdocCBOR
import Presentment
import WebEncoding

/// The verifier's side of ISO/IEC 18013-7 Annex C, for tests, conformance and debugging: builds
/// requests the way a web page does (`makeRequest`) and opens and verifies responses the way a careful
/// verifier does (`openResponse`). Wallet backends that only answer requests do not link it.
public enum AnnexCReader {
    /// A DeviceRequest version this reader writes (ISO/IEC 18013-5 §8.3.2.1.2.1).
    public enum Version: String, Sendable, Hashable, CaseIterable {
        /// The first edition's requests.
        case v1_0 = "1.0"
        /// The second edition's: `deviceRequestInfo` (use cases), `readerAuthAll`, `requestInfo`
        /// (alternatives, maximumResponseSize) are honoured.
        case v1_1 = "1.1"
    }

    /// One element to request, with its IntentToRetain (a UI hint for the holder).
    public struct ElementRequest: Sendable, Hashable {
        /// Namespace and DataElementIdentifier of the element asked for.
        public var element: ElementID
        /// Whether the reader means to keep the value after the transaction.
        public var intentToRetain: Bool
        /// Creates an element request.
        public init(_ element: ElementID, intentToRetain: Bool = false) {
            self.element = element
            self.intentToRetain = intentToRetain
        }
    }

    /// A 2nd-edition `alternativeDataElements` entry: sets of elements any one of which may stand in
    /// for `requested` when the holder lacks it.
    public struct AlternativeElements: Sendable, Hashable {
        /// The requested element the sets replace.
        public var requested: ElementID
        /// The alternative sets, in preference order.
        public var sets: [[ElementID]]
        /// Creates an entry replacing `requested` with any one of `sets` (each set is released whole).
        public init(_ requested: ElementID, _ sets: [[ElementID]]) {
            self.requested = requested
            self.sets = sets
        }
    }

    /// One DocRequest to write: its docType, elements and 2nd-edition `requestInfo` fields.
    public struct DocumentRequest: Sendable {
        /// The document type, e.g. `org.iso.18013.5.1.mDL`.
        public var docType: String
        /// The elements, in request order.
        public var elements: [ElementRequest]
        /// 2nd-edition `alternativeDataElements` (sent only in a 1.1 request's `requestInfo`).
        public var alternatives: [AlternativeElements]
        /// 2nd-edition `maximumResponseSize` in bytes.
        public var maximumResponseSize: UInt64?
        /// A zero-knowledge ask (`requestInfo.zkRequest`): the proof systems accepted, and whether only
        /// a proof answers.
        public var zkRequest: ZeroKnowledgeAsk?

        /// Creates a document request.
        public init(
            docType: String, elements: [ElementRequest], alternatives: [AlternativeElements] = [],
            maximumResponseSize: UInt64? = nil, zkRequest: ZeroKnowledgeAsk? = nil
        ) {
            self.docType = docType
            self.elements = elements
            self.alternatives = alternatives
            self.maximumResponseSize = maximumResponseSize
            self.zkRequest = zkRequest
        }
    }

    /// `requestInfo.zkRequest`: `{ "systemSpecs": [+ ZkSystemSpec], "zkRequired": bool }`.
    public struct ZeroKnowledgeAsk: Sendable {
        /// The systems accepted, in preference order.
        public var specs: [ZkSystemSpec]
        /// Only a proof answers.
        public var required: Bool
        /// Creates an ask.
        public init(specs: [ZkSystemSpec], required: Bool) {
            self.specs = specs
            self.required = required
        }
    }

    /// A reader key and its certificate chain (leaf first).
    public struct ReaderIdentity: Sendable {
        /// The reader's signing key.
        public var signer: SoftwareSigner
        /// The x5chain sent with each signature, leaf first.
        public var chain: [Certificate]
        /// Creates an identity.
        public init(signer: SoftwareSigner, chain: [Certificate]) {
            self.signer = signer
            self.chain = chain
        }
    }

    /// How the reader signs its request.
    public enum Signing: Sendable {
        /// No reader authentication.
        case none
        /// A readerAuth per DocRequest.
        case perDocument(signer: SoftwareSigner, chain: [Certificate])
        /// One readerAuthAll over all DocRequests (version 1.1).
        case all(signer: SoftwareSigner, chain: [Certificate])
        /// Per DocRequest its own reader or none (nil), and optionally a readerAuthAll: requests signed
        /// by several readers, or only in part.
        case custom(perDocument: [ReaderIdentity?], all: ReaderIdentity?)

        /// The reader signing DocRequest `i`, if any.
        func documentSigner(_ i: Int) -> ReaderIdentity? {
            switch self {
            case .none, .all: nil
            case .perDocument(let s, let c): ReaderIdentity(signer: s, chain: c)
            case .custom(let each, _): i < each.count ? each[i] : nil
            }
        }

        /// The readerAuthAll signer, if any.
        var allSigner: ReaderIdentity? {
            switch self {
            case .none, .perDocument: nil
            case .all(let s, let c): ReaderIdentity(signer: s, chain: c)
            case .custom(_, let all): all
            }
        }
    }

    /// A 1.1 use case: which combinations of documents answer it.
    public struct UseCase: Sendable {
        /// Whether one of the sets must be answerable for the request to be answered.
        public var mandatory: Bool
        /// Each set lists indices into the request's documents that together answer the use case.
        public var documentSets: [[Int]]
        /// Creates a use case (indices are written as given: a wallet refuses a request whose indices
        /// are out of range, which is how tests build such requests).
        public init(mandatory: Bool, documentSets: [[Int]]) {
            self.mandatory = mandatory
            self.documentSets = documentSets
        }
    }

    /// A built request and what the reader keeps to open the answer.
    public struct BuiltRequest: Sendable {
        /// The raw request JSON in the chosen framing.
        public let rawRequest: Data
        /// The reader's HPKE private key (keep it to open the response).
        public let recipientKey: HPKE.PrivateKey
        /// The encryptionInfo string exactly as sent.
        public let encryptionInfo: String
        /// The deviceRequest string as sent.
        public let deviceRequest: String
        /// The origin the request is made from.
        public let origin: Origin
        /// What was requested, for checking that only requested elements come back.
        public let documents: [DocumentRequest]

        /// Reassembles a request that was built earlier (e.g. stored in TestVectors) for opening its answer.
        public init(
            rawRequest: Data, recipientKey: HPKE.PrivateKey, encryptionInfo: String, deviceRequest: String,
            origin: Origin, documents: [DocumentRequest]
        ) {
            self.rawRequest = rawRequest
            self.recipientKey = recipientKey
            self.encryptionInfo = encryptionInfo
            self.deviceRequest = deviceRequest
            self.origin = origin
            self.documents = documents
        }
    }

    /// What the holder's side is known to have held, shown and approved: lets a test hold a response
    /// to exactly what the holder agreed to, not only to what the reader asked for.
    public struct HolderConsent: Sendable {
        /// docType → every element the answering credential holds.
        public var held: [String: Set<ElementID>]
        /// docType → the elements the holder approved; nil when everything shown was approved.
        public var approved: [String: Set<ElementID>]?
        /// The largest alternative set the wallet may honour (its `maxAlternativeSetSize`).
        public var maxAlternativeSetSize: Int
        /// Creates a record; `maxAlternativeSetSize` must match the wallet configuration used (default 6).
        public init(
            held: [String: Set<ElementID>], approved: [String: Set<ElementID>]? = nil, maxAlternativeSetSize: Int = 6
        ) {
            self.held = held
            self.approved = approved
            self.maxAlternativeSetSize = maxAlternativeSetSize
        }
    }

    /// One disclosed element and its value.
    public struct DisclosedElement: Sendable {
        /// Namespace and DataElementIdentifier as disclosed in the IssuerSignedItem.
        public let element: ElementID
        /// The DataElementValue exactly as the issuer signed it (digest-checked against the MSO).
        public let value: CBORItem
    }

    /// One verified document and the elements it disclosed.
    public struct VerifiedDocument: Sendable {
        /// The docType, checked equal to the MSO's and to the DocRequest it answers.
        public let docType: String
        /// Disclosed elements with their values, in response order.
        public let elements: [DisclosedElement]
        /// The document signer certificate's subject (RFC 2253).
        public let documentSigner: String
        /// The MSO's validUntil (nil for a proven document: the MSO stays with the holder).
        public let validUntil: Date?
        /// The reader's spec a proven document was proven for (nil for a plain presentation).
        public let proof: ZkSystemSpec?
    }

    /// One `documentErrors` entry: a document the wallet did not return, with its 18013-5 error code
    /// (0: data not returned).
    public struct DocumentError: Sendable, Hashable {
        /// The document type not returned.
        public let docType: String
        /// The ISO/IEC 18013-5 error code (0: data not returned).
        public let code: Int64
    }

    /// A response that decrypted, parsed, and passed every issuer, device and request check.
    public struct VerifiedResponse: Sendable {
        /// The decrypted DeviceResponse bytes.
        public let deviceResponse: [UInt8]
        /// The returned documents in response order, each matched to a DocRequest in request order.
        public let documents: [VerifiedDocument]
        /// Every `documentErrors` entry, in order.
        public let documentErrors: [DocumentError]
    }
}
