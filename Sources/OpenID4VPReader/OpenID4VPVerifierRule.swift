import Presentment

/// The rules the OpenID4VP verifier side holds a response to (beyond the document checks of
/// `VerifierRule`), and the rules of reading back its own request state.
public enum OpenID4VPVerifierRule: String, RefusalRule {
    case responseNotJSON
    case protocolMismatch
    case notJWEResponse
    case jwe
    case jweKeyID
    case jwePayload
    case unexpectedEncryption
    case payloadShape
    case unknownQuery
    case presentationCount
    case presentationNotBase64URL
    case deviceResponseInvalid
    case presentationShape
    case docType
    case queryNotAnswered
    case credentialSetNotSatisfied
    case queryOutsideSets
    case duplicateElement
    case notClaimSet
    case valueNotAccepted
    case randomFailed
    case keyGeneration
    case signing
    case extraParameter
    case stateInvalid
    case dcqlUnreadable

    /// The domain of these rules.
    public static let domain = "openID4VPVerifier"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .responseNotJSON: (.responseInvalid, "response is not JSON")
        case .protocolMismatch: (.responseInvalid, "response protocol differs from the request's")
        case .notJWEResponse: (.responseInvalid, "dc_api.jwt response is not {\"response\": <JWE>}")
        case .jwe: (.responseInvalid, "the JWE does not open")
        case .jweKeyID: (.responseInvalid, "JWE kid is not the request key's")
        case .jwePayload: (.responseInvalid, "JWE payload is not JSON")
        case .unexpectedEncryption: (.responseInvalid, "dc_api response is encrypted")
        case .payloadShape: (.responseInvalid, "payload is not {\"vp_token\": {...}}")
        case .unknownQuery: (.responseInvalid, "vp_token answers an unknown credential query")
        case .presentationCount:
            (.responseInvalid, "vp_token entry is not one presentation (or several under multiple)")
        case .presentationNotBase64URL: (.responseInvalid, "presentation is not base64url")
        case .deviceResponseInvalid: (.responseInvalid, "the DeviceResponse does not parse")
        case .presentationShape:
            (.responseInvalid, "presentation is not a DeviceResponse 1.0 with status 0 and exactly one document")
        case .docType: (.responseInvalid, "document docType differs from the query's")
        case .queryNotAnswered: (.responseInvalid, "a credential query is not answered")
        case .credentialSetNotSatisfied: (.responseInvalid, "a required credential set is not satisfied")
        case .queryOutsideSets: (.responseInvalid, "vp_token answers a query no credential set names")
        case .duplicateElement: (.responseInvalid, "an element was disclosed twice")
        case .notClaimSet:
            (.responseInvalid, "the disclosed elements are not exactly the query's claims or one of its claim sets")
        case .valueNotAccepted: (.responseInvalid, "a disclosed value is not among the claim's values")
        case .randomFailed: (.sealingFailed, "random nonce failed")
        case .keyGeneration: (.sealingFailed, "verifier key generation failed")
        case .signing: (.signingFailed, "request signing failed")
        case .extraParameter: (.invalidRequest, "extra parameter is not JSON")
        case .stateInvalid: (.invalidRequest, "the verifier state is not one this library wrote")
        case .dcqlUnreadable: (.invalidRequest, "the DCQL query is not one this library writes")
        }
    }
}
