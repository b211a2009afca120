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

    /// Collects one part's rows.
    struct Rows {
        private(set) var list = [Row]()
        mutating func add(
            _ name: String, _ raw: Data, _ expected: ExpectedRefusal, origin: String = OpenID4VPCatalogue.origin
        ) {
            list.append(Row(name: name, raw: raw, origin: origin, expected: expected))
        }
    }

    public static func rows(world: TestWorld) throws -> [Row] {
        try signatureAndParameterRows(world: world) + responseAndQueryRows(world: world)
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
