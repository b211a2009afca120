import Presentment

/// The rules the verifier side (this library, for tests, the CLI's reader commands and the demo)
/// holds an Annex C response and every returned document to: opening, the DeviceResponse, issuer
/// signature and chain, MSO, digests, the device signature, and that only what was asked and
/// approved came back.
public enum VerifierRule: String, RefusalRule {
    case responseNotCBOR
    case responseShape
    case responseJSON
    case responseMember
    case hpkeOpen
    case deviceResponseInvalid
    case status
    case unrequestedDocument
    case x5chainMalformed
    case noDocumentSigner
    case issuerSignature
    case notChainedToIACA
    case documentSignerEKU
    case msoInvalid
    case msoDocType
    case msoValidity
    case digest
    case noDeviceSignature
    case deviceSignature
    case deviceAuthentication
    case duplicateElement
    case notApproved
    case notRequested
    case keyGeneration
    case signing
    case zkNotRequested
    case zkSystemUnknown
    case zkStale
    case zkClaims
    case zkDeviceSigned
    case zkNoVerifier
    case zkProof

    /// The domain of these rules.
    public static let domain = "verifier"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .responseNotCBOR: (.responseInvalid, "EncryptedResponse is not well-formed CBOR")
        case .responseShape: (.responseInvalid, "EncryptedResponse is not [\"dcapi\", {enc, cipherText}]")
        case .responseJSON: (.responseInvalid, "response JSON is malformed")
        case .responseMember: (.responseInvalid, "response member missing or not base64url")
        case .hpkeOpen: (.responseInvalid, "HPKE open failed")
        case .deviceResponseInvalid: (.responseInvalid, "the DeviceResponse does not parse")
        case .status: (.responseInvalid, "DeviceResponse status is not 0")
        case .unrequestedDocument:
            (.responseInvalid, "a document was returned that was not requested, or out of request order")
        case .x5chainMalformed: (.responseInvalid, "issuerAuth x5chain is malformed")
        case .noDocumentSigner: (.responseInvalid, "issuerAuth has no document signer certificate")
        case .issuerSignature: (.responseInvalid, "issuer signature does not verify")
        case .notChainedToIACA: (.responseInvalid, "document signer does not chain to a given IACA")
        case .documentSignerEKU: (.responseInvalid, "document signer lacks EKU 1.0.18013.5.1.2")
        case .msoInvalid: (.responseInvalid, "the MSO does not parse")
        case .msoDocType: (.responseInvalid, "MSO docType differs from the document's")
        case .msoValidity: (.responseInvalid, "MSO not valid at the verification time")
        case .digest: (.responseInvalid, "a disclosed element does not match its MSO digest")
        case .noDeviceSignature:
            (.responseInvalid, "no deviceSignature (deviceMac is not used over the Digital Credentials API)")
        case .deviceSignature: (.responseInvalid, "device signature does not verify")
        case .deviceAuthentication: (.responseInvalid, "attached DeviceAuthentication differs from the expected one")
        case .duplicateElement: (.responseInvalid, "an element was disclosed twice")
        case .notApproved: (.responseInvalid, "an element was disclosed that the holder did not approve")
        case .notRequested:
            (
                .responseInvalid,
                "an element was disclosed that was not requested and is no admissible substitute for a requested element"
            )
        case .keyGeneration: (.sealingFailed, "reader key generation failed")
        case .zkNotRequested: (.responseInvalid, "a ZkDocument answers a DocRequest that asked no proof")
        case .zkSystemUnknown: (.responseInvalid, "a ZkDocument's zkSystemId is not one the request offered")
        case .zkStale: (.responseInvalid, "a ZkDocument's timestamp is more than 300 s from the verification time")
        case .zkClaims: (.responseInvalid, "a ZkDocument's claims are not exactly the requested elements")
        case .zkDeviceSigned: (.responseInvalid, "a ZkDocument carries device-signed claims (must be empty)")
        case .zkNoVerifier: (.responseInvalid, "a ZkDocument came back and no proof verifier was given")
        case .zkProof: (.responseInvalid, "a ZkDocument's proof does not verify")
        case .signing: (.signingFailed, "reader signing failed")
        }
    }
}
