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

extension OpenID4VPCatalogue {
    /// The rows about the answer's terms: response encryption, DCQL, strict base64url, boolean members, multisigned requests and framing.
    static func responseAndQueryRows(world: TestWorld) throws -> [Row] {
        var rows = Rows()
        let p = try parameters(world)
        // A key no certificate names (for signatures that must not verify).
        let stranger = try PrivateKey.generate(.ec(.p256))
        // Response encryption.
        let metadata = { (m: [(String, JSONValue)]) in unsigned(replacing(p, "client_metadata", .object(m))) }
        rows.add("dc_api.jwt without jwks", metadata([]), ExpectedRefusal(OpenID4VPRule.jwksMissing))
        let x25519 = JSONValue.object([
            ("kty", .string("OKP")), ("crv", .string("X25519")), ("use", .string("enc")), ("alg", .string("ECDH-ES")),
            ("x", .string(Base64URL.encode([UInt8](repeating: 9, count: 32)))),
        ])
        rows.add(
            "only an X25519 encryption key", metadata([("jwks", .object([("keys", .array([x25519]))]))]),
            ExpectedRefusal(OpenID4VPRule.noEncryptionKey))
        let offCurve = JSONValue.object([
            ("kty", .string("EC")), ("crv", .string("P-256")), ("use", .string("enc")), ("alg", .string("ECDH-ES")),
            ("x", .string(Base64URL.encode([UInt8](repeating: 1, count: 32)))),
            ("y", .string(Base64URL.encode([UInt8](repeating: 2, count: 32)))),
        ])
        rows.add(
            "an encryption key off its curve", metadata([("jwks", .object([("keys", .array([offCurve]))]))]),
            ExpectedRefusal(OpenID4VPRule.encryptionKeyInvalid, lower: "jose.invalidKey"))
        let good = p.first { $0.0 == "client_metadata" }!.1["jwks"]!
        rows.add(
            "only A128CBC-HS256 offered",
            metadata([("jwks", good), ("encrypted_response_enc_values_supported", .array([.string("A128CBC-HS256")]))]),
            ExpectedRefusal(OpenID4VPRule.noSupportedEnc))
        let encValues: [(String, JSONValue)] = [
            ("a string", .string("A128GCM")), ("empty", .array([])),
            ("with a number", .array([.string("A128GCM"), .number(JSONNumber(1))])),
            ("of 17 names", .array(Array(repeating: .string("A128GCM"), count: 17))),
        ]
        for (what, value) in encValues {
            rows.add(
                "encrypted_response_enc_values_supported \(what)",
                metadata([("jwks", good), ("encrypted_response_enc_values_supported", value)]),
                ExpectedRefusal(OpenID4VPRule.encValues))
        }
        let goodKey = good["keys"]!.array![0]
        rows.add(
            "jwks keys not an array", metadata([("jwks", .object([("keys", goodKey)]))]),
            ExpectedRefusal(OpenID4VPRule.jwksMissing))
        rows.add(
            "jwks with a key that is not an object before the encryption key",
            metadata([("jwks", .object([("keys", .array([.string("k"), goodKey]))]))]),
            ExpectedRefusal(OpenID4VPRule.jwksKeyNotObject))
        let algorithms = { (v: JSONValue) in
            metadata([
                ("jwks", good),
                ("vp_formats_supported", .object([("mso_mdoc", .object([("deviceauth_alg_values", v)]))])),
            ])
        }
        rows.add(
            "deviceauth_alg_values empty", algorithms(.array([])),
            ExpectedRefusal(OpenID4VPRule.algorithmListShape, at: "deviceauth_alg_values"))
        rows.add(
            "deviceauth_alg_values a number", algorithms(.number(JSONNumber(-7))),
            ExpectedRefusal(OpenID4VPRule.algorithmListShape, at: "deviceauth_alg_values"))
        rows.add(
            "deviceauth_alg_values with a name", algorithms(.array([.number(JSONNumber(-7)), .string("ES256")])),
            ExpectedRefusal(OpenID4VPRule.algorithmNotInteger, at: "deviceauth_alg_values"))
        rows.add(
            "deviceauth_alg_values with a fraction", algorithms(.array([.number(JSONNumber("-7.5")!)])),
            ExpectedRefusal(OpenID4VPRule.algorithmNotInteger, at: "deviceauth_alg_values"))

        // DCQL.
        let dcql = { (q: JSONValue) in unsigned(replacing(p, "dcql_query", q)) }
        rows.add(
            "duplicate credential query ids", dcql(Self.dcql([query(), query()])),
            ExpectedRefusal(DCQLRule.duplicateQueryID))
        rows.add("no credential queries", dcql(Self.dcql([])), ExpectedRefusal(DCQLRule.credentials))
        let queryWith = { (name: String, value: JSONValue?) -> JSONValue in
            guard case .object(let members) = query() else { return query() }
            return .object(Self.replacing(members, name, value))
        }
        rows.add(
            "format a number", dcql(Self.dcql([queryWith("format", .number(JSONNumber(1)))])),
            ExpectedRefusal(DCQLRule.formatMissing))
        rows.add(
            "meta not an object", dcql(Self.dcql([queryWith("meta", .string("m"))])),
            ExpectedRefusal(DCQLRule.metaMissing))
        rows.add(
            "meta without doctype_value", dcql(Self.dcql([queryWith("meta", .object([]))])),
            ExpectedRefusal(DCQLRule.doctypeValueMissing))
        rows.add(
            "17 credential queries", dcql(Self.dcql((0..<17).map { query(id: "q\($0)") })),
            ExpectedRefusal(DCQLRule.tooManyQueries))
        let claim = { (path: JSONValue) in JSONValue.object([("path", path)]) }
        rows.add(
            "claim path of one component", dcql(Self.dcql([query(claims: [claim(.array([.string("family_name")]))])])),
            ExpectedRefusal(DCQLRule.claimPath))
        rows.add(
            "claim path of three components",
            dcql(Self.dcql([query(claims: [claim(.array([.string(ns), .string("a"), .string("b")]))])])),
            ExpectedRefusal(DCQLRule.claimPath))
        rows.add(
            "claim path with a number",
            dcql(Self.dcql([query(claims: [claim(.array([.string(ns), .number(JSONNumber(0))]))])])),
            ExpectedRefusal(DCQLRule.claimPath))
        rows.add(
            "claim path with an empty component",
            dcql(Self.dcql([query(claims: [claim(.array([.string(ns), .string("")]))])])),
            ExpectedRefusal(DCQLRule.claimPath))
        rows.add(
            "claim path component past 256 bytes",
            dcql(
                Self.dcql([query(claims: [claim(.array([.string(String(repeating: "n", count: 257)), .string("a")]))])])
            ),
            ExpectedRefusal(DCQLRule.claimPath))
        rows.add(
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
        rows.add(
            "a claim breaking the path and the intent_to_retain rules is refused for its path",
            dcql(
                Self.dcql([
                    query(claims: [
                        .object([("path", .array([.string(ns)])), ("intent_to_retain", .number(JSONNumber(1)))])
                    ])
                ])),
            ExpectedRefusal(DCQLRule.claimPath))
        rows.add(
            "129 claims in a query",
            dcql(Self.dcql([query(claims: (0..<129).map { claim(.array([.string(ns), .string("e\($0)")])) })])),
            ExpectedRefusal(DCQLRule.tooManyClaimsInQuery))
        // A repeated path with other constraints refuses (merging would drop the values probe).
        let fnPath = JSONValue.array([.string(ns), .string("family_name")])
        rows.add(
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
        rows.add(
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
        rows.add(
            "a padded base64url aki trusted authority", dcql(Self.dcql([aki])),
            ExpectedRefusal(DCQLRule.akiNotBase64URL))
        rows.add(
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
        rows.add(
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
        rows.add(
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
        rows.add(
            "multiple not a boolean", dcql(Self.dcql([withMember("multiple", .string("true"))])),
            ExpectedRefusal(DCQLRule.multipleNotBoolean))
        rows.add(
            "require_cryptographic_holder_binding not a boolean",
            dcql(Self.dcql([withMember("require_cryptographic_holder_binding", .number(JSONNumber(1)))])),
            ExpectedRefusal(DCQLRule.holderBindingNotBoolean))
        rows.add(
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
        rows.add(
            "a credential query id with a space", dcql(Self.dcql([query(id: "a b")])), ExpectedRefusal(DCQLRule.queryID)
        )
        var deep = JSONValue.string("x")
        for _ in 0..<40 { deep = .array([deep]) }
        rows.add(
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
        rows.add(
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
        rows.add(
            "multisigned with no good signature of two",
            frame(
                "openid4vp-v1-multisigned",
                .object([("payload", .string(cleanPayload)), ("signatures", .array([bad1, bad2]))])),
            ExpectedRefusal(OpenID4VPRule.signatureInvalid, at: "signatures[0]", lower: "jose.signatureInvalid"))
        let noClient = try JWS.signatureEntry(
            payloadEncoded: cleanPayload, header: standardHeader(world), key: world.verifierKey.privateKey)
        rows.add(
            "multisigned signature without client_id",
            frame(
                "openid4vp-v1-multisigned",
                .object([("payload", .string(cleanPayload)), ("signatures", .array([noClient]))])),
            ExpectedRefusal(OpenID4VPRule.signatureLacksClientID, at: "signatures[0]"))
        rows.add(
            "multisigned given as a compact JWS",
            frame("openid4vp-v1-multisigned", .object([("request", .string("e30.e30.AA"))])),
            ExpectedRefusal(OpenID4VPRule.noJWSJSON))

        // Framing.
        rows.add(
            "no openid4vp entry", Data(#"{"digital":{"requests":[{"protocol":"org-iso-mdoc","data":{}}]}}"#.utf8),
            ExpectedRefusal(FramingRule.noEntry))
        rows.add(
            "openid4vp-v2-unsigned", frame("openid4vp-v2-unsigned", .object(p)), ExpectedRefusal(FramingRule.noEntry))
        // Protocol identifiers match exactly: no case folding, no bare prefix, no suffix.
        for near in ["openid4vp-v1-Unsigned", "openid4vp-v1-", "openid4vp-v1-unsigned ", "openid4vp-v1-unsignedx"] {
            rows.add("protocol \"\(near)\"", frame(near, .object(p)), ExpectedRefusal(FramingRule.noEntry))
        }
        rows.add(
            "origin with a path", unsigned(p), ExpectedRefusal(OriginRule.path),
            origin: "https://verifier.example/path")
        return rows.list
    }
}
