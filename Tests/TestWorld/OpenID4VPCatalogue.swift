import CryptoCore
import DCAPIFraming
import Foundation
import JOSE
import MdocCBOR
import OpenID4VP
import AnnexCReader
import OpenID4VPReader
import Presentment
import WebEncoding

/// The OpenID4VP hostile-request catalogue: each row one fault in an otherwise valid request (signed
/// correctly unless the fault is the signature) and the refusal it must get: the rule (so the code),
/// where, and the lower layer's error. Shared by the library tests and the CLI pass.
public enum OpenID4VPCatalogue {
    public struct Row: Sendable {
        public let name: String
        public let raw: Data
        public let origin: String
        /// What it must be refused by.
        public let expected: ExpectedRefusal
        /// The refusal's code.
        public var code: PresentmentError.Code { expected.code }
    }

    static let ns = TestWorld.mDLNS
    static let origin = TestWorld.origin.serialized

    /// A valid parameter set (`dc_api.jwt`, one mdoc query), before any fault.
    static func parameters(_ world: TestWorld, nonce: String = "n-0S6_WzA2Mj") throws -> [(String, JSONValue)] {
        let key = try PrivateKey.generate(.ec(.p256))
        let jwk = try JWK(publicKey: key.publicKey, keyID: "k", use: "enc", algorithm: "ECDH-ES")
        return [
            ("response_type", .string("vp_token")), ("response_mode", .string("dc_api.jwt")), ("nonce", .string(nonce)),
            ("dcql_query", dcql([query()])),
            (
                "client_metadata",
                .object([
                    ("jwks", .object([("keys", .array([jwk.json]))])),
                    ("encrypted_response_enc_values_supported", .array([.string("A128GCM")])),
                ])
            ),
        ]
    }

    static func query(id: String = "mdl", claims: [JSONValue]? = nil) -> JSONValue {
        .object([
            ("id", .string(id)), ("format", .string("mso_mdoc")),
            ("meta", .object([("doctype_value", .string(TestWorld.mDL))])),
            ("claims", .array(claims ?? [.object([("path", .array([.string(ns), .string("family_name")]))])])),
        ])
    }

    static func dcql(_ queries: [JSONValue]) -> JSONValue { .object([("credentials", .array(queries))]) }

    static func replacing(_ p: [(String, JSONValue)], _ name: String, _ value: JSONValue?) -> [(String, JSONValue)] {
        var out = p.filter { $0.0 != name }
        if let value { out.append((name, value)) }
        return out
    }

    static func frame(_ protocolID: String, _ data: JSONValue) -> Data {
        Data(
            JSONValue.object([
                (
                    "digital",
                    .object([("requests", .array([.object([("protocol", .string(protocolID)), ("data", data)])]))])
                )
            ]).serialized)
    }

    static func unsigned(_ p: [(String, JSONValue)]) -> Data { frame("openid4vp-v1-unsigned", .object(p)) }

    /// A compact request object signed with `key` under `header` (typ and x5c of the test verifier unless replaced).
    static func signed(
        _ world: TestWorld, _ p: [(String, JSONValue)], clientID: String? = "x509_san_dns:verifier.example",
        expected: [String]? = [origin], header: [(String, JSONValue)]? = nil, key: PrivateKey? = nil
    ) throws -> Data {
        var params = p
        if let clientID { params.insert(("client_id", .string(clientID)), at: 0) }
        if let expected { params.append(("expected_origins", .array(expected.map { .string($0) }))) }
        let h = header ?? standardHeader(world)
        let compact = try JWS.signCompact(
            payload: JSONValue.object(params).serialized, header: h, key: key ?? world.verifierKey.privateKey)
        return frame("openid4vp-v1-signed", .object([("request", .string(compact))]))
    }

    static func standardHeader(_ world: TestWorld, chain: [Certificate]? = nil) -> [(String, JSONValue)] {
        [
            ("typ", .string("oauth-authz-req+jwt")),
            ("x5c", .array((chain ?? [world.verifierCert]).map { .string(Base64.encode($0.der)) })),
        ]
    }

    /// A compact JWS with an arbitrary header and a raw signature (for algorithms the signer refuses).
    static func rawCompact(header: JSONValue, payload: [UInt8], signature: (String) -> [UInt8]) -> String {
        let input = Base64URL.encode(header.serialized) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(signature(input))
    }

