#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore
import JOSE
import MdocCBOR
import Presentment
import WebEncoding

/// The three OpenID4VP request forms over the Digital Credentials API (OpenID4VP Appendix A).
public enum OpenID4VPRequestForm: String, Sendable, Hashable, CaseIterable {
    /// `openid4vp-v1-unsigned`: the parameters are `data`'s members.
    case unsigned
    /// `openid4vp-v1-signed`: `data.request` is a compact JWS whose payload holds the parameters.
    case signed
    /// `openid4vp-v1-multisigned`: a JWS JSON serialization, each signature with its own `client_id`.
    case multisigned

    /// The Digital Credentials API protocol identifier.
    public var protocolIdentifier: String { "openid4vp-v1-\(rawValue)" }

    /// The form a protocol identifier names.
    public init?(protocolIdentifier: String) {
        guard protocolIdentifier.hasPrefix("openid4vp-v1-") else { return nil }
        self.init(rawValue: String(protocolIdentifier.dropFirst("openid4vp-v1-".count)))
    }
}

/// How the response travels (`response_mode`).
public enum OpenID4VPResponseMode: String, Sendable, Hashable, CaseIterable {
    /// `dc_api`: `{"vp_token": {...}}` in the clear (the platform's channel protects it).
    case dcAPI = "dc_api"
    /// `dc_api.jwt`: `{"response": "<JWE>"}` encrypted to the verifier's key.
    case dcAPIJWT = "dc_api.jwt"
}

/// One verifier signature of a signed or multisigned request, verified.
public struct VerifierSignature: Sendable {
    /// `request` for the compact form, `signatures[i]` for the JSON form.
    public let label: String
    /// The full `client_id` it authenticates (`x509_san_dns:…` or `x509_hash:…`).
    public let clientID: String
    /// The certificate chain from `x5c`, leaf first.
    public let chain: [Certificate]
    /// The trust verdict for the signer under the holder's policy.
    public let verdict: ReaderVerdict
}

/// A request read from its `data` member: the form, the parameters (from `data` or the verified
/// request object), and the verified signatures.
struct RequestObject {
    let form: OpenID4VPRequestForm
    /// The Authorization Request parameters.
    let parameters: JSONNode
    /// The verified signatures, each with its chain (verdicts are added later).
    let signers: [(label: String, clientID: String, chain: [Certificate], header: JWSHeader)]

    static let requestObjectType = "oauth-authz-req+jwt"

    /// Reads the request object for `form` from `data`, verifying every signature over its exact
    /// signing input and each `client_id` against its certificate. Trust and `expected_origins` come
    /// after (the caller's).
    init(form: OpenID4VPRequestForm, data: JSONNode, limits: JOSELimits, parameterLimits: JSONValue.Limits)
        throws(PresentmentError)
    {
        self.form = form
        guard data.isObject else { throw PresentmentError(OpenID4VPRule.dataNotObject) }
        switch form {
        case .unsigned:
            guard data["request"] == nil, data["payload"] == nil else {
                throw PresentmentError(OpenID4VPRule.unsignedCarriesRequestObject)
            }
            parameters = data
            signers = []
        case .signed:
            guard let compact = data["request"]?.string else {
                throw PresentmentError(OpenID4VPRule.requestNotCompactJWS)
            }
            let jws: JWS
            do { jws = try JWS(compact: compact, limits: limits) } catch { throw Self.refusal(error, "request") }
            // The signature first: nothing of the payload is read before it verifies.
            let chain = try Self.verify(jws.signatures[0], label: "request", limits: limits)
            parameters = try Self.payload(jws, parameterLimits)
            guard let clientID = parameters["client_id"]?.string else {
                throw PresentmentError(OpenID4VPRule.signedLacksClientID)
            }
            try ClientIdentifier(clientID).check(leaf: chain[0], label: "request")
            signers = [("request", clientID, chain, jws.signatures[0].header)]
        case .multisigned:
            let object: JSONNode
            if data["payload"] != nil || data["signatures"] != nil {
                object = data  // the spec's example: payload and signatures at the top of data
            } else if data["request"]?.isObject == true {
                object = data["request"]!  // data.request as the JSON object
            } else if let s = data["request"]?.string, s.first == "{" {
                // data.request as the JSON text of the object
                do { object = try JSONDocument(Array(s.utf8), limits: parameterLimits).root } catch {
                    throw PresentmentError(OpenID4VPRule.requestNotJSON)
                }
            } else {
                throw PresentmentError(OpenID4VPRule.noJWSJSON)
            }
            guard object["signatures"] != nil else {
                throw PresentmentError(OpenID4VPRule.notGeneralJSON)
            }
            let jws: JWS
            do { jws = try JWS(json: object, limits: limits) } catch { throw Self.refusal(error, "request") }
            // Every signature first (each with the client_id of its own protected header), then the payload.
            var signers = [(label: String, clientID: String, chain: [Certificate], header: JWSHeader)]()
            for (i, s) in jws.signatures.enumerated() {
                let label = "signatures[\(i)]"
                guard let clientID = s.header.protectedString("client_id") else {
                    throw PresentmentError(OpenID4VPRule.signatureLacksClientID, at: label)
                }
                if s.header.unprotected?["client_id"] != nil || s.header.unprotected?["verifier_info"] != nil {
                    throw PresentmentError(OpenID4VPRule.unprotectedClientID, at: label)
                }
                let identifier = try ClientIdentifier(clientID)
                let chain = try Self.verify(s, label: label, limits: limits)
                try identifier.check(leaf: chain[0], label: label)
                signers.append((label, clientID, chain, s.header))
            }
            self.signers = signers
            parameters = try Self.payload(jws, parameterLimits)
            for name in ["client_id", "verifier_info"] where parameters[name] != nil {
                throw PresentmentError(OpenID4VPRule.payloadClientID, at: name)
            }
        }
    }

