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
    /// The rows about the request object: algorithms and keys, the signature, client identifiers, expected_origins and the parameters.
    static func signatureAndParameterRows(world: TestWorld) throws -> [Row] {
        var rows = Rows()
        let p = try parameters(world)
        let payload = JSONValue.object(
            [("client_id", .string("x509_san_dns:verifier.example"))] + p + [
                ("expected_origins", .array([.string(origin)]))
            ]
        ).serialized
        let x5c = JSONValue.array([.string(Base64.encode(world.verifierCert.der))])

        // Algorithms and keys.
        rows.add(
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
        rows.add(
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
        rows.add(
            "x5c of the verifier, signed with another key", try signed(world, p, key: stranger),
            ExpectedRefusal(OpenID4VPRule.signatureInvalid, at: "request", lower: "jose.signatureInvalid"))
        rows.add(
            "kid naming the response encryption key, no x5c",
            try signed(world, p, header: [("typ", .string("oauth-authz-req+jwt")), ("kid", .string("k"))]),
            ExpectedRefusal(OpenID4VPRule.x5cMissing, at: "request"))
        rows.add(
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
        rows.add(
            "crit in the request object header",
            try signed(
                world, p,
                header: standardHeader(world) + [("crit", .array([.string("exp")])), ("exp", .number(JSONNumber(1)))]),
            ExpectedRefusal(OpenID4VPRule.algorithmUnsupported, at: "request", lower: "jose.unsupportedCritical"))
        rows.add(
            "typ missing", try signed(world, p, header: [("x5c", x5c)]),
            ExpectedRefusal(OpenID4VPRule.typ, at: "request"))
        rows.add(
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
        rows.add(
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
            rows.add("client_id \(prefix)", try signed(world, p, clientID: prefix), ExpectedRefusal(rule))
        }
        rows.add(
            "x509_san_dns naming another host", try signed(world, p, clientID: "x509_san_dns:evil.example"),
            ExpectedRefusal(OpenID4VPRule.clientIDNotSAN, at: "request"))
        rows.add(
            "x509_hash of another certificate",
            try signed(
                world, p, clientID: "x509_hash:" + Base64URL.encode(DigestAlgorithm.sha256.hash(world.readerCert.der))),
            ExpectedRefusal(OpenID4VPRule.clientIDNotHash, at: "request"))
        rows.add(
            "signed without client_id", try signed(world, p, clientID: nil),
            ExpectedRefusal(OpenID4VPRule.signedLacksClientID))

        // expected_origins: compared verbatim.
        for near in [
            "https://verifier.example/", "https://Verifier.example", "https://verifier.example:443",
            "http://verifier.example",
        ] {
            rows.add(
                "expected_origins \(near)", try signed(world, p, expected: [near]),
                ExpectedRefusal(OpenID4VPRule.originNotExpected))
        }
        rows.add(
            "expected_origins missing", try signed(world, p, expected: nil),
            ExpectedRefusal(OpenID4VPRule.expectedOrigins))
        rows.add(
            "expected_origins empty", try signed(world, p, expected: []), ExpectedRefusal(OpenID4VPRule.expectedOrigins)
        )

        // Parameters.
        rows.add(
            "response_type code", unsigned(replacing(p, "response_type", .string("code"))),
            ExpectedRefusal(OpenID4VPRule.responseType))
        rows.add(
            "response_mode direct_post", unsigned(replacing(p, "response_mode", .string("direct_post"))),
            ExpectedRefusal(OpenID4VPRule.responseMode))
        rows.add(
            "response_mode a number", unsigned(replacing(p, "response_mode", .number(JSONNumber(1)))),
            ExpectedRefusal(OpenID4VPRule.responseMode))
        rows.add(
            "response_mode in capitals", unsigned(replacing(p, "response_mode", .string("DC_API.JWT"))),
            ExpectedRefusal(OpenID4VPRule.responseMode))
        rows.add(
            "response_mode missing", unsigned(replacing(p, "response_mode", nil)),
            ExpectedRefusal(OpenID4VPRule.responseMode))
        rows.add("nonce missing", unsigned(replacing(p, "nonce", nil)), ExpectedRefusal(OpenID4VPRule.nonceMissing))
        rows.add(
            "nonce with a space", unsigned(replacing(p, "nonce", .string("a b"))), ExpectedRefusal(OpenID4VPRule.nonce))
        rows.add(
            "nonce a number", unsigned(replacing(p, "nonce", .number(JSONNumber(7)))),
            ExpectedRefusal(OpenID4VPRule.nonceMissing))
        rows.add(
            "dcql_query missing", unsigned(replacing(p, "dcql_query", nil)), ExpectedRefusal(OpenID4VPRule.dcqlMissing))
        rows.add("scope", unsigned(p + [("scope", .string("mdl"))]), ExpectedRefusal(OpenID4VPRule.scope))
        rows.add(
            "transaction_data of an unknown type",
            unsigned(
                p + [
                    (
                        "transaction_data",
                        .array([.string(Base64URL.encode(Array(#"{"type":"x","credential_ids":["mdl"]}"#.utf8)))])
                    )
                ]),
            ExpectedRefusal(OpenID4VPRule.transactionData))
        rows.add(
            "an unsigned request carrying a request object",
            unsigned(p + [("request", .string("e30.e30.AA"))]),
            ExpectedRefusal(OpenID4VPRule.unsignedCarriesRequestObject))
        rows.add(
            "a JWE where the request object should be",
            frame("openid4vp-v1-signed", .object([("request", .string("a.b.c.d.e"))])),
            ExpectedRefusal(OpenID4VPRule.requestObjectMalformed, at: "request", lower: "jose.malformed"))

        return rows.list
    }
}
