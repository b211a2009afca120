#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore
import AnnexCReader
import DCAPIFraming
import JOSE
import MdocCBOR
import OpenID4VP
import Presentment
import WebEncoding

/// The verifier's side of OpenID4VP over the Digital Credentials API, for tests, conformance and
/// debugging: builds requests the way a verifier page does (unsigned, signed with `x509_san_dns` or
/// `x509_hash`, multisigned in each deployed placement; `dc_api` or `dc_api.jwt`; DCQL with claim
/// sets, credential sets and values) and opens and verifies the answers.
public enum OpenID4VPReader {
    /// One DCQL claim.
    public struct Claim: Sendable {
        /// `id` (required when the query has claim sets).
        public var id: String?
        /// The `[namespace, element]` path.
        public var element: ElementID
        /// `values`, if any.
        public var values: [ClaimValue]?
        /// `intent_to_retain`, if stated.
        public var intentToRetain: Bool?

        /// Creates a claim.
        public init(_ element: ElementID, id: String? = nil, values: [ClaimValue]? = nil, intentToRetain: Bool? = nil) {
            self.id = id
            self.element = element
            self.values = values
            self.intentToRetain = intentToRetain
        }
    }

    /// One DCQL credential query.
    public struct CredentialQuery: Sendable {
        /// `id`.
        public var id: String
        /// `meta.doctype_value`.
        public var docType: String
        /// `claims` (nil: none, the document without elements).
        public var claims: [Claim]?
        /// `claim_sets` by claim id.
        public var claimSets: [[String]]?
        /// `multiple`.
        public var multiple: Bool?
        /// `trusted_authorities` of type `aki` (raw key identifiers).
        public var trustedAuthorities: [[UInt8]]?
        /// `format` (default `mso_mdoc`).
        public var format: String

        /// Creates a query.
        public init(
            id: String, docType: String, claims: [Claim]?, claimSets: [[String]]? = nil, multiple: Bool? = nil,
            trustedAuthorities: [[UInt8]]? = nil, format: String = "mso_mdoc"
        ) {
            self.id = id
            self.docType = docType
            self.claims = claims
            self.claimSets = claimSets
            self.multiple = multiple
            self.trustedAuthorities = trustedAuthorities
            self.format = format
        }
    }

    /// One DCQL credential set.
    public struct CredentialSet: Sendable {
        /// `options`, by credential query id.
        public var options: [[String]]
        /// `required` (nil: absent, which means true).
        public var required: Bool?
        /// Creates a set.
        public init(options: [[String]], required: Bool? = nil) {
            self.options = options
            self.required = required
        }
    }

    /// How a signed request names its verifier.
    public enum ClientIDScheme: Sendable, Hashable {
        /// `x509_san_dns:<name>` (the name must be a dNSName of the certificate).
        case sanDNS(String)
        /// `x509_hash:<base64url(SHA-256(leaf DER))>`.
        case hash
    }

    /// One verifier identity that signs.
    public struct Signer: Sendable {
        /// The signing key.
        public var key: SoftwareSigner
        /// The chain for `x5c`, leaf first (without the trust anchor, as HAIP requires).
        public var chain: [Certificate]
        /// The `client_id` form.
        public var clientID: ClientIDScheme
        /// Creates a signer.
        public init(key: SoftwareSigner, chain: [Certificate], clientID: ClientIDScheme) {
            self.key = key
            self.chain = chain
            self.clientID = clientID
        }

        /// The full `client_id` string.
        public var clientIDString: String {
            switch clientID {
            case .sanDNS(let name): "x509_san_dns:" + name
            case .hash: "x509_hash:" + Base64URL.encode(DigestAlgorithm.sha256.hash(chain[0].der))
            }
        }
    }

    /// Where a multisigned request's JWS JSON object goes (the three deployed placements).
    public enum MultisignedPlacement: String, Sendable, CaseIterable {
        /// `payload` and `signatures` at the top of `data` (the spec's example).
        case topLevel
        /// `data.request` is the JSON object.
        case requestObject
        /// `data.request` is the JSON object's text.
        case requestString
    }

