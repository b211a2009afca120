import Presentment

/// The rules of the Annex C front end (ISO/IEC 18013-7 Annex C, `org-iso-mdoc`): its `data`
/// member, EncryptionInfo and the recipient key, the DeviceRequest and its bounds, zero-knowledge
/// requests, reader authentication (`readerAuth`, `readerAuthAll`), and sealing.
public enum AnnexCRule: String, RefusalRule {
    case dataTooDeep
    case dataTooWide
    case deviceRequestMissing
    case encryptionInfoMissing
    case deviceRequestNotString
    case encryptionInfoNotString
    case deviceRequestEmpty
    case encryptionInfoEmpty
    case deviceRequestNotBase64URL
    case encryptionInfoNotBase64URL
    case encryptionInfoTooLong
    case encryptionInfoNotCBOR
    case encryptionInfoNotArray
    case encryptionInfoNotDcapi
    case parametersNotMap
    case nonceMissing
    case nonceNotBytes
    case recipientKeyMissing
    case recipientKeyNotMap
    case recipientKeyNotEC2
    case recipientKeyNotP256
    case recipientKeyInvalid
    case deviceRequestInvalid
    case deviceRequestOverLimits
    case tooManyDocRequests
    case tooManyElements
    case algorithmNotProtected
    case algorithmUnknown
    case algorithmNotAllowed
    case criticalHeader
    case x5chainMalformed
    case x5chainMissing
    case x5chainTooLong
    case certificateInvalid
    case keyUnsupported
    case keyAlgorithmMismatch
    case payloadAttached
    case signatureLength
    case signatureInvalid
    case sealing

    /// The domain of these rules.
    public static let domain = "annexC"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .dataTooDeep: (.malformedRequest, "org-iso-mdoc data nested too deeply")
        case .dataTooWide: (.malformedRequest, "org-iso-mdoc data has too many members")
        case .deviceRequestMissing: (.malformedRequest, "data.deviceRequest missing")
        case .encryptionInfoMissing: (.malformedRequest, "data.encryptionInfo missing")
        case .deviceRequestNotString: (.malformedRequest, "data.deviceRequest is not a string")
        case .encryptionInfoNotString: (.malformedRequest, "data.encryptionInfo is not a string")
        case .deviceRequestEmpty: (.malformedRequest, "data.deviceRequest is empty")
        case .encryptionInfoEmpty: (.malformedRequest, "data.encryptionInfo is empty")
        case .deviceRequestNotBase64URL:
            (.malformedRequest, "deviceRequest is not base64url (URL-safe alphabet, no padding)")
        case .encryptionInfoNotBase64URL:
            (.malformedRequest, "encryptionInfo is not base64url (URL-safe alphabet, no padding)")
        case .encryptionInfoTooLong: (.invalidEncryptionInfo, "encryptionInfo longer than 4096 characters")
        case .encryptionInfoNotCBOR: (.invalidEncryptionInfo, "EncryptionInfo is not well-formed CBOR")
        case .encryptionInfoNotArray: (.invalidEncryptionInfo, "EncryptionInfo is not an array of 2")
        case .encryptionInfoNotDcapi: (.invalidEncryptionInfo, "EncryptionInfo[0] is not \"dcapi\"")
        case .parametersNotMap: (.invalidEncryptionInfo, "EncryptionParameters is not a map")
        case .nonceMissing: (.invalidEncryptionInfo, "nonce missing")
        case .nonceNotBytes: (.invalidEncryptionInfo, "nonce is not a byte string")
        case .recipientKeyMissing: (.invalidEncryptionInfo, "recipientPublicKey missing")
        case .recipientKeyNotMap: (.invalidEncryptionInfo, "recipientPublicKey is not a COSE_Key map")
        case .recipientKeyNotEC2: (.unsupportedRecipientKey, "recipientPublicKey kty is not EC2")
        case .recipientKeyNotP256: (.unsupportedRecipientKey, "recipientPublicKey curve is not P-256")
        case .recipientKeyInvalid: (.unsupportedRecipientKey, "recipientPublicKey is not a valid P-256 point")
        case .deviceRequestInvalid:
            (.invalidDeviceRequest, "the DeviceRequest is malformed or of an unsupported version")
        case .deviceRequestOverLimits: (.limitExceeded, "DeviceRequest exceeds the configured CBOR limits")
        case .tooManyDocRequests: (.limitExceeded, "more DocRequests than the configured limit")
        case .tooManyElements: (.limitExceeded, "more requested and alternative elements than the configured limit")
        case .algorithmNotProtected: (.readerAuthenticationFailed, "alg is not in the protected header")
        case .algorithmUnknown: (.readerAuthenticationFailed, "missing or unknown alg")
        case .algorithmNotAllowed: (.readerAuthenticationFailed, "algorithm not allowed for reader authentication")
        case .criticalHeader: (.readerAuthenticationFailed, "crit header refused (RFC 9052 §3.1)")
        case .x5chainMalformed: (.readerAuthenticationFailed, "malformed x5chain")
        case .x5chainMissing: (.readerAuthenticationFailed, "no x5chain")
        case .x5chainTooLong: (.readerAuthenticationFailed, "x5chain longer than 8 certificates")
        case .certificateInvalid: (.readerAuthenticationFailed, "x5chain certificate is not valid DER")
        case .keyUnsupported: (.readerAuthenticationFailed, "reader certificate key is not supported")
        case .keyAlgorithmMismatch: (.readerAuthenticationFailed, "algorithm does not match the reader key")
        case .payloadAttached: (.readerAuthenticationFailed, "payload is attached, expected detached")
        case .signatureLength: (.readerAuthenticationFailed, "signature length does not match the algorithm")
        case .signatureInvalid: (.readerAuthenticationFailed, "signature does not verify")
        case .sealing: (.sealingFailed, "HPKE seal failed")
        }
    }
}
