import Presentment

/// The rules of the OpenID4VP front end (OpenID4VP 1.0 Appendix A, `openid4vp-v1-unsigned`,
/// `-signed`, `-multisigned`): the request object and its signatures, client identifiers,
/// `expected_origins`, the Authorization Request parameters, the response encryption key and the
/// verifier's formats, and sealing the response. The DCQL query's own rules are `DCQLRule`.
public enum OpenID4VPRule: String, RefusalRule {
    /// The request data exceeds the configured JSON bounds.
    case dataOverBounds
    /// Data is not a JSON object.
    case dataNotObject
    /// An unsigned request carries a request object.
    case unsignedCarriesRequestObject
    /// Data.request is not a compact JWS.
    case requestNotCompactJWS
    /// A signed request lacks client_id.
    case signedLacksClientID
    /// Data.request is not JSON.
    case requestNotJSON
    /// A multisigned request carries no JWS JSON serialization.
    case noJWSJSON
    /// A multisigned request is not in the general JSON serialization.
    case notGeneralJSON
    /// The signature lacks client_id in its protected header.
    case signatureLacksClientID
    /// The signature carries client_id or verifier_info unprotected.
    case unprotectedClientID
    /// A multisigned request carries client_id or verifier_info in its payload.
    case payloadClientID
    /// The request object payload is not JSON.
    case payloadNotJSON
    /// The request object payload is not a JSON object.
    case payloadNotObject
    /// The request object is not a well-formed JWS.
    case requestObjectMalformed
    /// The request object's signature does not verify.
    case signatureInvalid
    /// The request object's algorithm or critical header is not supported.
    case algorithmUnsupported
    /// Typ is not oauth-authz-req+jwt.
    case typ
    /// X5c missing.
    case x5cMissing
    /// X5c unreadable.
    case x5cUnreadable
    /// An x5c certificate does not parse.
    case certificateInvalid
    /// The leaf certificate's key is not usable.
    case leafKeyUnusable
    /// Client_id has no prefix (pre-registered clients are not supported).
    case clientIDNoPrefix
    /// X509_san_dns client_id is not a DNS name.
    case sanDNSNotDNSName
    /// X509_hash client_id is not a base64url SHA-256 hash.
    case hashNotSHA256
    /// Redirect_uri client identifiers cannot sign a request.
    case redirectURIPrefix
    /// The origin client identifier prefix is reserved.
    case originPrefix
    /// Client_id prefix is not supported.
    case prefixUnsupported
    /// Client_id is not a dNSName of the signing certificate.
    case clientIDNotSAN
    /// Client_id is not the hash of the signing certificate.
    case clientIDNotHash
    /// Response_type is not vp_token.
    case responseType
    /// Response_mode is not dc_api or dc_api.jwt.
    case responseMode
    /// Nonce missing.
    case nonceMissing
    /// Nonce is not 1 to 512 URL-safe characters.
    case nonce
    /// Transaction_data is not supported (no type is).
    case transactionData
    /// Scope is not supported (send dcql_query).
    case scope
    /// Dcql_query missing.
    case dcqlMissing
    /// Client_metadata is not an object.
    case clientMetadataNotObject
    /// Expected_origins is not a non-empty array of strings.
    case expectedOrigins
    /// The origin is not in expected_origins.
    case originNotExpected
    /// Verifier_info is not a non-empty array of {format, data}.
    case verifierInfo
    /// Dc_api.jwt without client_metadata.jwks.keys.
    case jwksMissing
    /// A jwks key is not an object.
    case jwksKeyNotObject
    /// The response encryption key is not a valid EC public key.
    case encryptionKeyInvalid
    /// No jwks key for ECDH-ES on an EC curve (use absent or enc).
    case noEncryptionKey
    /// Encrypted_response_enc_values_supported is not a non-empty array of strings.
    case encValues
    /// No supported content encryption offered (A128GCM or A256GCM).
    case noSupportedEnc
    /// Vp_formats_supported is not an object.
    case formatsNotObject
    /// Vp_formats_supported.mso_mdoc is not an object.
    case mdocFormatNotObject
    /// An algorithm list is not a non-empty array.
    case algorithmListShape
    /// An algorithm list holds a value that is not an integer.
    case algorithmNotInteger
    /// JWE encryption failed.
    case sealing