    /// How the request is protected.
    public enum Signing: Sendable {
        /// `openid4vp-v1-unsigned`.
        case unsigned
        /// `openid4vp-v1-signed` (compact JWS).
        case signed(Signer)
        /// `openid4vp-v1-multisigned` (general JWS JSON serialization).
        case multisigned([Signer], placement: MultisignedPlacement)
    }

    /// The framing of the raw request: the framings every front end reads (`RequestFraming`).
    public typealias Framing = RequestFraming

    /// A built request and what the verifier keeps to open the answer.
    public struct BuiltRequest: Sendable {
        /// The raw request in the chosen framing.
        public let rawRequest: Data
        /// The origin it is made from.
        public let origin: Origin
        /// The `nonce`.
        public let nonce: String
        /// `dc_api` or `dc_api.jwt`.
        public let responseMode: OpenID4VPResponseMode
        /// The verifier's encryption key (`dc_api.jwt`).
        let encryptionKey: PrivateKey?
        /// The encryption key's public JWK thumbprint (`dc_api.jwt`).
        public let thumbprint: [UInt8]?
        /// The DCQL credential queries, for checking what comes back.
        public let queries: [CredentialQuery]
        /// The credential sets.
        public let credentialSets: [CredentialSet]
        /// The protocol identifier used.
        public let protocolIdentifier: String
    }

