import Presentment

/// The rules of the Annex C front end (ISO/IEC 18013-7 Annex C, `org-iso-mdoc`): its `data`
/// member, EncryptionInfo and the recipient key, the DeviceRequest and its bounds, zero-knowledge
/// requests, reader authentication (`readerAuth`, `readerAuthAll`), and sealing.
public enum AnnexCRule: String, RefusalRule {
    /// Org-iso-mdoc data nested too deeply.
    case dataTooDeep
    /// Org-iso-mdoc data has too many members.
    case dataTooWide
    /// Data.deviceRequest missing.
    case deviceRequestMissing
    /// Data.encryptionInfo missing.
    case encryptionInfoMissing
    /// Data.deviceRequest is not a string.
    case deviceRequestNotString
    /// Data.encryptionInfo is not a string.
    case encryptionInfoNotString
    /// Data.deviceRequest is empty.
    case deviceRequestEmpty
    /// Data.encryptionInfo is empty.
    case encryptionInfoEmpty
    /// DeviceRequest is not base64url (URL-safe alphabet, no padding).
    case deviceRequestNotBase64URL
    /// EncryptionInfo is not base64url (URL-safe alphabet, no padding).
    case encryptionInfoNotBase64URL
    /// EncryptionInfo longer than 4096 characters.
    case encryptionInfoTooLong
    /// EncryptionInfo is not well-formed CBOR.
    case encryptionInfoNotCBOR
    /// EncryptionInfo is not an array of 2.
    case encryptionInfoNotArray
    /// EncryptionInfo[0] is not "dcapi".
    case encryptionInfoNotDcapi
    /// EncryptionParameters is not a map.
    case parametersNotMap
    /// Nonce missing.
    case nonceMissing
    /// Nonce is not a byte string.
    case nonceNotBytes
    /// RecipientPublicKey missing.
    case recipientKeyMissing
    /// RecipientPublicKey is not a COSE_Key map.
    case recipientKeyNotMap
    /// RecipientPublicKey kty is not EC2.
    case recipientKeyNotEC2
    /// RecipientPublicKey curve is not P-256.
    case recipientKeyNotP256
    /// RecipientPublicKey is not a valid P-256 point.
    case recipientKeyInvalid
    /// The DeviceRequest is malformed or of an unsupported version.
    case deviceRequestInvalid
    /// DeviceRequest exceeds the configured CBOR limits.
    case deviceRequestOverLimits
    /// More DocRequests than the configured limit.
    case tooManyDocRequests
    /// More requested and alternative elements than the configured limit.
    case tooManyElements
    /// A DocRequest requires a zero-knowledge proof (zkRequired) and this engine makes none.
    case zkRequired
    /// Alg is not in the protected header.
    case algorithmNotProtected
    /// Missing or unknown alg.
    case algorithmUnknown
    /// Algorithm not allowed for reader authentication.
    case algorithmNotAllowed
    /// Crit header refused (RFC 9052 §3.1).
    case criticalHeader
    /// Malformed x5chain.
    case x5chainMalformed
    /// No x5chain.
    case x5chainMissing
    /// X5chain longer than 8 certificates.
    case x5chainTooLong
    /// X5chain certificate is not valid DER.
    case certificateInvalid
    /// Reader certificate key is not supported.
    case keyUnsupported
    /// Algorithm does not match the reader key.
    case keyAlgorithmMismatch
    /// Payload is attached, expected detached.
    case payloadAttached
    /// Signature length does not match the algorithm.
    case signatureLength
    /// Signature does not verify.
    case signatureInvalid
    /// HPKE seal failed.
    case sealing