    /// The JWS payload as the parameters object.
    private static func payload(_ jws: JWS, _ limits: JSONValue.Limits) throws(PresentmentError) -> JSONNode {
        let json: JSONNode
        do { json = try JSONDocument(jws.payload, limits: limits).root } catch {
            throw PresentmentError(OpenID4VPRule.payloadNotJSON, underlying: error)
        }
        guard json.isObject else {
            throw PresentmentError(OpenID4VPRule.payloadNotObject)
        }
        return json
    }

    /// A JOSE refusal of the request object as the engine's error.
    private static func refusal(_ e: JOSEError, _ label: String) -> PresentmentError {
        switch e.code {
        case .signatureInvalid, .invalidKey: PresentmentError(OpenID4VPRule.signatureInvalid, at: label, underlying: e)
        case .unsupportedAlgorithm, .unsupportedCritical:
            PresentmentError(OpenID4VPRule.algorithmUnsupported, at: label, underlying: e)
        case .malformed, .decryptionFailed:
            PresentmentError(OpenID4VPRule.requestObjectMalformed, at: label, underlying: e)
        }
    }

    /// Verifies one signature: `typ`, the `x5c` chain, and the signature with the leaf's key. Returns
    /// the chain, leaf first (the `client_id` is checked against it by the caller).
    private static func verify(_ s: JWS.Signature, label: String, limits: JOSELimits) throws(PresentmentError)
        -> [Certificate]
    {
        guard s.header.protectedString("typ") == requestObjectType else {
            throw PresentmentError(OpenID4VPRule.typ, at: label)
        }
        let ders: [[UInt8]]
        do {
            guard let chain = try s.header.certificateChain(limits: limits) else {
                throw PresentmentError(OpenID4VPRule.x5cMissing, at: label)
            }
            ders = chain
        } catch let e as JOSEError { throw refusal(e, label) } catch let e as PresentmentError { throw e } catch {
            throw PresentmentError(OpenID4VPRule.x5cUnreadable, at: label)
        }
        var chain = [Certificate]()
        for der in ders {
            guard let c = try? Certificate(der: der) else {
                throw PresentmentError(OpenID4VPRule.certificateInvalid, at: label)
            }
            chain.append(c)
        }
        let key: PublicKey
        do { key = try chain[0].validatedPublicKey() } catch {
            throw PresentmentError(OpenID4VPRule.leafKeyUnusable, at: label)
        }
        do { try s.verify(with: key) } catch { throw refusal(error, label) }
        return chain
    }
}

/// A `client_id` with its prefix (OpenID4VP §5.9). Only the two X.509 prefixes authenticate a request
/// over the Digital Credentials API here; every other prefix, and a `client_id` without one, is
/// refused distinctly (`unsupportedClientIdentifier`).
enum ClientIdentifier {
    case sanDNS(String)
    case hash([UInt8])

    init(_ clientID: String) throws(PresentmentError) {
        guard let colon = clientID.firstIndex(of: ":") else {
            throw PresentmentError(OpenID4VPRule.clientIDNoPrefix)
        }
        let prefix = clientID[..<colon]
        let rest = String(clientID[clientID.index(after: colon)...])
        switch prefix {
        case "x509_san_dns":
            guard !rest.isEmpty, rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                throw PresentmentError(OpenID4VPRule.sanDNSNotDNSName)
            }
            self = .sanDNS(rest)
        case "x509_hash":
            guard let h = Base64URL.decode(rest), h.count == 32 else {
                throw PresentmentError(OpenID4VPRule.hashNotSHA256)
            }
            self = .hash(h)
        case "redirect_uri":
            throw PresentmentError(OpenID4VPRule.redirectURIPrefix)
        case "origin":
            throw PresentmentError(OpenID4VPRule.originPrefix)
        case "decentralized_identifier", "verifier_attestation", "openid_federation":
            throw PresentmentError(OpenID4VPRule.prefixUnsupported)
        default:
            throw PresentmentError(OpenID4VPRule.prefixUnsupported)
        }
    }

    /// Whether the leaf certificate is the one the identifier names.
    func check(leaf: Certificate, label: String) throws(PresentmentError) {
        switch self {
        case .sanDNS(let name):
            guard leaf.dnsNames.contains(where: { $0.lowercased() == name.lowercased() }) else {
                throw PresentmentError(OpenID4VPRule.clientIDNotSAN, at: label)
            }
        case .hash(let h):
            guard DigestAlgorithm.sha256.hash(leaf.der) == h else {
                throw PresentmentError(OpenID4VPRule.clientIDNotHash, at: label)
            }
        }
    }
}
