import Presentment

/// The rules of a DCQL query (OpenID4VP §6, §7) read for `mso_mdoc`: every member this wallet acts
/// on, and the configured bounds.
public enum DCQLRule: String, RefusalRule {
    /// Not an object.
    case notObject
    /// Credentials is not a non-empty array.
    case credentials
    /// More credential queries than the configured limit.
    case tooManyQueries
    /// A credential query is not an object.
    case queryNotObject
    /// A credential query id is missing or not [A-Za-z0-9_-]+.
    case queryID
    /// Duplicate credential query id.
    case duplicateQueryID
    /// A credential query format is missing.
    case formatMissing
    /// Multiple is not a boolean.
    case multipleNotBoolean
    /// Require_cryptographic_holder_binding is not a boolean.
    case holderBindingNotBoolean
    /// A credential query meta is missing.
    case metaMissing
    /// Meta.doctype_value is missing for an mso_mdoc query.
    case doctypeValueMissing
    /// More claims than the configured limit.
    case tooManyClaims
    /// Credential_sets is not a non-empty array.
    case credentialSets
    /// More credential sets than the configured limit.
    case tooManyCredentialSets
    /// A credential set's options is not a non-empty array within the limit.
    case credentialSetOptions
    /// Credential set required is not a boolean.
    case credentialSetRequired
    /// A credential set option is not a non-empty array of ids.
    case credentialSetOption
    /// A credential set option names an unknown credential query.
    case credentialSetUnknownQuery
    /// Claim_sets without claims.
    case claimSetsWithoutClaims
    /// Claims is not a non-empty array.
    case claims
    /// More claims in a query than the configured limit.
    case tooManyClaimsInQuery
    /// A claim is not an object.
    case claimNotObject
    /// A claim path is not [namespace, element] (two non-empty strings).
    case claimPath
    /// Intent_to_retain is not a boolean.
    case intentToRetainNotBoolean
    /// A claim's values is not a non-empty array within the limit.
    case claimValues
    /// A claim value is a number that is not an integer.
    case claimValueNotInteger
    /// A claim value is not a string, integer or boolean.
    case claimValueType
    /// Two claims name the same path with different values or intent_to_retain.
    case conflictingRepeatedClaim
    /// A claim id is not [A-Za-z0-9_-]+.
    case claimID
    /// Duplicate claim id.
    case duplicateClaimID
    /// Claim_sets is not a non-empty array within the limit.
    case claimSets
    /// Claim_sets requires an id on every claim.
    case claimSetsNeedIDs
    /// A claim set is not a non-empty array of claim ids.
    case claimSet
    /// A claim set names an unknown claim id.
    case claimSetUnknownClaim
    /// Trusted_authorities is not a non-empty array within the limit.
    case trustedAuthorities
    /// A trusted authority is not {type, values: [string, ...]}.
    case trustedAuthority
    /// A trusted authority value is not a string.
    case trustedAuthorityValue
    /// An aki trusted authority value is not base64url.
    case akiNotBase64URL

    /// The domain of these rules.
    public static let domain = "dcql"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .notObject, .credentials, .queryNotObject, .queryID, .duplicateQueryID, .formatMissing,
            .multipleNotBoolean, .holderBindingNotBoolean, .metaMissing, .doctypeValueMissing, .credentialSets,
            .credentialSetOptions, .credentialSetRequired, .credentialSetOption, .credentialSetUnknownQuery,
            .claimSetsWithoutClaims, .claims, .claimNotObject, .claimPath, .intentToRetainNotBoolean, .claimValues,
            .claimValueNotInteger, .claimValueType, .conflictingRepeatedClaim, .claimID, .duplicateClaimID, .claimSets,
            .claimSetsNeedIDs, .claimSet, .claimSetUnknownClaim, .trustedAuthorities, .trustedAuthority,
            .trustedAuthorityValue, .akiNotBase64URL:
            .invalidRequest
        case .tooManyQueries, .tooManyClaims, .tooManyCredentialSets, .tooManyClaimsInQuery: .limitExceeded
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .notObject: "not an object"
        case .credentials: "credentials is not a non-empty array"
        case .tooManyQueries: "more credential queries than the configured limit"
        case .queryNotObject: "a credential query is not an object"
        case .queryID: "a credential query id is missing or not [A-Za-z0-9_-]+"
        case .duplicateQueryID: "duplicate credential query id"
        case .formatMissing: "a credential query format is missing"
        case .multipleNotBoolean: "multiple is not a boolean"
        case .holderBindingNotBoolean: "require_cryptographic_holder_binding is not a boolean"
        case .metaMissing: "a credential query meta is missing"
        case .doctypeValueMissing: "meta.doctype_value is missing for an mso_mdoc query"
        case .tooManyClaims: "more claims than the configured limit"
        case .credentialSets: "credential_sets is not a non-empty array"
        case .tooManyCredentialSets: "more credential sets than the configured limit"
        case .credentialSetOptions: "a credential set's options is not a non-empty array within the limit"
        case .credentialSetRequired: "credential set required is not a boolean"
        case .credentialSetOption: "a credential set option is not a non-empty array of ids"
        case .credentialSetUnknownQuery: "a credential set option names an unknown credential query"
        case .claimSetsWithoutClaims: "claim_sets without claims"
        case .claims: "claims is not a non-empty array"
        case .tooManyClaimsInQuery: "more claims in a query than the configured limit"
        case .claimNotObject: "a claim is not an object"
        case .claimPath: "a claim path is not [namespace, element] (two non-empty strings)"
        case .intentToRetainNotBoolean: "intent_to_retain is not a boolean"
        case .claimValues: "a claim's values is not a non-empty array within the limit"
        case .claimValueNotInteger: "a claim value is a number that is not an integer"
        case .claimValueType: "a claim value is not a string, integer or boolean"
        case .conflictingRepeatedClaim: "two claims name the same path with different values or intent_to_retain"
        case .claimID: "a claim id is not [A-Za-z0-9_-]+"
        case .duplicateClaimID: "duplicate claim id"
        case .claimSets: "claim_sets is not a non-empty array within the limit"
        case .claimSetsNeedIDs: "claim_sets requires an id on every claim"
        case .claimSet: "a claim set is not a non-empty array of claim ids"
        case .claimSetUnknownClaim: "a claim set names an unknown claim id"
        case .trustedAuthorities: "trusted_authorities is not a non-empty array within the limit"
        case .trustedAuthority: "a trusted authority is not {type, values: [string, ...]}"
        case .trustedAuthorityValue: "a trusted authority value is not a string"
        case .akiNotBase64URL: "an aki trusted authority value is not base64url"
        }
    }
}
