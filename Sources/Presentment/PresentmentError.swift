/// The one error type of presentment, shared by the core and every front end (`PresentmentError` is this
/// type). `code` is a closed set; `detail` names the structure and the rule broken (static text). Neither
/// ever carries a request value, element value, key or origin. Two errors are equal when their codes
/// are: the code is the contract, the detail is for people.
public struct PresentmentError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// No `org-iso-mdoc` request in the framing.
        case unsupportedProtocol
        /// No origin was given.
        case missingOrigin
        /// The origin is not a valid web (or enabled app) origin.
        case invalidOrigin
        /// The JSON framing or its base64url members are malformed.
        case malformedRequest
        /// EncryptionInfo is malformed.
        case invalidEncryptionInfo
        /// The recipient key is not an EC2 P-256 key on the curve.
        case unsupportedRecipientKey
        /// The DeviceRequest is malformed or of an unsupported version.
        case invalidDeviceRequest
        /// A readerAuth or readerAuthAll signature is invalid.
        case readerAuthenticationFailed
        /// Reader authentication is required by the holder's policy and absent.
        case readerAuthenticationRequired
        /// The reader's certificate does not chain to a trust anchor, lacks the reader EKU, or its
        /// authority is not allowed by the policy.
        case untrustedReader
        /// No stored credential can answer a requested document.
        case noMatchingCredential
        /// The request cannot be satisfied as a whole (use cases, documents, or nothing releasable).
        case cannotSatisfyRequest
        /// The raw request asks for more than the consented request the platform showed.
        case consentMismatch
        /// The response would exceed `maximumResponseSize`.
        case responseTooLarge
        /// A request is larger or more complex than the configured limits.
        case limitExceeded
        /// No credential context snapshot is available.
        case contextUnavailable
        /// The credential context snapshot is corrupt or invalid.
        case contextCorrupt
        /// The context file or a key file is readable by others than its owner, or the context
        /// directory is not the user's own or is writable by group or others.
        case contextInsecure
        /// Another writer holds the context's writer lock for longer than the configured wait.
        case contextBusy
        /// A context change names a credential that does not exist.
        case unknownCredential
        /// A context change adds a credential whose id exists already.
        case duplicateCredential
        /// A device key could not be resolved or does not match its credential.
        case keyUnavailable
        /// The device signature could not be produced.
        case signingFailed
        /// Encrypting the response failed (HPKE for Annex C, JWE for OpenID4VP).
        case sealingFailed
        /// The response failed its own pre-seal self-check (a bug or a corrupt credential).
        case selfCheckFailed
        /// Reader side: the response could not be opened or did not verify.
        case responseInvalid
        /// An OpenID4VP request parameter is missing, malformed or not supported (`response_type`,
        /// `response_mode`, `nonce`, `dcql_query`, `client_metadata`, the request object's shape).
        case invalidRequest
        /// A signed OpenID4VP request's `client_id` uses a prefix this wallet does not support (only
        /// `x509_san_dns` and `x509_hash` are).
        case unsupportedClientIdentifier
        /// The origin is not one of a signed OpenID4VP request's `expected_origins`.
        case originMismatch
        /// The request carries `transaction_data` of a type this wallet does not support (none is).
        case unsupportedTransactionData
        /// A DocRequest requires a zero-knowledge proof (`requestInfo.zkRequest` with `zkRequired:
        /// true`) and this engine cannot make one: it is never answered with a plain, linkable
        /// presentation instead.
        case zkUnsupported
    }

    /// What went wrong.
    public let code: Code
    /// Which structure and rule (static text; never input content).
    public let detail: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - detail: which structure and rule, as static text (never input content).
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// Equal when the codes are equal.
    public static func == (a: PresentmentError, b: PresentmentError) -> Bool { a.code == b.code }

    /// Hashes the code only (consistent with `==`).
    public func hash(into h: inout Hasher) { h.combine(code) }

    /// `code: detail`.
    public var description: String { "\(code.rawValue): \(detail)" }
}
