import Presentment

/// The rules the verifier side (this library, for tests, the CLI's reader commands and the demo)
/// holds an Annex C response and every returned document to: opening, the DeviceResponse, issuer
/// signature and chain, MSO, digests, the device signature, and that only what was asked and
/// approved came back.
public enum VerifierRule: String, RefusalRule {
    /// EncryptedResponse is not well-formed CBOR.
    case responseNotCBOR
    /// EncryptedResponse is not ["dcapi", {enc, cipherText}].
    case responseShape
    /// Response JSON is malformed.
    case responseJSON
    /// Response member missing or not base64url.
    case responseMember
    /// HPKE open failed.
    case hpkeOpen
    /// The DeviceResponse does not parse.
    case deviceResponseInvalid
    /// DeviceResponse status is not 0.
    case status
    /// A document was returned that was not requested, or out of request order.
    case unrequestedDocument
    /// IssuerAuth x5chain is malformed.
    case x5chainMalformed
    /// IssuerAuth has no document signer certificate.
    case noDocumentSigner
    /// Issuer signature does not verify.
    case issuerSignature
    /// Document signer does not chain to a given IACA.
    case notChainedToIACA
    /// Document signer lacks EKU 1.0.18013.5.1.2.
    case documentSignerEKU
    /// The MSO does not parse.
    case msoInvalid
    /// MSO docType differs from the document's.
    case msoDocType
    /// MSO not valid at the verification time.
    case msoValidity
    /// A disclosed element does not match its MSO digest.
    case digest
    /// No deviceSignature (deviceMac is not used over the Digital Credentials API).
    case noDeviceSignature
    /// Device signature does not verify.
    case deviceSignature
    /// Attached DeviceAuthentication differs from the expected one.
    case deviceAuthentication
    /// An element was disclosed twice.
    case duplicateElement
    /// An element was disclosed that the holder did not approve.
    case notApproved
    /// An element was disclosed that was not requested and is no admissible substitute for a requested element.
    case notRequested
    /// Reader key generation failed.
    case keyGeneration
    /// Reader signing failed.
    case signing

    /// The domain of these rules.
    public static let domain = "verifier"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .responseNotCBOR, .responseShape, .responseJSON, .responseMember, .hpkeOpen, .deviceResponseInvalid,
            .status, .unrequestedDocument, .x5chainMalformed, .noDocumentSigner, .issuerSignature, .notChainedToIACA,
            .documentSignerEKU, .msoInvalid, .msoDocType, .msoValidity, .digest, .noDeviceSignature, .deviceSignature,
            .deviceAuthentication, .duplicateElement, .notApproved, .notRequested:
            .responseInvalid
        case .keyGeneration: .sealingFailed
        case .signing: .signingFailed
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .responseNotCBOR: "EncryptedResponse is not well-formed CBOR"
        case .responseShape: "EncryptedResponse is not [\"dcapi\", {enc, cipherText}]"
        case .responseJSON: "response JSON is malformed"
        case .responseMember: "response member missing or not base64url"
        case .hpkeOpen: "HPKE open failed"
        case .deviceResponseInvalid: "the DeviceResponse does not parse"
        case .status: "DeviceResponse status is not 0"
        case .unrequestedDocument: "a document was returned that was not requested, or out of request order"
        case .x5chainMalformed: "issuerAuth x5chain is malformed"
        case .noDocumentSigner: "issuerAuth has no document signer certificate"
        case .issuerSignature: "issuer signature does not verify"
        case .notChainedToIACA: "document signer does not chain to a given IACA"
        case .documentSignerEKU: "document signer lacks EKU 1.0.18013.5.1.2"
        case .msoInvalid: "the MSO does not parse"
        case .msoDocType: "MSO docType differs from the document's"
        case .msoValidity: "MSO not valid at the verification time"
        case .digest: "a disclosed element does not match its MSO digest"
        case .noDeviceSignature: "no deviceSignature (deviceMac is not used over the Digital Credentials API)"
        case .deviceSignature: "device signature does not verify"
        case .deviceAuthentication: "attached DeviceAuthentication differs from the expected one"
        case .duplicateElement: "an element was disclosed twice"
        case .notApproved: "an element was disclosed that the holder did not approve"
        case .notRequested:
            "an element was disclosed that was not requested and is no admissible substitute for a requested element"
        case .keyGeneration: "reader key generation failed"
        case .signing: "reader signing failed"
        }
    }
}