    /// The domain of these rules.
    public static let domain = "annexC"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .dataTooDeep, .dataTooWide, .deviceRequestMissing, .encryptionInfoMissing, .deviceRequestNotString,
            .encryptionInfoNotString, .deviceRequestEmpty, .encryptionInfoEmpty, .deviceRequestNotBase64URL,
            .encryptionInfoNotBase64URL:
            .malformedRequest
        case .encryptionInfoTooLong, .encryptionInfoNotCBOR, .encryptionInfoNotArray, .encryptionInfoNotDcapi,
            .parametersNotMap, .nonceMissing, .nonceNotBytes, .recipientKeyMissing, .recipientKeyNotMap:
            .invalidEncryptionInfo
        case .recipientKeyNotEC2, .recipientKeyNotP256, .recipientKeyInvalid: .unsupportedRecipientKey
        case .deviceRequestInvalid: .invalidDeviceRequest
        case .deviceRequestOverLimits, .tooManyDocRequests, .tooManyElements: .limitExceeded
        case .zkRequired: .zkUnsupported
        case .algorithmNotProtected, .algorithmUnknown, .algorithmNotAllowed, .criticalHeader, .x5chainMalformed,
            .x5chainMissing, .x5chainTooLong, .certificateInvalid, .keyUnsupported, .keyAlgorithmMismatch,
            .payloadAttached, .signatureLength, .signatureInvalid:
            .readerAuthenticationFailed
        case .sealing: .sealingFailed
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .dataTooDeep: "org-iso-mdoc data nested too deeply"
        case .dataTooWide: "org-iso-mdoc data has too many members"
        case .deviceRequestMissing: "data.deviceRequest missing"
        case .encryptionInfoMissing: "data.encryptionInfo missing"
        case .deviceRequestNotString: "data.deviceRequest is not a string"
        case .encryptionInfoNotString: "data.encryptionInfo is not a string"
        case .deviceRequestEmpty: "data.deviceRequest is empty"
        case .encryptionInfoEmpty: "data.encryptionInfo is empty"
        case .deviceRequestNotBase64URL: "deviceRequest is not base64url (URL-safe alphabet, no padding)"
        case .encryptionInfoNotBase64URL: "encryptionInfo is not base64url (URL-safe alphabet, no padding)"
        case .encryptionInfoTooLong: "encryptionInfo longer than 4096 characters"
        case .encryptionInfoNotCBOR: "EncryptionInfo is not well-formed CBOR"
        case .encryptionInfoNotArray: "EncryptionInfo is not an array of 2"
        case .encryptionInfoNotDcapi: "EncryptionInfo[0] is not \"dcapi\""
        case .parametersNotMap: "EncryptionParameters is not a map"
        case .nonceMissing: "nonce missing"
        case .nonceNotBytes: "nonce is not a byte string"
        case .recipientKeyMissing: "recipientPublicKey missing"
        case .recipientKeyNotMap: "recipientPublicKey is not a COSE_Key map"
        case .recipientKeyNotEC2: "recipientPublicKey kty is not EC2"
        case .recipientKeyNotP256: "recipientPublicKey curve is not P-256"
        case .recipientKeyInvalid: "recipientPublicKey is not a valid P-256 point"
        case .deviceRequestInvalid: "the DeviceRequest is malformed or of an unsupported version"
        case .deviceRequestOverLimits: "DeviceRequest exceeds the configured CBOR limits"
        case .tooManyDocRequests: "more DocRequests than the configured limit"
        case .tooManyElements: "more requested and alternative elements than the configured limit"
        case .zkRequired: "a DocRequest requires a zero-knowledge proof (zkRequired) and this engine makes none"
        case .algorithmNotProtected: "alg is not in the protected header"
        case .algorithmUnknown: "missing or unknown alg"
        case .algorithmNotAllowed: "algorithm not allowed for reader authentication"
        case .criticalHeader: "crit header refused (RFC 9052 §3.1)"
        case .x5chainMalformed: "malformed x5chain"
        case .x5chainMissing: "no x5chain"
        case .x5chainTooLong: "x5chain longer than 8 certificates"
        case .certificateInvalid: "x5chain certificate is not valid DER"
        case .keyUnsupported: "reader certificate key is not supported"
        case .keyAlgorithmMismatch: "algorithm does not match the reader key"
        case .payloadAttached: "payload is attached, expected detached"
        case .signatureLength: "signature length does not match the algorithm"
        case .signatureInvalid: "signature does not verify"
        case .sealing: "HPKE seal failed"
        }
    }
}