    /// The domain of these rules.
    public static let domain = "openID4VP"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .dataOverBounds: .limitExceeded
        case .dataNotObject, .unsignedCarriesRequestObject, .requestNotCompactJWS, .signedLacksClientID,
            .requestNotJSON, .noJWSJSON, .notGeneralJSON, .signatureLacksClientID, .unprotectedClientID,
            .payloadClientID, .payloadNotJSON, .payloadNotObject, .requestObjectMalformed, .typ, .responseType,
            .responseMode, .nonceMissing, .nonce, .scope, .dcqlMissing, .clientMetadataNotObject, .expectedOrigins,
            .verifierInfo, .jwksMissing, .jwksKeyNotObject, .noEncryptionKey, .encValues, .noSupportedEnc,
            .formatsNotObject, .mdocFormatNotObject, .algorithmListShape, .algorithmNotInteger:
            .invalidRequest
        case .signatureInvalid, .algorithmUnsupported, .x5cMissing, .x5cUnreadable, .certificateInvalid,
            .leafKeyUnusable, .sanDNSNotDNSName, .hashNotSHA256, .clientIDNotSAN, .clientIDNotHash:
            .readerAuthenticationFailed
        case .clientIDNoPrefix, .redirectURIPrefix, .originPrefix, .prefixUnsupported: .unsupportedClientIdentifier
        case .transactionData: .unsupportedTransactionData
        case .originNotExpected: .originMismatch
        case .encryptionKeyInvalid: .unsupportedRecipientKey
        case .sealing: .sealingFailed
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .dataOverBounds: "the request data exceeds the configured JSON bounds"
        case .dataNotObject: "data is not a JSON object"
        case .unsignedCarriesRequestObject: "an unsigned request carries a request object"
        case .requestNotCompactJWS: "data.request is not a compact JWS"
        case .signedLacksClientID: "a signed request lacks client_id"
        case .requestNotJSON: "data.request is not JSON"
        case .noJWSJSON: "a multisigned request carries no JWS JSON serialization"
        case .notGeneralJSON: "a multisigned request is not in the general JSON serialization"
        case .signatureLacksClientID: "the signature lacks client_id in its protected header"
        case .unprotectedClientID: "the signature carries client_id or verifier_info unprotected"
        case .payloadClientID: "a multisigned request carries client_id or verifier_info in its payload"
        case .payloadNotJSON: "the request object payload is not JSON"
        case .payloadNotObject: "the request object payload is not a JSON object"
        case .requestObjectMalformed: "the request object is not a well-formed JWS"
        case .signatureInvalid: "the request object's signature does not verify"
        case .algorithmUnsupported: "the request object's algorithm or critical header is not supported"
        case .typ: "typ is not oauth-authz-req+jwt"
        case .x5cMissing: "x5c missing"
        case .x5cUnreadable: "x5c unreadable"
        case .certificateInvalid: "an x5c certificate does not parse"
        case .leafKeyUnusable: "the leaf certificate's key is not usable"
        case .clientIDNoPrefix: "client_id has no prefix (pre-registered clients are not supported)"
        case .sanDNSNotDNSName: "x509_san_dns client_id is not a DNS name"
        case .hashNotSHA256: "x509_hash client_id is not a base64url SHA-256 hash"
        case .redirectURIPrefix: "redirect_uri client identifiers cannot sign a request"
        case .originPrefix: "the origin client identifier prefix is reserved"
        case .prefixUnsupported: "client_id prefix is not supported"
        case .clientIDNotSAN: "client_id is not a dNSName of the signing certificate"
        case .clientIDNotHash: "client_id is not the hash of the signing certificate"
        case .responseType: "response_type is not vp_token"
        case .responseMode: "response_mode is not dc_api or dc_api.jwt"
        case .nonceMissing: "nonce missing"
        case .nonce: "nonce is not 1 to 512 URL-safe characters"
        case .transactionData: "transaction_data is not supported (no type is)"
        case .scope: "scope is not supported (send dcql_query)"
        case .dcqlMissing: "dcql_query missing"
        case .clientMetadataNotObject: "client_metadata is not an object"
        case .expectedOrigins: "expected_origins is not a non-empty array of strings"
        case .originNotExpected: "the origin is not in expected_origins"
        case .verifierInfo: "verifier_info is not a non-empty array of {format, data}"
        case .jwksMissing: "dc_api.jwt without client_metadata.jwks.keys"
        case .jwksKeyNotObject: "a jwks key is not an object"
        case .encryptionKeyInvalid: "the response encryption key is not a valid EC public key"
        case .noEncryptionKey: "no jwks key for ECDH-ES on an EC curve (use absent or enc)"
        case .encValues: "encrypted_response_enc_values_supported is not a non-empty array of strings"
        case .noSupportedEnc: "no supported content encryption offered (A128GCM or A256GCM)"
        case .formatsNotObject: "vp_formats_supported is not an object"
        case .mdocFormatNotObject: "vp_formats_supported.mso_mdoc is not an object"
        case .algorithmListShape: "an algorithm list is not a non-empty array"
        case .algorithmNotInteger: "an algorithm list holds a value that is not an integer"
        case .sealing: "JWE encryption failed"
        }
    }
}
