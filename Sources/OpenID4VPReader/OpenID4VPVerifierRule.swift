import Presentment

/// The rules the OpenID4VP verifier side holds a response to (beyond the document checks of
/// `VerifierRule`), and the rules of reading back its own request state.
public enum OpenID4VPVerifierRule: String, RefusalRule {
    /// Response is not JSON.
    case responseNotJSON
    /// Response protocol differs from the request's.
    case protocolMismatch
    /// Dc_api.jwt response is not {"response": <JWE>}.
    case notJWEResponse
    /// The JWE does not open.
    case jwe
    /// JWE kid is not the request key's.
    case jweKeyID
    /// JWE payload is not JSON.
    case jwePayload
    /// Dc_api response is encrypted.
    case unexpectedEncryption
    /// Payload is not {"vp_token": {...}}.
    case payloadShape
    /// Vp_token answers an unknown credential query.
    case unknownQuery
    /// Vp_token entry is not one presentation (or several under multiple).
    case presentationCount
    /// Presentation is not base64url.
    case presentationNotBase64URL
    /// The DeviceResponse does not parse.
    case deviceResponseInvalid
    /// Presentation is not a DeviceResponse 1.0 with status 0 and exactly one document.
    case presentationShape
    /// Document docType differs from the query's.
    case docType
    /// A credential query is not answered.
    case queryNotAnswered
    /// A required credential set is not satisfied.
    case credentialSetNotSatisfied
    /// Vp_token answers a query no credential set names.
    case queryOutsideSets
    /// An element was disclosed twice.
    case duplicateElement
    /// The disclosed elements are not exactly the query's claims or one of its claim sets.
    case notClaimSet
    /// A disclosed value is not among the claim's values.
    case valueNotAccepted
    /// Random nonce failed.
    case randomFailed
    /// Verifier key generation failed.
    case keyGeneration
    /// Request signing failed.
    case signing
    /// Extra parameter is not JSON.
    case extraParameter
    /// The verifier state is not one this library wrote.
    case stateInvalid
    /// The DCQL query is not one this library writes.
    case dcqlUnreadable

    /// The domain of these rules.
    public static let domain = "openID4VPVerifier"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .responseNotJSON, .protocolMismatch, .notJWEResponse, .jwe, .jweKeyID, .jwePayload, .unexpectedEncryption,
            .payloadShape, .unknownQuery, .presentationCount, .presentationNotBase64URL, .deviceResponseInvalid,
            .presentationShape, .docType, .queryNotAnswered, .credentialSetNotSatisfied, .queryOutsideSets,
            .duplicateElement, .notClaimSet, .valueNotAccepted:
            .responseInvalid
        case .randomFailed, .keyGeneration: .sealingFailed
        case .signing: .signingFailed
        case .extraParameter, .stateInvalid, .dcqlUnreadable: .invalidRequest
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .responseNotJSON: "response is not JSON"
        case .protocolMismatch: "response protocol differs from the request's"
        case .notJWEResponse: "dc_api.jwt response is not {\"response\": <JWE>}"
        case .jwe: "the JWE does not open"
        case .jweKeyID: "JWE kid is not the request key's"
        case .jwePayload: "JWE payload is not JSON"
        case .unexpectedEncryption: "dc_api response is encrypted"
        case .payloadShape: "payload is not {\"vp_token\": {...}}"
        case .unknownQuery: "vp_token answers an unknown credential query"
        case .presentationCount: "vp_token entry is not one presentation (or several under multiple)"
        case .presentationNotBase64URL: "presentation is not base64url"
        case .deviceResponseInvalid: "the DeviceResponse does not parse"
        case .presentationShape: "presentation is not a DeviceResponse 1.0 with status 0 and exactly one document"
        case .docType: "document docType differs from the query's"
        case .queryNotAnswered: "a credential query is not answered"
        case .credentialSetNotSatisfied: "a required credential set is not satisfied"
        case .queryOutsideSets: "vp_token answers a query no credential set names"
        case .duplicateElement: "an element was disclosed twice"
        case .notClaimSet: "the disclosed elements are not exactly the query's claims or one of its claim sets"
        case .valueNotAccepted: "a disclosed value is not among the claim's values"
        case .randomFailed: "random nonce failed"
        case .keyGeneration: "verifier key generation failed"
        case .signing: "request signing failed"
        case .extraParameter: "extra parameter is not JSON"
        case .stateInvalid: "the verifier state is not one this library wrote"
        case .dcqlUnreadable: "the DCQL query is not one this library writes"
        }
    }
}
