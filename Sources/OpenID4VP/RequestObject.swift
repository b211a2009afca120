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

/// A request read from its `data` member: the form, the parameters (from `data` or the verified
/// request object), and the verified signatures.
struct RequestObject {
    let form: OpenID4VPRequestForm
    /// The Authorization Request parameters.
    let parameters: JSONNode
    /// One verified signature: its label, the `client_id` it authenticates, its chain (leaf first),
    /// header and the signing input it was verified over (verdicts are added later).
    struct Signer {
        let label: String
        let clientID: String
        let chain: [Certificate]
        let header: JWSHeader
        let signingInput: [UInt8]
    }

    /// The verified signatures.
    let signers: [Signer]
    /// The signatures of a multisigned request that did not verify, each with the rule that refused
    /// it: dropped (the payload is shared, so one verified signature authenticates every parameter),
    /// never shown as an identity.
    let dropped: [DroppedSignature]

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
            dropped = []
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
            signers = [
                Signer(
                    label: "request", clientID: clientID, chain: chain, header: jws.signatures[0].header,
                    signingInput: jws.signatures[0].signingInput)
            ]
            dropped = []
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
            // Every signature first (each with the client_id of its own protected header), then the
            // payload. A signature that fails is dropped with its rule (RFC 7515 §7.2 leaves this to the
            // application): the payload is shared, so one verified signature authenticates every
            // parameter; none verifying refuses with the first failure.
            var signers = [Signer]()
            var dropped = [DroppedSignature]()
            var firstFailure: PresentmentError?
            for (i, s) in jws.signatures.enumerated() {
                let label = "signatures[\(i)]"
                do {
                    signers.append(try Self.verifiedSigner(s, label: label, limits: limits))
                } catch {
                    if firstFailure == nil { firstFailure = error }
                    dropped.append(DroppedSignature(label: label, rule: error.rule))
                }
            }
            if signers.isEmpty, let firstFailure { throw firstFailure }
            self.signers = signers
            self.dropped = dropped
            parameters = try Self.payload(jws, parameterLimits)
            for name: StaticString in ["client_id", "verifier_info"] where parameters[name] != nil {
                throw PresentmentError(OpenID4VPRule.payloadClientID, at: name.description)
            }
        }
    }

    /// One signature of a multisigned request, verified: its protected `client_id` (never an
    /// unprotected one or `verifier_info`), its chain and signature, and the `client_id` against the leaf.
    private static func verifiedSigner(_ s: JWS.Signature, label: String, limits: JOSELimits)
        throws(PresentmentError) -> Signer
    {
        guard let clientID = s.header.protectedString("client_id") else {
            throw PresentmentError(OpenID4VPRule.signatureLacksClientID, at: label)
        }
        if s.header.unprotected?["client_id"] != nil || s.header.unprotected?["verifier_info"] != nil {
            throw PresentmentError(OpenID4VPRule.unprotectedClientID, at: label)
        }
        let identifier = try ClientIdentifier(clientID)
        let chain = try Self.verify(s, label: label, limits: limits)
        try identifier.check(leaf: chain[0], label: label)
        return Signer(label: label, clientID: clientID, chain: chain, header: s.header, signingInput: s.signingInput)
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
