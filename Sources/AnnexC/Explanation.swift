import MdocCBOR
import Presentment

/// What the engine did with a request, for debugging and the CLI's `inspect`. Holds transcript and
/// structure bytes, never element values or keys.
public struct Explanation: Sendable {
    /// One reader signature check.
    public struct ReaderCheck: Sendable, Hashable {
        /// Which signature (`docRequests[0].readerAuth`, `readerAuthAll[0]`).
        public let label: String
        /// The COSE algorithm from the protected header (ES256/384/512 or EdDSA).
        public let algorithm: COSEAlgorithm
        /// The ReaderAuthentication(All)Bytes it was verified over.
        public let signedBytes: [UInt8]
        /// Subjects of the x5chain, leaf first.
        public let certificateSubjects: [String]
        /// Whether it verified (a signature that does not verify refuses the request, so a recorded
        /// check always did).
        public let verified: Bool
        /// The trust verdict for its reader: trusted, or signed but not trusted and why.
        public let trust: ReaderVerdict
        /// Set when the holder's policy refused this reader (the rule, never a value).
        public let refusal: String?
    }

    /// How the request was wrapped (bare, `{protocol, data}` or `{"requests": [...]}`); nil if unparseable.
    public var framing: RequestFraming?
    /// The serialized origin used in the transcript.
    public var origin: String?
    /// `CBOR([encryptionInfo, origin])` and its SHA-256.
    public var dcapiInfo: [UInt8]?
    /// SHA-256 of dcapiInfo.
    public var dcapiInfoHash: [UInt8]? { sessionTranscript.map { Array($0.suffix(32)) } }
    /// The SessionTranscript bytes.
    public var sessionTranscript: [UInt8]?
    /// The decoded DeviceRequest bytes.
    public var deviceRequest: [UInt8]?
    /// Every readerAuth and readerAuthAll signature checked, in request order.
    public var readerChecks: [ReaderCheck] = []
    /// The reader verdict (the weakest over the DocRequests), or nil when not reached.
    public var readerVerdict: ReaderVerdict?
    /// The reader verdict of each DocRequest, in request order.
    public var documentVerdicts: [ReaderVerdict] = []
    /// Each distinct reader certificate that signed, with its verdict (more than one: different
    /// readers signed different parts of the request).
    public var readers: [ReaderVerdict] = []
    /// Selection decisions, one line each.
    public var selection: [String] = []
    /// The consent model's documents (requested elements, alternatives honoured and ignored, every
    /// candidate with what it would release and substitute), when selection was reached.
    public var documents: [RequestedDocument] = []
    /// The error that stopped processing, if any.
    public var error: PresentmentError?
}
