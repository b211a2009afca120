/// An error from the COSE layer (RFC 9052/9053), in the module's one error shape: a closed `code`,
/// the structure and rule broken as static `detail` text, and where known the byte `offset` in the
/// decoded input. Never any content from the input.
public struct COSEError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The bytes are not well-formed CBOR (see `cbor`).
        case cbor
        /// The structure is not the COSE structure expected (`detail` names the field or rule).
        case malformed
        /// The algorithm is missing, unknown, or not supported for this operation.
        case unsupportedAlgorithm
        /// The key's type or curve does not match the algorithm.
        case keyAlgorithmMismatch
        /// A COSE_Key is invalid: wrong type, curve, coordinate length, or a point not on the curve.
        case invalidKey
        /// A signature or MAC tag has the wrong length for its algorithm.
        case invalidSignatureLength
        /// The signature or MAC did not verify.
        case verificationFailed
        /// The payload is detached but none was supplied, or attached and one was supplied.
        case payloadMismatch
        /// The signer could not produce a signature.
        case signingFailed
        /// The signer's key cannot be reached: its token is absent, locked or refuses the login.
        case keyUnavailable
        /// A certificate could not be parsed.
        case invalidCertificate
        /// Certificate path validation failed (see `verifyCode`).
        case certificatePathInvalid
    }

    /// What went wrong.
    public let code: Code
    /// Which structure and rule (static text; empty where the code says it all).
    public let detail: String
    /// Byte offset in the decoded input at which the problem was found, when known.
    public let offset: Int?
    /// The CBOR error, for `.cbor`.
    public let cbor: CBORError?
    /// OpenSSL's X.509 verify result code, for `.certificatePathInvalid`.
    public let verifyCode: Int32?

    /// Creates an error.
    public init(_ code: Code, _ detail: String = "", offset: Int? = nil) {
        self.init(code, detail, offset: offset, cbor: nil, verifyCode: nil)
    }

    private init(_ code: Code, _ detail: String, offset: Int?, cbor: CBORError?, verifyCode: Int32?) {
        self.code = code
        self.detail = detail
        self.offset = offset
        self.cbor = cbor
        self.verifyCode = verifyCode
    }

    /// One line: the code, the rule, the offset; never input content.
    public var description: String {
        var s = "COSE \(code.rawValue)"
        if !detail.isEmpty { s += ": \(detail)" }
        if let cbor { s += " (\(cbor))" } else if let offset { s += " at byte \(offset)" }
        if let verifyCode { s += " (verify code \(verifyCode))" }
        return s
    }

    /// Matches errors by code in `switch` and `catch` patterns (`case .verificationFailed:`).
    public static func ~= (pattern: COSEError, value: COSEError) -> Bool { pattern.code == value.code }

    // The factories the layer throws, named after their codes.

    /// Not well-formed CBOR.
    public static func cbor(_ e: CBORError) -> COSEError {
        COSEError(.cbor, "", offset: e.offset, cbor: e, verifyCode: nil)
    }
    /// Not the COSE structure expected; `what` names the field or rule.
    public static func malformed(_ what: String) -> COSEError { COSEError(.malformed, what) }
    /// A COSE_Key that is not a valid key; `what` names the rule.
    public static func invalidKey(_ what: String) -> COSEError { COSEError(.invalidKey, what) }
    /// Certificate path validation failed with OpenSSL verify result `code`.
    public static func certificatePathInvalid(code: Int32) -> COSEError {
        COSEError(.certificatePathInvalid, "", offset: nil, cbor: nil, verifyCode: code)
    }
    /// See `Code.unsupportedAlgorithm`.
    public static let unsupportedAlgorithm = COSEError(.unsupportedAlgorithm)
    /// See `Code.keyAlgorithmMismatch`.
    public static let keyAlgorithmMismatch = COSEError(.keyAlgorithmMismatch)
    /// See `Code.invalidSignatureLength`.
    public static let invalidSignatureLength = COSEError(.invalidSignatureLength)
    /// See `Code.verificationFailed`.
    public static let verificationFailed = COSEError(.verificationFailed)
    /// See `Code.payloadMismatch`.
    public static let payloadMismatch = COSEError(.payloadMismatch)
    /// See `Code.signingFailed`.
    public static let signingFailed = COSEError(.signingFailed)
    /// See `Code.invalidCertificate`.
    public static let invalidCertificate = COSEError(.invalidCertificate)
}
