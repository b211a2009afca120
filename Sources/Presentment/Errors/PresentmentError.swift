/// The one error type of presentment, for every layer and front end: a closed `code` (the contract:
/// what a caller branches on, numbered in the C ABI), the `rule` that refused (a case of the closed
/// rule enum of the layer or front end that decided, carried as a structured value), where in the
/// request when that is a position (`location`, e.g. `docRequests[1].readerAuth`), and the lower
/// layer's own structured error when one caused it (`underlying`: a `CBORError` with its code and
/// offset, an `MdocDataError` with its field, a `COSEError`, `JOSEError`, JSON parse error or
/// `PKCS11Error`). None of these ever carries a request value, element value, key, PIN or origin.
///
/// Two errors are equal when their code and rule are: tests and callers compare those, never the
/// text. `detail` is the same facts in words, for people and logs.
public struct PresentmentError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in the closed set every front end and binding shares. The C ABI numbers these
    /// (`MDOC_ERR_*`, fixed forever); a new code is added at the end and gets the next number.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// No entry of a protocol this engine answers in the framing.
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
        /// A reader or verifier signature is invalid.
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
    /// The rule that refused.
    public let rule: Rule
    /// Where in the request, when the rule applies to one of several places (static structure: a
    /// member or index path such as `docRequests[1].readerAuth`, never a value).
    public let location: String?
    /// The lower layer's structured error behind this one, if any (`CBORError`, `MdocDataError`,
    /// `COSEError`, `JOSEError`, `JSONValue.ParseError`, `PKCS11Error`).
    public let underlying: (any Error & Sendable)?

    /// A refusal by `rule`, with its code.
    /// - Parameters:
    ///   - rule: the case of a layer's or front end's rule enum that refused.
    ///   - location: where in the request, when the rule applies to one of several places.
    ///   - underlying: the lower layer's structured error that caused it.
    public init<R: RefusalRule>(_ rule: R, at location: String? = nil, underlying: (any Error & Sendable)? = nil) {
        self.init(code: rule.code, rule: Rule(rule), location: location, underlying: underlying)
    }

    /// A refusal under another code than the rule's own (the facade's error-disclosure policy).
    package init(code: Code, rule: Rule, location: String?, underlying: (any Error & Sendable)?) {
        self.code = code
        self.rule = rule
        self.location = location
        self.underlying = underlying
    }

    /// The underlying error as `E`, when it is one (e.g. `error.underlying(as: CBORError.self)?.offset`).
    public func underlying<E: Error>(as type: E.Type) -> E? { underlying as? E }

    /// Whether `rule` refused.
    public func `is`<R: RefusalRule>(_ rule: R) -> Bool { self.rule == Rule(rule) }

    /// The rule in words, with its location and the lower layer's error: static text, never input.
    public var detail: String {
        var s = location.map { "\($0): " } ?? ""
        s += rule.summary
        if let underlying { s += " (\(Self.describe(underlying)))" }
        return s
    }

    /// `code [domain.rule]: detail`.
    public var description: String { "\(code.rawValue) [\(rule)]: \(detail)" }

    /// Equal when code and rule are (where and the lower layer's error say more, not something else).
    public static func == (a: PresentmentError, b: PresentmentError) -> Bool { a.code == b.code && a.rule == b.rule }

    /// Hashes what `==` compares.
    public func hash(into h: inout Hasher) {
        h.combine(code)
        h.combine(rule)
    }

    /// A lower layer's error as text: its own description where it has one (every error type of this
    /// package describes structure only), else its type name.
    private static func describe(_ e: any Error) -> String {
        if let d = e as? any CustomStringConvertible { return d.description }
        return String(describing: type(of: e))
    }
}

/// The rules one layer or front end refuses by: a closed enum per module (`AnnexCRule`, `DCQLRule`,
/// `OriginRule`, …). Each case has exactly one code, so a rule says both what was wrong and how the
/// caller is told; a rule's code and words are defined together, in `definition`.
public protocol RefusalRule: Sendable, Hashable, CaseIterable, RawRepresentable where RawValue == String {
    /// The layer or front end whose rules these are, e.g. `annexC` (unique in the package).
    static var domain: String { get }
    /// The code a refusal by this rule carries, and what the rule requires as static text.
    var definition: (code: PresentmentError.Code, summary: String) { get }
}

extension RefusalRule {
    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code { definition.code }
    /// What the rule requires, as static text.
    public var summary: String { definition.summary }
}

extension PresentmentError {
    /// One rule of one layer, as a value: its domain and name. Compare with `Rule(SomeRule.case)`, or
    /// read back the typed case with `as(SomeRule.self)`.
    public struct Rule: Hashable, Sendable, CustomStringConvertible {
        /// The layer or front end (`RefusalRule.domain`).
        public let domain: String
        /// The case's name (its raw value).
        public let name: String
        /// The rule in words.
        public let summary: String

        /// The value of a rule.
        public init<R: RefusalRule>(_ rule: R) {
            domain = R.domain
            name = rule.rawValue
            summary = rule.summary
        }

        /// The typed case, when this rule is one of `R`'s.
        public func `as`<R: RefusalRule>(_ type: R.Type) -> R? { domain == R.domain ? R(rawValue: name) : nil }

        /// `domain.name`.
        public var description: String { "\(domain).\(name)" }

        /// Equal when domain and name are.
        public static func == (a: Rule, b: Rule) -> Bool { a.domain == b.domain && a.name == b.name }

        /// Hashes what `==` compares.
        public func hash(into h: inout Hasher) {
            h.combine(domain)
            h.combine(name)
        }
    }
}
