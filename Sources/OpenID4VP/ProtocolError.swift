#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Presentment
import WebEncoding

/// The OAuth / OpenID4VP error codes a refusal maps to (OpenID4VP §8.5, RFC 6749 §4.1.2.1).
public enum OpenID4VPError: String, Sendable, Hashable, CaseIterable {
    /// The request is malformed, its verifier could not be authenticated, or its origin does not match.
    case invalidRequest = "invalid_request"
    /// The wallet holds no credential to answer, or the user declined.
    case accessDenied = "access_denied"
    /// `transaction_data` of an unsupported type.
    case invalidTransactionData = "invalid_transaction_data"
    /// The verifier's `vp_formats_supported` excludes what the wallet holds.
    case vpFormatsNotSupported = "vp_formats_not_supported"
    /// Anything else (the wallet failed).
    case serverError = "server_error"

    /// The code for a refusal.
    public init(_ e: PresentmentError) {
        switch e.code {
        case .noMatchingCredential, .cannotSatisfyRequest, .consentMismatch: self = .accessDenied
        case .unsupportedTransactionData: self = .invalidTransactionData
        case .keyUnavailable, .signingFailed, .sealingFailed, .selfCheckFailed, .contextUnavailable,
            .contextCorrupt, .contextInsecure, .contextBusy:
            self = .serverError
        default: self = .invalidRequest
        }
    }

    /// The protocol error object (`{"error": "invalid_request"}` etc., OpenID4VP §8.5) for a refusal,
    /// for the caller to return through the platform when it chooses: never sent automatically, and a
    /// wallet should not reveal errors before user interaction.
    public static func object(for error: PresentmentError) -> Data {
        Data(JSONValue.object([("error", .string(OpenID4VPError(error).rawValue))]).serialized)
    }
}
