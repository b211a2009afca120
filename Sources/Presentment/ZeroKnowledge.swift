#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR

/// One proof system a reader accepts (`ZkSystemSpec` of `requestInfo.zkRequest`), with the parameters
/// of `longfellow-libzk-v1` read (snake_case, as deployed readers send them); a parameter absent or of
/// another type is nil and matches no circuit.
public struct ZkSystemSpec: Sendable, Hashable {
    /// `zkSystemId`, set by the reader and echoed in the answer.
    public let id: String
    /// `system`, e.g. `longfellow-libzk-v1`.
    public let system: String
    /// `params.circuit_hash`: 64 lower-case hex digits naming the circuit.
    public let circuitHash: String?
    /// `params.version`.
    public let version: Int?
    /// `params.num_attributes`: how many claims the circuit discloses.
    public let attributeCount: Int?
    /// `params.block_enc_hash`, `params.block_enc_sig`: proof parameters fixed per circuit.
    public let blockEncHash: Int?
    public let blockEncSig: Int?

    package init(
        id: String, system: String, circuitHash: String?, version: Int?, attributeCount: Int?, blockEncHash: Int?,
        blockEncSig: Int?
    ) {
        self.id = id
        self.system = system
        self.circuitHash = circuitHash
        self.version = version
        self.attributeCount = attributeCount
        self.blockEncHash = blockEncHash
        self.blockEncSig = blockEncSig
    }

    /// A spec as a reader sent it (unknown parameters are RFU and ignored).
    package init(_ spec: ZkRequest.SystemSpec) {
        func int(_ key: String) -> Int? { spec.params[key]?.unsignedValue.flatMap { Int(exactly: $0) } }
        self.init(
            id: spec.id, system: spec.system, circuitHash: spec.params["circuit_hash"]?.stringValue,
            version: int("version"), attributeCount: int("num_attributes"), blockEncHash: int("block_enc_hash"),
            blockEncSig: int("block_enc_sig"))
    }
}

/// Everything a prover needs for one proof. The DeviceResponse holds the one document to prove, as it
/// would be presented (the stored issuer data, a device signature over this session's transcript with
/// empty DeviceNameSpaces); it never leaves the engine.
public struct ZkProofInput: Sendable {
    /// The reader's spec the proof is made for (its circuit).
    public let spec: ZkSystemSpec
    /// A one-document DeviceResponse, device-signed over `sessionTranscript`.
    public let deviceResponse: [UInt8]
    /// The namespace of every claim.
    public let nameSpace: String
    /// The claims' element identifiers, in the request's order.
    public let claims: [String]
    /// The SessionTranscript CBOR bytes.
    public let sessionTranscript: [UInt8]
    /// The proof's time, `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds): a public input, and the
    /// ZkDocumentData `timestamp`.
    public let time: String
}

extension ZeroKnowledgeProver {
    /// Not told: every system is considered (the decision's other rules still apply).
    public var systems: [String] { [] }
}

/// A zero-knowledge prover the engine answers proof requests through. The engine decides which
/// documents are proven (a held circuit matches, one namespace, the holder approved every claim);
/// the prover holds its circuits, matches a reader's specs to them and makes proofs.
public protocol ZeroKnowledgeProver: Sendable {
    /// The reader's spec, among `specs`, that this prover holds a circuit for with `claims` attributes
    /// (its own preference when several match); nil when none does.
    func circuit(for specs: [ZkSystemSpec], claims: Int) -> ZkSystemSpec?
    /// How long one proof is expected to take, in seconds (shown in the consent model).
    var expectedProvingSeconds: Double { get }
    /// The proof systems (`ZkSystemSpec.system`) this prover proves in: a request naming none of them
    /// is refused `zk.unknownSystem` (empty: not told, every system is considered).
    var systems: [String] { get }
    /// Makes a proof.
    /// - Throws: a typed refusal (the prover's own rule: library, circuit, limits, failure, time
    ///   budget); no partial output.
    func prove(_ input: ZkProofInput) throws(PresentmentError) -> [UInt8]
}

/// How a document the reader asked a proof of is answered: decided once, by the engine, and shown in
/// the consent model.
public indirect enum ZeroKnowledgeAnswer: Sendable, Hashable {
    /// A proof for `spec`: reveals the claims' values, the document type, the proof's time and the
    /// issuer's document-signer certificate; nothing else of the credential.
    case proof(spec: ZkSystemSpec, expectedSeconds: Double)
    /// No held circuit can prove it (`why`) and the reader accepts a plain presentation
    /// (`zkRequired: false`): a plain presentation is sent only when the holder approves it for this
    /// document as a separate choice (`respond(…, plainFallback:)`); it reveals what
    /// `ZeroKnowledgeOffer.plainPresentationReveals` lists and is linkable.
    case plainFallback(why: PresentmentError.Rule)
}

/// The rules of zero-knowledge answers: when a document the reader asked a proof of can be proven,
/// and what refuses it.
public enum ZeroKnowledgeRule: String, RefusalRule {
    case noProver
    case unknownSystem
    case noCircuit
    case nameSpaces
    case attributeCount
    case fallbackNotApproved
    case tooManyProofs
    case notProvable

    /// The domain of these rules.
    public static let domain = "zk"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .noProver:
            (.zkUnsupported, "a proof is required and no zero-knowledge prover is installed (zk-setup.sh)")
        case .unknownSystem:
            (.zkUnsupported, "a proof is required and no requested system spec names a proof system the prover holds")
        case .noCircuit: (.zkUnsupported, "a proof is required and no held circuit matches a requested system spec")
        case .nameSpaces: (.zkUnsupported, "a proof is required and the requested claims span several namespaces")
        case .attributeCount:
            (.zkUnsupported, "a proof is required for more claims than any held circuit discloses (1 to 4)")
        case .fallbackNotApproved:
            (.zkUnsupported, "no proof can be made and the holder did not approve a plain presentation instead")
        case .tooManyProofs: (.limitExceeded, "more documents to prove than the configured maximum per response")
        case .notProvable:
            (.zkUnsupported, "the credential cannot be proven: the claims must be held as requested, all approved")
        }
    }
}
