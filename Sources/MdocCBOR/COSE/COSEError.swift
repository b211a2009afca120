/// Errors from the COSE layer. Cases name the structure and the rule broken, never input content.
public enum COSEError: Error, Hashable, Sendable {
    /// The bytes are not well-formed CBOR.
    case cbor(CBORError)
    /// The structure is not the COSE structure expected (`what` names the field or rule).
    case malformed(_ what: String)
    /// The algorithm is missing, unknown, or not supported for this operation.
    case unsupportedAlgorithm
    /// The key's type or curve does not match the algorithm.
    case keyAlgorithmMismatch
    /// A COSE_Key is invalid: wrong type, curve, coordinate length, or a point not on the curve.
    case invalidKey(_ what: String)
    /// A signature or MAC tag has the wrong length for its algorithm.
    case invalidSignatureLength
    /// The signature or MAC did not verify.
    case verificationFailed
    /// The payload is detached but none was supplied, or attached and one was supplied.
    case payloadMismatch
    /// The signer could not produce a signature.
    case signingFailed
    /// A certificate could not be parsed.
    case invalidCertificate
    /// Certificate path validation failed (OpenSSL verify code).
    case certificatePathInvalid(code: Int32)
}
