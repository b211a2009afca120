import DCAPIFraming
import JOSE
import Presentment
import WebEncoding

/// A signature of a multisigned request that did not verify: which one and the rule that refused it.
public struct DroppedSignature: Sendable, Hashable {
    /// Which signature (`signatures[1]`).
    public let label: String
    /// Why it was dropped (`openid4vp.signatureInvalid`, `openid4vp.clientIDMismatch`, ...).
    public let rule: PresentmentError.Rule
}

/// What an OpenID4VP request carried, for display and for answering it: the form and framing, the
/// response mode, the nonce, the credential query ids, `verifier_info`, the response encryption key
/// and the handover. Holds no element values or keys of the wallet. Immutable; a class, so a parsed
/// request is handed around by one reference.
public final class OpenID4VPDetails: Sendable {
    /// The response encryption a `dc_api.jwt` request asks for.
    public struct ResponseEncryption: Sendable, Hashable {
        /// The verifier key's `kid`.
        public let keyID: String?
        /// The key's RFC 7638 SHA-256 thumbprint (bound into the handover).
        public let thumbprint: [UInt8]
        /// The content encryption chosen (`A128GCM` or `A256GCM`).
        public let contentEncryption: String
    }

    /// Unsigned, signed or multisigned.
    public let form: OpenID4VPRequestForm
    /// How the request was framed (the default response framing follows it).
    public let framing: RequestFraming
    /// `dc_api` or `dc_api.jwt`.
    public let responseMode: OpenID4VPResponseMode
    /// The request's `nonce` as received.
    public let nonce: String
    /// The credential query ids, by document position.
    public let credentialQueryIDs: [String]
    /// `verifier_info` entries as JSON text (informational; never trusted), from verified signatures only.
    public let verifierInfo: [String]
    /// The signatures of a multisigned request that did not verify and were dropped (the request was
    /// answered through the others); their `client_id` and `verifier_info` are never shown.
    public let droppedSignatures: [DroppedSignature]
    /// The CBOR `OpenID4VPDCAPIHandoverInfo`, handover and SessionTranscript.
    package let handover: OpenID4VPHandover
    /// The verifier's encryption key and content encryption (`dc_api.jwt` only).
    let responseKey: ResponseKey?

    init(
        form: OpenID4VPRequestForm, framing: RequestFraming, responseMode: OpenID4VPResponseMode, nonce: String,
        credentialQueryIDs: [String], verifierInfo: [String], droppedSignatures: [DroppedSignature] = [],
        handover: OpenID4VPHandover, responseKey: ResponseKey?
    ) {
        self.droppedSignatures = droppedSignatures
        self.form = form
        self.framing = framing
        self.responseMode = responseMode
        self.nonce = nonce
        self.credentialQueryIDs = credentialQueryIDs
        self.verifierInfo = verifierInfo
        self.handover = handover
        self.responseKey = responseKey
    }

    /// The response encryption (`dc_api.jwt` only).
    public var encryption: ResponseEncryption? {
        responseKey.map {
            ResponseEncryption(
                keyID: $0.key.keyID, thumbprint: $0.key.thumbprint, contentEncryption: $0.encryption.rawValue)
        }
    }
}

/// The three OpenID4VP request forms over the Digital Credentials API (OpenID4VP Appendix A).
public enum OpenID4VPRequestForm: String, Sendable, Hashable, CaseIterable {
    /// `openid4vp-v1-unsigned`: the parameters are `data`'s members.
    case unsigned
    /// `openid4vp-v1-signed`: `data.request` is a compact JWS whose payload holds the parameters.
    case signed
    /// `openid4vp-v1-multisigned`: a JWS JSON serialization, each signature with its own `client_id`.
    case multisigned

    /// The Digital Credentials API protocol identifier.
    public var protocolIdentifier: String {
        switch self {
        case .unsigned: "openid4vp-v1-unsigned"
        case .signed: "openid4vp-v1-signed"
        case .multisigned: "openid4vp-v1-multisigned"
        }
    }

    /// The form a protocol identifier names (exactly one of the three identifiers).
    public init?(protocolIdentifier: String) {
        switch protocolIdentifier {
        case "openid4vp-v1-unsigned": self = .unsigned
        case "openid4vp-v1-signed": self = .signed
        case "openid4vp-v1-multisigned": self = .multisigned
        default: return nil
        }
    }
}

/// How the response travels (`response_mode`).
public enum OpenID4VPResponseMode: String, Sendable, Hashable, CaseIterable {
    /// `dc_api`: `{"vp_token": {...}}` in the clear (the platform's channel protects it).
    case dcAPI = "dc_api"
    /// `dc_api.jwt`: `{"response": "<JWE>"}` encrypted to the verifier's key.
    case dcAPIJWT = "dc_api.jwt"
}
