// The error type of the OpenSSL wrapper. Cases say which operation failed, never a key, a value or
// OpenSSL's own reason text (which could act as an oracle for a hostile peer).

/// An error from the OpenSSL wrapper layer.
package enum CryptoError: Error, Equatable, Sendable {
    /// A public key was malformed, of the wrong size, off the curve or the point at infinity.
    case invalidPublicKey
    /// A private key was malformed, out of range or of an unsupported type.
    case invalidPrivateKey
    /// A signature was not of the exact size the algorithm requires.
    case invalidSignatureEncoding
    /// The algorithm, curve or key type is not supported for this operation.
    case unsupportedAlgorithm
    /// AEAD authentication failed (tag mismatch). Deliberately carries no detail.
    case authenticationFailed
    /// A certificate could not be parsed (bad DER, trailing bytes, missing fields).
    case invalidCertificate
    /// X.509 path validation failed; `reason` is OpenSSL's numeric verify result code.
    case chainValidationFailed(reason: Int32)
    /// An input length was outside the range the operation accepts.
    case invalidLength
    /// An OpenSSL operation failed unexpectedly; `operation` names the step (not OpenSSL's text).
    case operationFailed(operation: String)
}