    /// Builds a request.
    /// - Parameters:
    ///   - queries: the DCQL query's credential queries.
    ///   - credentialSets: the DCQL query's credential sets (empty: none).
    ///   - origin: the page's origin.
    ///   - signing: unsigned, or the verifier's key and certificate chain for the signed forms.
    ///   - framing: how the request is framed for the Digital Credentials API.
    ///   - expectedOrigins: `expected_origins` for signed forms (default: the origin).
    ///   - responseMode: `dc_api.jwt` (default) or `dc_api`.
    ///   - encryptions: `encrypted_response_enc_values_supported` (nil: absent, meaning A128GCM).
    ///   - formats: `vp_formats_supported.mso_mdoc` algorithm lists (nil: the member is absent).
    ///   - extra: further request parameters, added after the standard ones (e.g. `transaction_data`).
    ///   - nonce: the nonce (random by default).
    ///   - encryptionKey: the verifier's response encryption key (a fresh P-256 key by default).
    public static func makeRequest(
        queries: [CredentialQuery], credentialSets: [CredentialSet] = [], origin: Origin,
        signing: Signing = .unsigned, framing: Framing = .digitalRequestList,
        expectedOrigins: [String]? = nil, responseMode: OpenID4VPResponseMode = .dcAPIJWT,
        encryptions: [String]? = ["A128GCM", "A256GCM"], formats: (issuerAuth: [Int64]?, deviceAuth: [Int64]?)? = nil,
        extra: [(String, String)] = [], nonce: String? = nil, encryptionKey: SoftwareSigner? = nil
    ) throws(PresentmentError) -> BuiltRequest {
        let nonceValue: String
        do { nonceValue = try nonce ?? Base64URL.encode(SecureBytes.random(count: 16)) } catch {
            throw PresentmentError(OpenID4VPVerifierRule.randomFailed)
        }
        var params: [(String, JSONValue)] = [
            ("response_type", .string("vp_token")), ("response_mode", .string(responseMode.rawValue)),
            ("nonce", .string(nonceValue)), ("dcql_query", dcql(queries, credentialSets)),
        ]
        var metadata: [(String, JSONValue)] = []
        var key: PrivateKey?
        var thumbprint: [UInt8]?
        if responseMode == .dcAPIJWT {
            do {
                let k = try encryptionKey?.privateKey ?? PrivateKey.generate(.ec(.p256))
                let jwk = try JWK(publicKey: k.publicKey, keyID: "enc-1", use: "enc", algorithm: "ECDH-ES")
                key = k
                thumbprint = jwk.thumbprint
                metadata.append(("jwks", .object([("keys", .array([jwk.json]))])))
            } catch { throw PresentmentError(OpenID4VPVerifierRule.keyGeneration) }
            if let encryptions {
                metadata.append(("encrypted_response_enc_values_supported", .array(encryptions.map { .string($0) })))
            }
        }
        if let formats {
            var mdoc: [(String, JSONValue)] = []
            if let i = formats.issuerAuth {
                mdoc.append(("issuerauth_alg_values", .array(i.map { .number(JSONNumber($0)) })))
            }
            if let d = formats.deviceAuth {
                mdoc.append(("deviceauth_alg_values", .array(d.map { .number(JSONNumber($0)) })))
            }
            metadata.append(("vp_formats_supported", .object([("mso_mdoc", .object(mdoc))])))
        }
        if !metadata.isEmpty { params.append(("client_metadata", .object(metadata))) }
        let form: OpenID4VPRequestForm
        let data: JSONValue
        switch signing {
        case .unsigned:
            form = .unsigned
            for (k, v) in extra { params.append((k, try json(v))) }
            data = .object(params)
        case .signed(let signer):
            form = .signed
            params.insert(("client_id", .string(signer.clientIDString)), at: 0)
            params.append(("expected_origins", .array((expectedOrigins ?? [origin.serialized]).map { .string($0) })))
            for (k, v) in extra { params.append((k, try json(v))) }
            let payload = JSONValue.object(params).serialized
            do {
                let compact = try JWS.signCompact(
                    payload: payload, header: header(signer, clientID: false), key: signer.key.privateKey)
                data = .object([("request", .string(compact))])
            } catch { throw PresentmentError(OpenID4VPVerifierRule.signing) }
        case .multisigned(let signers, let placement):
            form = .multisigned
            params.append(("expected_origins", .array((expectedOrigins ?? [origin.serialized]).map { .string($0) })))
            for (k, v) in extra { params.append((k, try json(v))) }
            let payload = Base64URL.encode(JSONValue.object(params).serialized)
            var entries = [JSONValue]()
            for s in signers {
                do {
                    entries.append(
                        try JWS.signatureEntry(
                            payloadEncoded: payload, header: header(s, clientID: true), key: s.key.privateKey))
                } catch { throw PresentmentError(OpenID4VPVerifierRule.signing) }
            }
            let object = JSONValue.object([("payload", .string(payload)), ("signatures", .array(entries))])
            switch placement {
            case .topLevel: data = object
            case .requestObject: data = .object([("request", object)])
            case .requestString:
                data = .object([("request", .string(String(decoding: object.serialized, as: UTF8.self)))])
            }
        }
        let entry = JSONValue.object([("protocol", .string(form.protocolIdentifier)), ("data", data)])
        let raw: JSONValue =
            switch framing {
            case .dataObject: data
            case .protocolAndData: entry
            case .requestList: .object([("requests", .array([entry]))])
            case .digitalRequestList: .object([("digital", .object([("requests", .array([entry]))]))])
            }
        return BuiltRequest(
            rawRequest: Data(raw.serialized), origin: origin, nonce: nonceValue, responseMode: responseMode,
            encryptionKey: key, thumbprint: thumbprint, queries: queries, credentialSets: credentialSets,
            protocolIdentifier: form.protocolIdentifier)
    }

    /// A JSON text as a value (for `extra`).
    static func json(_ text: String) throws(PresentmentError) -> JSONValue {
        do { return try JSONValue.parse(Array(text.utf8)) } catch {
            throw PresentmentError(OpenID4VPVerifierRule.extraParameter)
        }
    }

    static func header(_ s: Signer, clientID: Bool) -> [(String, JSONValue)] {
        var h: [(String, JSONValue)] = [
            ("typ", .string("oauth-authz-req+jwt")), ("x5c", .array(s.chain.map { .string(Base64.encode($0.der)) })),
        ]
        if clientID { h.append(("client_id", .string(s.clientIDString))) }
        return h
    }

