#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CMdocRespondABI
import Presentment

/// The fixed numbering of status codes at the C boundary. The numbers are the header's macros; this
/// switch is exhaustive, so a new `PresentmentError.Code` does not compile until it has a number.
package enum ABIStatus {
    /// The header's number for a Swift API code.
    package static func number(_ code: PresentmentError.Code) -> Int32 {
        switch code {
        case .unsupportedProtocol: MDOC_ERR_UNSUPPORTED_PROTOCOL
        case .missingOrigin: MDOC_ERR_MISSING_ORIGIN
        case .invalidOrigin: MDOC_ERR_INVALID_ORIGIN
        case .malformedRequest: MDOC_ERR_MALFORMED_REQUEST
        case .invalidEncryptionInfo: MDOC_ERR_INVALID_ENCRYPTION_INFO
        case .unsupportedRecipientKey: MDOC_ERR_UNSUPPORTED_RECIPIENT_KEY
        case .invalidDeviceRequest: MDOC_ERR_INVALID_DEVICE_REQUEST
        case .readerAuthenticationFailed: MDOC_ERR_READER_AUTHENTICATION_FAILED
        case .readerAuthenticationRequired: MDOC_ERR_READER_AUTHENTICATION_REQUIRED
        case .untrustedReader: MDOC_ERR_UNTRUSTED_READER
        case .noMatchingCredential: MDOC_ERR_NO_MATCHING_CREDENTIAL
        case .cannotSatisfyRequest: MDOC_ERR_CANNOT_SATISFY_REQUEST
        case .consentMismatch: MDOC_ERR_CONSENT_MISMATCH
        case .responseTooLarge: MDOC_ERR_RESPONSE_TOO_LARGE
        case .limitExceeded: MDOC_ERR_LIMIT_EXCEEDED
        case .contextUnavailable: MDOC_ERR_CONTEXT_UNAVAILABLE
        case .contextCorrupt: MDOC_ERR_CONTEXT_CORRUPT
        case .contextInsecure: MDOC_ERR_CONTEXT_INSECURE
        case .contextBusy: MDOC_ERR_CONTEXT_BUSY
        case .unknownCredential: MDOC_ERR_UNKNOWN_CREDENTIAL
        case .duplicateCredential: MDOC_ERR_DUPLICATE_CREDENTIAL
        case .keyUnavailable: MDOC_ERR_KEY_UNAVAILABLE
        case .signingFailed: MDOC_ERR_SIGNING_FAILED
        case .sealingFailed: MDOC_ERR_SEALING_FAILED
        case .selfCheckFailed: MDOC_ERR_SELF_CHECK_FAILED
        case .responseInvalid: MDOC_ERR_RESPONSE_INVALID
        case .invalidRequest: MDOC_ERR_INVALID_REQUEST
        case .unsupportedClientIdentifier: MDOC_ERR_UNSUPPORTED_CLIENT_IDENTIFIER
        case .originMismatch: MDOC_ERR_ORIGIN_MISMATCH
        case .unsupportedTransactionData: MDOC_ERR_UNSUPPORTED_TRANSACTION_DATA
        case .zkUnsupported: MDOC_ERR_ZK_UNSUPPORTED
        }
    }

    /// Every status the ABI can return with its name: `ok`, the Swift API's codes by their raw
    /// values, and the ABI's own misuse codes.
    package static let names: [Int32: String] = {
        var m: [Int32: String] = [MDOC_OK: "ok"]
        for c in PresentmentError.Code.allCases { m[number(c)] = c.rawValue }
        m[MDOC_ERR_INVALID_ARGUMENT] = "invalidArgument"
        m[MDOC_ERR_INVALID_HANDLE] = "invalidHandle"
        m[MDOC_ERR_INVALID_CONFIGURATION] = "invalidConfiguration"
        m[MDOC_ERR_INVALID_APPROVAL] = "invalidApproval"
        return m
    }()

    /// The names as C strings in storage that lives as long as the process (handed out by
    /// `mdoc_status_name`; never freed).
    nonisolated(unsafe) static let cNames: [Int32: UnsafeMutablePointer<CChar>] = names.mapValues { strdup($0)! }
    nonisolated(unsafe) static let unknownName: UnsafeMutablePointer<CChar> = strdup("unknown")!
}