    /// A multisigned request (the spec's top-level form) whose first signature verifies and whose second,
    /// over the same payload with the same header, is made with another key.
    public static func multisignedOneBadOfTwo(world: TestWorld) throws -> Data {
        let p = try parameters(world)
        let payload = Base64URL.encode(
            JSONValue.object(p + [("expected_origins", .array([.string(origin)]))]).serialized)
        let header = standardHeader(world) + [("client_id", .string("x509_san_dns:verifier.example"))]
        let good = try JWS.signatureEntry(payloadEncoded: payload, header: header, key: world.verifierKey.privateKey)
        let bad = try JWS.signatureEntry(
            payloadEncoded: payload, header: header, key: try PrivateKey.generate(.ec(.p256)))
        return frame(
            "openid4vp-v1-multisigned", .object([("payload", .string(payload)), ("signatures", .array([good, bad]))]))
    }

    public static func rows(world: TestWorld) throws -> [Row] {
        var rows = [Row]()
        func add(_ name: String, _ raw: Data, _ expected: ExpectedRefusal, origin: String = origin) {
            rows.append(Row(name: name, raw: raw, origin: origin, expected: expected))
        }
        let p = try parameters(world)
        let payload = JSONValue.object(
            [("client_id", .string("x509_san_dns:verifier.example"))] + p + [
                ("expected_origins", .array([.string(origin)]))
            ]
        ).serialized
        let x5c = JSONValue.array([.string(Base64.encode(world.verifierCert.der))])

        // Algorithms and keys.
        add(
            "alg none",
            frame(
                "openid4vp-v1-signed",
                .object([
                    (
                        "request",
                        .string(
                            Base64URL.encode(
                                JSONValue.object([("alg", .string("none")), ("typ", .string("oauth-authz-req+jwt"))])
                                    .serialized)
                                + "." + Base64URL.encode(payload) + ".")
                    )
                ])),
            ExpectedRefusal(OpenID4VPRule.algorithmUnsupported, at: "request", lower: "jose.unsupportedAlgorithm"))
        let leafKey = try world.verifierCert.validatedPublicKey().rawRepresentation
        add(
            "HS256 with the leaf's public key as the secret",
            frame(
                "openid4vp-v1-signed",
                .object([
                    (
                        "request",
                        .string(
                            rawCompact(
                                header: .object([
                                    ("alg", .string("HS256")), ("typ", .string("oauth-authz-req+jwt")), ("x5c", x5c),
                                ]),
                                payload: payload,
                                signature: { DigestAlgorithm.sha256.hmac(key: leafKey, data: Array($0.utf8)) }))
                    )
                ])),
            ExpectedRefusal(OpenID4VPRule.algorithmUnsupported, at: "request", lower: "jose.unsupportedAlgorithm"))
        let stranger = try PrivateKey.generate(.ec(.p256))
        add(
            "x5c of the verifier, signed with another key", try signed(world, p, key: stranger),
            ExpectedRefusal(OpenID4VPRule.signatureInvalid, at: "request", lower: "jose.signatureInvalid"))
        add(
            "kid naming the response encryption key, no x5c",
            try signed(world, p, header: [("typ", .string("oauth-authz-req+jwt")), ("kid", .string("k"))]),
            ExpectedRefusal(OpenID4VPRule.x5cMissing, at: "request"))
        add(
            "ES384 header over a P-256 certificate",
            frame(
                "openid4vp-v1-signed",
                .object([
                    (
                        "request",
                        .string(
                            rawCompact(
                                header: .object([
                                    ("alg", .string("ES384")), ("typ", .string("oauth-authz-req+jwt")), ("x5c", x5c),
                                ]),
                                payload: payload, signature: { _ in [UInt8](repeating: 1, count: 96) }))
                    )
                ])), ExpectedRefusal(OpenID4VPRule.signatureInvalid, at: "request", lower: "jose."))
        add(
            "crit in the request object header",
            try signed(
                world, p,
                header: standardHeader(world) + [("crit", .array([.string("exp")])), ("exp", .number(JSONNumber(1)))]),
            ExpectedRefusal(OpenID4VPRule.algorithmUnsupported, at: "request", lower: "jose.unsupportedCritical"))
        add(
            "typ missing", try signed(world, p, header: [("x5c", x5c)]),
            ExpectedRefusal(OpenID4VPRule.typ, at: "request"))
        add(
            "typ JWT", try signed(world, p, header: [("typ", .string("JWT")), ("x5c", x5c)]),
            ExpectedRefusal(OpenID4VPRule.typ, at: "request"))
        var tampered = Array(try signed(world, p))
        // Flip one character in the payload segment of the compact JWS (a valid base64url character).
        if let dot = String(decoding: tampered, as: UTF8.self).range(of: ".ey") {
            let k =
                String(decoding: tampered, as: UTF8.self).utf8.distance(
                    from: String(decoding: tampered, as: UTF8.self).utf8.startIndex, to: dot.lowerBound) + 6
            tampered[k] = tampered[k] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        }
        add(
            "a payload byte changed after signing", Data(tampered),
            ExpectedRefusal(OpenID4VPRule.signatureInvalid, at: "request", lower: "jose.signatureInvalid"))

        // Client identifiers.
        for (prefix, rule) in [
            ("redirect_uri:https://verifier.example/cb", OpenID4VPRule.redirectURIPrefix),
            ("decentralized_identifier:did:example:123", .prefixUnsupported),
            ("verifier_attestation:verifier.example", .prefixUnsupported),
            ("openid_federation:https://verifier.example", .prefixUnsupported),
            ("origin:https://verifier.example", .originPrefix),
            ("verifier.example", .clientIDNoPrefix),
            ("https://verifier.example", .prefixUnsupported),
        ] {
            add("client_id \(prefix)", try signed(world, p, clientID: prefix), ExpectedRefusal(rule))
        }
        add(
            "x509_san_dns naming another host", try signed(world, p, clientID: "x509_san_dns:evil.example"),
            ExpectedRefusal(OpenID4VPRule.clientIDNotSAN, at: "request"))
        add(
            "x509_hash of another certificate",
            try signed(
                world, p, clientID: "x509_hash:" + Base64URL.encode(DigestAlgorithm.sha256.hash(world.readerCert.der))),
            ExpectedRefusal(OpenID4VPRule.clientIDNotHash, at: "request"))
        add(
            "signed without client_id", try signed(world, p, clientID: nil),
            ExpectedRefusal(OpenID4VPRule.signedLacksClientID))

        // expected_origins: compared verbatim.
        for near in [
            "https://verifier.example/", "https://Verifier.example", "https://verifier.example:443",
            "http://verifier.example",
        ] {
            add(
                "expected_origins \(near)", try signed(world, p, expected: [near]),
                ExpectedRefusal(OpenID4VPRule.originNotExpected))
        }
        add(
            "expected_origins missing", try signed(world, p, expected: nil),
            ExpectedRefusal(OpenID4VPRule.expectedOrigins))
        add(
            "expected_origins empty", try signed(world, p, expected: []), ExpectedRefusal(OpenID4VPRule.expectedOrigins)
        )

        // Parameters.
        add(
            "response_type code", unsigned(replacing(p, "response_type", .string("code"))),
            ExpectedRefusal(OpenID4VPRule.responseType))
        add(
            "response_mode direct_post", unsigned(replacing(p, "response_mode", .string("direct_post"))),
            ExpectedRefusal(OpenID4VPRule.responseMode))
        add(
            "response_mode a number", unsigned(replacing(p, "response_mode", .number(JSONNumber(1)))),
            ExpectedRefusal(OpenID4VPRule.responseMode))
        add(
            "response_mode in capitals", unsigned(replacing(p, "response_mode", .string("DC_API.JWT"))),
            ExpectedRefusal(OpenID4VPRule.responseMode))
        add(
            "response_mode missing", unsigned(replacing(p, "response_mode", nil)),
            ExpectedRefusal(OpenID4VPRule.responseMode))
        add("nonce missing", unsigned(replacing(p, "nonce", nil)), ExpectedRefusal(OpenID4VPRule.nonceMissing))
        add("nonce with a space", unsigned(replacing(p, "nonce", .string("a b"))), ExpectedRefusal(OpenID4VPRule.nonce))
        add(
            "nonce a number", unsigned(replacing(p, "nonce", .number(JSONNumber(7)))),
            ExpectedRefusal(OpenID4VPRule.nonceMissing))
        add("dcql_query missing", unsigned(replacing(p, "dcql_query", nil)), ExpectedRefusal(OpenID4VPRule.dcqlMissing))
        add("scope", unsigned(p + [("scope", .string("mdl"))]), ExpectedRefusal(OpenID4VPRule.scope))
        add(
            "transaction_data of an unknown type",
            unsigned(
                p + [
                    (
                        "transaction_data",
                        .array([.string(Base64URL.encode(Array(#"{"type":"x","credential_ids":["mdl"]}"#.utf8)))])
                    )
                ]),
            ExpectedRefusal(OpenID4VPRule.transactionData))
        add(
            "an unsigned request carrying a request object",
            unsigned(p + [("request", .string("e30.e30.AA"))]),
            ExpectedRefusal(OpenID4VPRule.unsignedCarriesRequestObject))
        add(
            "a JWE where the request object should be",
            frame("openid4vp-v1-signed", .object([("request", .string("a.b.c.d.e"))])),
            ExpectedRefusal(OpenID4VPRule.requestObjectMalformed, at: "request", lower: "jose.malformed"))

        // Response encryption.
        let metadata = { (m: [(String, JSONValue)]) in unsigned(replacing(p, "client_metadata", .object(m))) }
        add("dc_api.jwt without jwks", metadata([]), ExpectedRefusal(OpenID4VPRule.jwksMissing))
        let x25519 = JSONValue.object([
            ("kty", .string("OKP")), ("crv", .string("X25519")), ("use", .string("enc")), ("alg", .string("ECDH-ES")),
            ("x", .string(Base64URL.encode([UInt8](repeating: 9, count: 32)))),
        ])
        add(
            "only an X25519 encryption key", metadata([("jwks", .object([("keys", .array([x25519]))]))]),
            ExpectedRefusal(OpenID4VPRule.noEncryptionKey))
        let offCurve = JSONValue.object([
            ("kty", .string("EC")), ("crv", .string("P-256")), ("use", .string("enc")), ("alg", .string("ECDH-ES")),
            ("x", .string(Base64URL.encode([UInt8](repeating: 1, count: 32)))),
            ("y", .string(Base64URL.encode([UInt8](repeating: 2, count: 32)))),
        ])
        add(
            "an encryption key off its curve", metadata([("jwks", .object([("keys", .array([offCurve]))]))]),
            ExpectedRefusal(OpenID4VPRule.encryptionKeyInvalid, lower: "jose.invalidKey"))
        let good = p.first { $0.0 == "client_metadata" }!.1["jwks"]!
        add(
            "only A128CBC-HS256 offered",
            metadata([("jwks", good), ("encrypted_response_enc_values_supported", .array([.string("A128CBC-HS256")]))]),
            ExpectedRefusal(OpenID4VPRule.noSupportedEnc))
        let encValues: [(String, JSONValue)] = [
            ("a string", .string("A128GCM")), ("empty", .array([])),
            ("with a number", .array([.string("A128GCM"), .number(JSONNumber(1))])),
            ("of 17 names", .array(Array(repeating: .string("A128GCM"), count: 17))),
        ]
        for (what, value) in encValues {
            add(
                "encrypted_response_enc_values_supported \(what)",
                metadata([("jwks", good), ("encrypted_response_enc_values_supported", value)]),
                ExpectedRefusal(OpenID4VPRule.encValues))
        }
        let goodKey = good["keys"]!.array![0]
        add(
            "jwks keys not an array", metadata([("jwks", .object([("keys", goodKey)]))]),
            ExpectedRefusal(OpenID4VPRule.jwksMissing))
        add(
            "jwks with a key that is not an object before the encryption key",
            metadata([("jwks", .object([("keys", .array([.string("k"), goodKey]))]))]),
            ExpectedRefusal(OpenID4VPRule.jwksKeyNotObject))
        let algorithms = { (v: JSONValue) in
            metadata([
                ("jwks", good),
                ("vp_formats_supported", .object([("mso_mdoc", .object([("deviceauth_alg_values", v)]))])),
            ])
        }
        add(
            "deviceauth_alg_values empty", algorithms(.array([])),
            ExpectedRefusal(OpenID4VPRule.algorithmListShape, at: "deviceauth_alg_values"))
        add(
            "deviceauth_alg_values a number", algorithms(.number(JSONNumber(-7))),
            ExpectedRefusal(OpenID4VPRule.algorithmListShape, at: "deviceauth_alg_values"))
        add(
            "deviceauth_alg_values with a name", algorithms(.array([.number(JSONNumber(-7)), .string("ES256")])),
            ExpectedRefusal(OpenID4VPRule.algorithmNotInteger, at: "deviceauth_alg_values"))
        add(
            "deviceauth_alg_values with a fraction", algorithms(.array([.number(JSONNumber("-7.5")!)])),
            ExpectedRefusal(OpenID4VPRule.algorithmNotInteger, at: "deviceauth_alg_values"))

        // DCQL.
        let dcql = { (q: JSONValue) in unsigned(replacing(p, "dcql_query", q)) }
        add(
            "duplicate credential query ids", dcql(Self.dcql([query(), query()])),
            ExpectedRefusal(DCQLRule.duplicateQueryID))
        add("no credential queries", dcql(Self.dcql([])), ExpectedRefusal(DCQLRule.credentials))
        let queryWith = { (name: String, value: JSONValue?) -> JSONValue in
            guard case .object(let members) = query() else { return query() }
            return .object(Self.replacing(members, name, value))
        }
        add(
            "format a number", dcql(Self.dcql([queryWith("format", .number(JSONNumber(1)))])),
            ExpectedRefusal(DCQLRule.formatMissing))
        add(
            "meta not an object", dcql(Self.dcql([queryWith("meta", .string("m"))])),
            ExpectedRefusal(DCQLRule.metaMissing))
        add(
            "meta without doctype_value", dcql(Self.dcql([queryWith("meta", .object([]))])),
            ExpectedRefusal(DCQLRule.doctypeValueMissing))
        add(
            "17 credential queries", dcql(Self.dcql((0..<17).map { query(id: "q\($0)") })),
            ExpectedRefusal(DCQLRule.tooManyQueries))
        let claim = { (path: JSONValue) in JSONValue.object([("path", path)]) }
        add(
            "claim path of one component", dcql(Self.dcql([query(claims: [claim(.array([.string("family_name")]))])])),
            ExpectedRefusal(DCQLRule.claimPath))
        add(
            "claim path of three components",
            dcql(Self.dcql([query(claims: [claim(.array([.string(ns), .string("a"), .string("b")]))])])),
            ExpectedRefusal(DCQLRule.claimPath))
        add(
            "claim path with a number",
            dcql(Self.dcql([query(claims: [claim(.array([.string(ns), .number(JSONNumber(0))]))])])),
            ExpectedRefusal(DCQLRule.claimPath))
        add(
            "claim path with an empty component",
            dcql(Self.dcql([query(claims: [claim(.array([.string(ns), .string("")]))])])),
            ExpectedRefusal(DCQLRule.claimPath))
        add(
            "claim path component past 256 bytes",
            dcql(
                Self.dcql([query(claims: [claim(.array([.string(String(repeating: "n", count: 257)), .string("a")]))])])
            ),
            ExpectedRefusal(DCQLRule.claimPath))
        add(
            "intent_to_retain not a boolean",
            dcql(
                Self.dcql([
                    query(claims: [
                        .object([
                            ("path", .array([.string(ns), .string("family_name")])),
                            ("intent_to_retain", .string("no")),
                        ])
                    ])
                ])),
            ExpectedRefusal(DCQLRule.intentToRetainNotBoolean))
        add(
            "a claim breaking the path and the intent_to_retain rules is refused for its path",
            dcql(
                Self.dcql([
                    query(claims: [
                        .object([("path", .array([.string(ns)])), ("intent_to_retain", .number(JSONNumber(1)))])
                    ])
                ])),
            ExpectedRefusal(DCQLRule.claimPath))
        add(
            "129 claims in a query",
            dcql(Self.dcql([query(claims: (0..<129).map { claim(.array([.string(ns), .string("e\($0)")])) })])),
            ExpectedRefusal(DCQLRule.tooManyClaimsInQuery))
        // A repeated path with other constraints refuses (merging would drop the values probe).
        let fnPath = JSONValue.array([.string(ns), .string("family_name")])
        add(
            "a repeated claim path drops a values constraint",
            dcql(
                Self.dcql([
                    .object([
                        ("id", .string("m")), ("format", .string("mso_mdoc")),
                        ("meta", .object([("doctype_value", .string(TestWorld.mDL))])),
                        (
                            "claims",
                            .array([
                                .object([("id", .string("a")), ("path", fnPath)]),
                                .object([("id", .string("b")), ("path", fnPath), ("values", .array([.string("DE")]))]),
                            ])
                        ),
                        ("claim_sets", .array([.array([.string("b")])])),
                    ])
                ])), ExpectedRefusal(DCQLRule.conflictingRepeatedClaim))
        add(
            "a repeated claim path with another intent_to_retain",
            dcql(
                Self.dcql([
                    query(claims: [
                        .object([("path", fnPath)]), .object([("path", fnPath), ("intent_to_retain", .bool(true))]),
                    ])
                ])), ExpectedRefusal(DCQLRule.conflictingRepeatedClaim))
        // base64url is strict (no padding), as the platform is.
        var aki = query()
        if case .object(var members) = aki {
            members.append(
                (
                    "trusted_authorities",
                    .array([.object([("type", .string("aki")), ("values", .array([.string("AQI=")]))])])
                ))
            aki = .object(members)
        }
        add(
            "a padded base64url aki trusted authority", dcql(Self.dcql([aki])),
            ExpectedRefusal(DCQLRule.akiNotBase64URL))
        add(
            "a claim value that is a float",
            dcql(
                Self.dcql([
                    query(claims: [
                        .object([
                            ("path", .array([.string(ns), .string("age")])),
                            ("values", .array([.number(JSONNumber("1.5")!)])),
                        ])
                    ])
                ])),
            ExpectedRefusal(DCQLRule.claimValueNotInteger))
        add(
            "claim_sets naming an unknown claim",
            dcql(
                .object([
                    (
                        "credentials",
                        .array([
                            .object([
                                ("id", .string("m")), ("format", .string("mso_mdoc")),
                                ("meta", .object([("doctype_value", .string(TestWorld.mDL))])),
                                (
                                    "claims",
                                    .array([
                                        .object([("id", .string("a")), ("path", .array([.string(ns), .string("x")]))])
                                    ])
                                ),
                                ("claim_sets", .array([.array([.string("b")])])),
                            ])
                        ])
                    )
                ])), ExpectedRefusal(DCQLRule.claimSetUnknownClaim))
        add(
            "credential set naming an unknown query",
            dcql(
                .object([
                    ("credentials", .array([query()])),
                    ("credential_sets", .array([.object([("options", .array([.array([.string("x")])]))])])),
                ])),
            ExpectedRefusal(DCQLRule.credentialSetUnknownQuery))
        // The optional boolean members, each refused under its own rule when not a boolean.
        let withMember = { (name: String, value: JSONValue) -> JSONValue in
            guard case .object(let members) = query() else { return query() }
            return .object(members + [(name, value)])
        }
        add(
            "multiple not a boolean", dcql(Self.dcql([withMember("multiple", .string("true"))])),
            ExpectedRefusal(DCQLRule.multipleNotBoolean))
        add(
            "require_cryptographic_holder_binding not a boolean",
            dcql(Self.dcql([withMember("require_cryptographic_holder_binding", .number(JSONNumber(1)))])),
            ExpectedRefusal(DCQLRule.holderBindingNotBoolean))
        add(
            "credential set required not a boolean",
            dcql(
                .object([
                    ("credentials", .array([query()])),
                    (
                        "credential_sets",
                        .array([
                            .object([("options", .array([.array([.string("mdl")])])), ("required", .string("yes"))])
                        ])
                    ),
                ])),
            ExpectedRefusal(DCQLRule.credentialSetRequired))
        add(
            "a credential query id with a space", dcql(Self.dcql([query(id: "a b")])), ExpectedRefusal(DCQLRule.queryID)
        )
        var deep = JSONValue.string("x")
        for _ in 0..<40 { deep = .array([deep]) }
        add(
            "nesting 40 deep in the parameters", unsigned(p + [("extension", deep)]),
            ExpectedRefusal(OpenID4VPRule.dataOverBounds))

        // Multisigned.
        let dnsSigner = OpenID4VPReader.Signer(
            key: world.verifierKey, chain: [world.verifierCert], clientID: .sanDNS("verifier.example"))
        let payloadWithClient = Base64URL.encode(
            JSONValue.object(
                [("client_id", .string("x509_san_dns:verifier.example"))] + p + [
                    ("expected_origins", .array([.string(origin)]))
                ]
            ).serialized)
        let entry = try JWS.signatureEntry(
            payloadEncoded: payloadWithClient,
            header: standardHeader(world) + [("client_id", .string("x509_san_dns:verifier.example"))],
            key: world.verifierKey.privateKey)
        add(
            "multisigned with client_id in the payload",
            frame(
                "openid4vp-v1-multisigned",
                .object([("payload", .string(payloadWithClient)), ("signatures", .array([entry]))])),
            ExpectedRefusal(OpenID4VPRule.payloadClientID, at: "client_id"))
        let cleanPayload = Base64URL.encode(
            JSONValue.object(p + [("expected_origins", .array([.string(origin)]))]).serialized)
        let bad2 = try JWS.signatureEntry(
            payloadEncoded: cleanPayload,
            header: standardHeader(world) + [("client_id", .string(dnsSigner.clientIDString))],
            key: stranger)
        // One bad signature of two is dropped and the request answered through the other (see
        // TrustAndDispatchTests); none verifying refuses with the first failure.
        let bad1 = try JWS.signatureEntry(
            payloadEncoded: cleanPayload,
            header: standardHeader(world) + [("client_id", .string(dnsSigner.clientIDString))],
            key: stranger)
        add(
            "multisigned with no good signature of two",
            frame(
                "openid4vp-v1-multisigned",
                .object([("payload", .string(cleanPayload)), ("signatures", .array([bad1, bad2]))])),
            ExpectedRefusal(OpenID4VPRule.signatureInvalid, at: "signatures[0]", lower: "jose.signatureInvalid"))
        let noClient = try JWS.signatureEntry(
            payloadEncoded: cleanPayload, header: standardHeader(world), key: world.verifierKey.privateKey)
        add(
            "multisigned signature without client_id",
            frame(
                "openid4vp-v1-multisigned",
                .object([("payload", .string(cleanPayload)), ("signatures", .array([noClient]))])),
            ExpectedRefusal(OpenID4VPRule.signatureLacksClientID, at: "signatures[0]"))
        add(
            "multisigned given as a compact JWS",
            frame("openid4vp-v1-multisigned", .object([("request", .string("e30.e30.AA"))])),
            ExpectedRefusal(OpenID4VPRule.noJWSJSON))

        // Framing.
        add(
            "no openid4vp entry", Data(#"{"digital":{"requests":[{"protocol":"org-iso-mdoc","data":{}}]}}"#.utf8),
            ExpectedRefusal(FramingRule.noEntry))
        add(
            "openid4vp-v2-unsigned", frame("openid4vp-v2-unsigned", .object(p)), ExpectedRefusal(FramingRule.noEntry))
        // Protocol identifiers match exactly: no case folding, no bare prefix, no suffix.
        for near in ["openid4vp-v1-Unsigned", "openid4vp-v1-", "openid4vp-v1-unsigned ", "openid4vp-v1-unsignedx"] {
            add("protocol \"\(near)\"", frame(near, .object(p)), ExpectedRefusal(FramingRule.noEntry))
        }
        add(
            "origin with a path", unsigned(p), ExpectedRefusal(OriginRule.path),
            origin: "https://verifier.example/path")
        return rows
    }
}

extension TestWorld {
    /// One `{"digital": {"requests": [...]}}` offering an Annex C entry first, then an OpenID4VP one
    /// (a page asking in both protocols).
    public static func combined(_ annexC: AnnexCReader.BuiltRequest, _ oid: OpenID4VPReader.BuiltRequest) throws
        -> Data
    {
        func entries(_ raw: Data) throws -> [JSONValue] {
            try JSONValue.parse(Array(raw))["digital"]!["requests"]!.array!
        }
        let all = try entries(annexC.rawRequest) + entries(oid.rawRequest)
        return Data(JSONValue.object([("digital", .object([("requests", .array(all))]))]).serialized)
    }
}
