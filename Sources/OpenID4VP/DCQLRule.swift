import Presentment

/// The rules of a DCQL query (OpenID4VP §6, §7) read for `mso_mdoc`: every member this wallet acts
/// on, and the configured bounds.
public enum DCQLRule: String, RefusalRule {
    case notObject
    case credentials
    case tooManyQueries
    case queryNotObject
    case queryID
    case duplicateQueryID
    case formatMissing
    case multipleNotBoolean
    case holderBindingNotBoolean
    case metaMissing
    case doctypeValueMissing
    case tooManyClaims
    case credentialSets
    case tooManyCredentialSets
    case credentialSetOptions
    case credentialSetRequired
    case credentialSetOption
    case credentialSetUnknownQuery
    case claimSetsWithoutClaims
    case claims
    case tooManyClaimsInQuery
    case claimNotObject
    case claimPath
    case intentToRetainNotBoolean
    case claimValues
    case claimValueNotInteger
    case claimValueType
    case conflictingRepeatedClaim
    case claimID
    case duplicateClaimID
    case claimSets
    case claimSetsNeedIDs
    case claimSet
    case claimSetUnknownClaim
    case trustedAuthorities
    case trustedAuthority
    case trustedAuthorityValue
    case akiNotBase64URL

    /// The domain of these rules.
    public static let domain = "dcql"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .notObject: (.invalidRequest, "not an object")
        case .credentials: (.invalidRequest, "credentials is not a non-empty array")
        case .tooManyQueries: (.limitExceeded, "more credential queries than the configured limit")
        case .queryNotObject: (.invalidRequest, "a credential query is not an object")
        case .queryID: (.invalidRequest, "a credential query id is missing or not [A-Za-z0-9_-]+")
        case .duplicateQueryID: (.invalidRequest, "duplicate credential query id")
        case .formatMissing: (.invalidRequest, "a credential query format is missing")
        case .multipleNotBoolean: (.invalidRequest, "multiple is not a boolean")
        case .holderBindingNotBoolean: (.invalidRequest, "require_cryptographic_holder_binding is not a boolean")
        case .metaMissing: (.invalidRequest, "a credential query meta is missing")
        case .doctypeValueMissing: (.invalidRequest, "meta.doctype_value is missing for an mso_mdoc query")
        case .tooManyClaims: (.limitExceeded, "more claims than the configured limit")
        case .credentialSets: (.invalidRequest, "credential_sets is not a non-empty array")
        case .tooManyCredentialSets: (.limitExceeded, "more credential sets than the configured limit")
        case .credentialSetOptions:
            (.invalidRequest, "a credential set's options is not a non-empty array within the limit")
        case .credentialSetRequired: (.invalidRequest, "credential set required is not a boolean")
        case .credentialSetOption: (.invalidRequest, "a credential set option is not a non-empty array of ids")
        case .credentialSetUnknownQuery: (.invalidRequest, "a credential set option names an unknown credential query")
        case .claimSetsWithoutClaims: (.invalidRequest, "claim_sets without claims")
        case .claims: (.invalidRequest, "claims is not a non-empty array")
        case .tooManyClaimsInQuery: (.limitExceeded, "more claims in a query than the configured limit")
        case .claimNotObject: (.invalidRequest, "a claim is not an object")
        case .claimPath: (.invalidRequest, "a claim path is not [namespace, element] (two non-empty strings)")
        case .intentToRetainNotBoolean: (.invalidRequest, "intent_to_retain is not a boolean")
        case .claimValues: (.invalidRequest, "a claim's values is not a non-empty array within the limit")
        case .claimValueNotInteger: (.invalidRequest, "a claim value is a number that is not an integer")
        case .claimValueType: (.invalidRequest, "a claim value is not a string, integer or boolean")
        case .conflictingRepeatedClaim:
            (.invalidRequest, "two claims name the same path with different values or intent_to_retain")
        case .claimID: (.invalidRequest, "a claim id is not [A-Za-z0-9_-]+")
        case .duplicateClaimID: (.invalidRequest, "duplicate claim id")
        case .claimSets: (.invalidRequest, "claim_sets is not a non-empty array within the limit")
        case .claimSetsNeedIDs: (.invalidRequest, "claim_sets requires an id on every claim")
        case .claimSet: (.invalidRequest, "a claim set is not a non-empty array of claim ids")
        case .claimSetUnknownClaim: (.invalidRequest, "a claim set names an unknown claim id")
        case .trustedAuthorities: (.invalidRequest, "trusted_authorities is not a non-empty array within the limit")
        case .trustedAuthority: (.invalidRequest, "a trusted authority is not {type, values: [string, ...]}")
        case .trustedAuthorityValue: (.invalidRequest, "a trusted authority value is not a string")
        case .akiNotBase64URL: (.invalidRequest, "an aki trusted authority value is not base64url")
        }
    }
}
