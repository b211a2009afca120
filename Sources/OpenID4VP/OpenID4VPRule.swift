import Presentment

/// The rules of the OpenID4VP front end (OpenID4VP 1.0 Appendix A, `openid4vp-v1-unsigned`,
/// `-signed`, `-multisigned`): the request object and its signatures, client identifiers,
/// `expected_origins`, the Authorization Request parameters, the response encryption key and the
/// verifier's formats, and sealing the response. The DCQL query's own rules are `DCQLRule`.
public enum OpenID4VPRule: String, RefusalRule {
    case dataOverBounds
    case dataNotObject
    case unsignedCarriesRequestObject
    case requestNotCompactJWS
    case signedLacksClientID
    case requestNotJSON
    case noJWSJSON
    case notGeneralJSON
    case signatureLacksClientID
    case unprotectedClientID
    case payloadClientID
    case payloadNotJSON
    case payloadNotObject
    case requestObjectMalformed
    case signatureInvalid
    case algorithmUnsupported
    case typ
    case x5cMissing
    case x5cUnreadable
    case certificateInvalid
    case leafKeyUnusable
    case clientIDNoPrefix
    case sanDNSNotDNSName
    case hashNotSHA256
    case redirectURIPrefix
    case originPrefix
    case prefixUnsupported
    case clientIDNotSAN
    case clientIDNotHash
    case responseType
    case responseMode
    case nonceMissing
    case nonce
    case transactionData
    case scope
    case dcqlMissing
    case clientMetadataNotObject
    case expectedOrigins
    case originNotExpected
    case verifierInfo
    case jwksMissing
    case jwksKeyNotObject
    case encryptionKeyInvalid
    case noEncryptionKey
    case encValues
    case noSupportedEnc
    case formatsNotObject
    case mdocFormatNotObject
    case algorithmListShape
    case algorithmNotInteger
    case sealing

    /// The domain of these rules.
    public static let domain = "openID4VP"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .dataOverBounds: (.limitExceeded, "the request data exceeds the configured JSON bounds")
        case .dataNotObject: (.invalidRequest, "data is not a JSON object")
        case .unsignedCarriesRequestObject: (.invalidRequest, "an unsigned request carries a request object")
        case .requestNotCompactJWS: (.invalidRequest, "data.request is not a compact JWS")
        case .signedLacksClientID: (.invalidRequest, "a signed request lacks client_id")
        case .requestNotJSON: (.invalidRequest, "data.request is not JSON")
        case .noJWSJSON: (.invalidRequest, "a multisigned request carries no JWS JSON serialization")
        case .notGeneralJSON: (.invalidRequest, "a multisigned request is not in the general JSON serialization")
        case .signatureLacksClientID: (.invalidRequest, "the signature lacks client_id in its protected header")
        case .unprotectedClientID: (.invalidRequest, "the signature carries client_id or verifier_info unprotected")
        case .payloadClientID:
            (.invalidRequest, "a multisigned request carries client_id or verifier_info in its payload")
        case .payloadNotJSON: (.invalidRequest, "the request object payload is not JSON")
        case .payloadNotObject: (.invalidRequest, "the request object payload is not a JSON object")
        case .requestObjectMalformed: (.invalidRequest, "the request object is not a well-formed JWS")
        case .signatureInvalid: (.readerAuthenticationFailed, "the request object's signature does not verify")
        case .algorithmUnsupported:
            (.readerAuthenticationFailed, "the request object's algorithm or critical header is not supported")
        case .typ: (.invalidRequest, "typ is not oauth-authz-req+jwt")
        case .x5cMissing: (.readerAuthenticationFailed, "x5c missing")
        case .x5cUnreadable: (.readerAuthenticationFailed, "x5c unreadable")
        case .certificateInvalid: (.readerAuthenticationFailed, "an x5c certificate does not parse")
        case .leafKeyUnusable: (.readerAuthenticationFailed, "the leaf certificate's key is not usable")
        case .clientIDNoPrefix:
            (.unsupportedClientIdentifier, "client_id has no prefix (pre-registered clients are not supported)")
        case .sanDNSNotDNSName: (.readerAuthenticationFailed, "x509_san_dns client_id is not a DNS name")
        case .hashNotSHA256: (.readerAuthenticationFailed, "x509_hash client_id is not a base64url SHA-256 hash")
        case .redirectURIPrefix: (.unsupportedClientIdentifier, "redirect_uri client identifiers cannot sign a request")
        case .originPrefix: (.unsupportedClientIdentifier, "the origin client identifier prefix is reserved")
        case .prefixUnsupported: (.unsupportedClientIdentifier, "client_id prefix is not supported")
        case .clientIDNotSAN: (.readerAuthenticationFailed, "client_id is not a dNSName of the signing certificate")
        case .clientIDNotHash: (.readerAuthenticationFailed, "client_id is not the hash of the signing certificate")
        case .responseType: (.invalidRequest, "response_type is not vp_token")
        case .responseMode: (.invalidRequest, "response_mode is not dc_api or dc_api.jwt")
        case .nonceMissing: (.invalidRequest, "nonce missing")
        case .nonce: (.invalidRequest, "nonce is not 1 to 512 URL-safe characters")
        case .transactionData: (.unsupportedTransactionData, "transaction_data is not supported (no type is)")
        case .scope: (.invalidRequest, "scope is not supported (send dcql_query)")
        case .dcqlMissing: (.invalidRequest, "dcql_query missing")
        case .clientMetadataNotObject: (.invalidRequest, "client_metadata is not an object")
        case .expectedOrigins: (.invalidRequest, "expected_origins is not a non-empty array of strings")
        case .originNotExpected: (.originMismatch, "the origin is not in expected_origins")
        case .verifierInfo: (.invalidRequest, "verifier_info is not a non-empty array of {format, data}")
        case .jwksMissing: (.invalidRequest, "dc_api.jwt without client_metadata.jwks.keys")
        case .jwksKeyNotObject: (.invalidRequest, "a jwks key is not an object")
        case .encryptionKeyInvalid:
            (.unsupportedRecipientKey, "the response encryption key is not a valid EC public key")
        case .noEncryptionKey: (.invalidRequest, "no jwks key for ECDH-ES on an EC curve (use absent or enc)")
        case .encValues:
            (.invalidRequest, "encrypted_response_enc_values_supported is not a non-empty array of strings")
        case .noSupportedEnc: (.invalidRequest, "no supported content encryption offered (A128GCM or A256GCM)")
        case .formatsNotObject: (.invalidRequest, "vp_formats_supported is not an object")
        case .mdocFormatNotObject: (.invalidRequest, "vp_formats_supported.mso_mdoc is not an object")
        case .algorithmListShape: (.invalidRequest, "an algorithm list is not a non-empty array")
        case .algorithmNotInteger: (.invalidRequest, "an algorithm list holds a value that is not an integer")
        case .sealing: (.sealingFailed, "JWE encryption failed")
        }
    }
}