    /// The `dcql_query` object.
    static func dcql(_ queries: [CredentialQuery], _ sets: [CredentialSet]) -> JSONValue {
        var credentials = [JSONValue]()
        for q in queries {
            var m: [(String, JSONValue)] = [
                ("id", .string(q.id)), ("format", .string(q.format)),
                ("meta", .object([("doctype_value", .string(q.docType))])),
            ]
            if let multiple = q.multiple { m.append(("multiple", .bool(multiple))) }
            if let claims = q.claims {
                m.append(
                    (
                        "claims",
                        .array(
                            claims.map { c in
                                var o: [(String, JSONValue)] = []
                                if let id = c.id { o.append(("id", .string(id))) }
                                o.append(
                                    ("path", .array([.string(c.element.nameSpace), .string(c.element.identifier)])))
                                if let values = c.values {
                                    o.append(
                                        (
                                            "values",
                                            .array(
                                                values.map {
                                                    switch $0 {
                                                    case .text(let s): .string(s)
                                                    case .integer(let i): .number(JSONNumber(i))
                                                    case .bool(let b): .bool(b)
                                                    }
                                                })
                                        ))
                                }
                                if let r = c.intentToRetain { o.append(("intent_to_retain", .bool(r))) }
                                return .object(o)
                            })
                    ))
            }
            if let sets = q.claimSets { m.append(("claim_sets", .array(sets.map { .array($0.map { .string($0) }) }))) }
            if let akis = q.trustedAuthorities {
                m.append(
                    (
                        "trusted_authorities",
                        .array([
                            .object([
                                ("type", .string("aki")),
                                ("values", .array(akis.map { .string(Base64URL.encode($0)) })),
                            ])
                        ])
                    ))
            }
            credentials.append(.object(m))
        }
        var out: [(String, JSONValue)] = [("credentials", .array(credentials))]
        if !sets.isEmpty {
            out.append(
                (
                    "credential_sets",
                    .array(
                        sets.map { s in
                            var o: [(String, JSONValue)] = [
                                ("options", .array(s.options.map { .array($0.map { .string($0) }) }))
                            ]
                            if let r = s.required { o.append(("required", .bool(r))) }
                            return .object(o)
                        })
                ))
        }
        return .object(out)
    }
}

extension OpenID4VPReader.BuiltRequest {
    /// What a verifier keeps to open the answer later, as JSON: origin, nonce, response mode,
    /// protocol, the DCQL query, and the encryption key as a private JWK (a test key, for
    /// `dc_api.jwt`). Written by `mdoc-respond reader request` and the vector generator.
    public var state: Data {
        var m: [(String, JSONValue)] = [
            ("origin", .string(origin.serialized)), ("nonce", .string(nonce)),
            ("responseMode", .string(responseMode.rawValue)), ("protocol", .string(protocolIdentifier)),
            ("dcql_query", OpenID4VPReader.dcql(queries, credentialSets)),
        ]
        if let key = encryptionKey, let jwk = try? JWK(publicKey: key.publicKey, keyID: "enc-1"),
            let d = try? key.exportSecret(), case .object(var members) = jwk.json
        {
            members.append(("d", .string(Base64URL.encode(d))))
            m.append(("encryptionKey", .object(members)))
        }
        return Data(JSONValue.object(m).serialized)
    }

    /// Reads a state written by `state`.
    public init(state: Data) throws(PresentmentError) {
        func bad(_ what: String) -> PresentmentError { PresentmentError(OpenID4VPVerifierRule.stateInvalid, at: what) }
        guard let j = try? JSONValue.parse(Array(state)), let originText = j["origin"]?.string,
            let nonce = j["nonce"]?.string, let mode = j["responseMode"]?.string.flatMap(OpenID4VPResponseMode.init),
            let protocolID = j["protocol"]?.string, let dcql = j["dcql_query"]
        else { throw bad("missing members") }
        var key: PrivateKey?
        var thumbprint: [UInt8]?
        if let k = j["encryptionKey"] {
            do {
                let priv = try JWK.privateKey(k)
                key = priv
                thumbprint = try JWK(k).thumbprint
            } catch { throw bad("encryptionKey is not a private EC JWK") }
        }
        let (queries, sets) = try OpenID4VPReader.queries(fromDCQL: dcql)
        self.init(
            rawRequest: Data(), origin: try Origin(originText), nonce: nonce, responseMode: mode, encryptionKey: key,
            thumbprint: thumbprint, queries: queries, credentialSets: sets, protocolIdentifier: protocolID)
    }
}
