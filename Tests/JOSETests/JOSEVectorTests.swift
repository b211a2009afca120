import CryptoCore
import Foundation
@testable import JOSE
import Testing
import TestSupport
import WebEncoding

/// The published examples that apply to what this layer implements (ECDSA JWS, EC JWKs, ECDH-ES
/// direct with AES-GCM). RFC 7516's examples use RSA-OAEP and AES key wrap and RFC 7520's ECDH-ES
/// example uses AES-CBC-HMAC: none of those is implemented, so none applies. The RFC values below are
/// quoted from the RFCs (cited per test); the OpenID4VP ones are read from the shared vectors.
@Suite("JOSE: published examples")
struct JOSEVectorTests {
    static func json(_ s: String) throws -> JSONValue { try JSONValue.parse(Array(s.utf8)) }

    /// RFC 7515 Appendix A.3.1: the P-256 key.
    static let rfc7515P256 =
        #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}"#
    /// RFC 7515 Appendix A.3.1: the ES256 JWS over the JWT claims of A.1.
    static let rfc7515ES256 =
        "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
    /// RFC 7515 Appendix A.4.1: the P-521 key.
    static let rfc7515P521 =
        #"{"kty":"EC","crv":"P-521","x":"AekpBQ8ST8a8VcfVOTNl353vSrDCLLJXmPk06wTjxrrjcBpXp5EOnYG_NjFZ6OvLFV1jSfS9tsz4qUxcWceqwQGk","y":"ADSmRA43Z1DSNx_RvcLI87cdL07l6jQyyBXMoxVg_l2Th-x3S1WDhjDly79ajL4Kkd0AZMaZmh9ubmf63e3kyMj2","d":"AY5pb7A0UFiB3RELSD64fTLOSV_jazdF7fLYyuTw8lOfRhWg6Y6rUrPAxerEzgdRhajnu0ferB0d53vM9mE15j2C"}"#
    /// RFC 7515 Appendix A.4.1: the ES512 JWS over the ASCII payload "Payload".
    static let rfc7515ES512 =
        "eyJhbGciOiJFUzUxMiJ9.UGF5bG9hZA.AdwMgeerwtHoh-l192l60hp9wAHZFVJbLfD_UxMi70cwnZOYaRI1bKPWROc-mZZqwqT2SI-KGDKB34XO0aw_7XdtAG8GaSwFKdCAPZgoXD2YBJZCPEX3xKpRwcdOO8KpEHwJjyqOgzDO7iKvU8vcnwNrmxYbSW9ERBXukOXolLzeO_Jn"
    /// RFC 7520 §3.2 (Figure 2): the P-521 signing key.
    static let rfc7520P521 =
        #"{"kty":"EC","kid":"bilbo.baggins@hobbiton.example","use":"sig","crv":"P-521","x":"AHKZLLOsCOzz5cY97ewNUajB957y-C-U88c3v13nmGZx6sYl_oJXu9A5RkTKqjqvjyekWF-7ytDyRXYgCF5cj0Kt","y":"AdymlHvOiLxXkEhayXQnNCvDX4h9htZaCJN34kfmC6pV5OhQHiraVySsUdaQkAgDPrwQrJmbnX9cwlGfP-HqHZR1","d":"AAhRON2r9cqXX1hg-RoI6R1tX5p2rUAYdmpHZoC1XNM56KtscrX6zbKipQrCW9CGZH3T4ubpnoTKLDYJ_fF3_rJt"}"#
    /// RFC 7520 §4.3.3 (Figure 27): the ES512 JWS with `kid`.
    static let rfc7520ES512 =
        "eyJhbGciOiJFUzUxMiIsImtpZCI6ImJpbGJvLmJhZ2dpbnNAaG9iYml0b24uZXhhbXBsZSJ9.SXTigJlzIGEgZGFuZ2Vyb3VzIGJ1c2luZXNzLCBGcm9kbywgZ29pbmcgb3V0IHlvdXIgZG9vci4gWW91IHN0ZXAgb250byB0aGUgcm9hZCwgYW5kIGlmIHlvdSBkb24ndCBrZWVwIHlvdXIgZmVldCwgdGhlcmXigJlzIG5vIGtub3dpbmcgd2hlcmUgeW91IG1pZ2h0IGJlIHN3ZXB0IG9mZiB0by4.AE_R_YZCChjn4791jSQCrdPZCNYqHXCTZH0-JZGYNlaAjP2kqaluUIIUnC9qvbu9Plon7KRTzoNEuT4Va2cmL1eJAQy3mtPBu_u_sDDyYjnAMDxXPn7XrT0lw-kvAD890jl8e2puQens_IEKBpHABlsbEPX6sFY8OcGDqoRuBomu9xQ2"

    @Test("RFC 7515 A.3 (ES256), A.4 (ES512) and RFC 7520 §4.3 (ES512 with kid) verify; a changed byte does not")
    func publishedSignatures() throws {
        for (key, jws, payload) in [
            (
                Self.rfc7515P256, Self.rfc7515ES256,
                "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}"
            ),
            (Self.rfc7515P521, Self.rfc7515ES512, "Payload"),
            (
                Self.rfc7520P521, Self.rfc7520ES512,
                "It\u{2019}s a dangerous business, Frodo, going out your door. You step onto the road, and if you don't keep your feet, there\u{2019}s no knowing where you might be swept off to."
            ),
        ] {
            let jwk = try JWK(try Self.json(key))
            let parsed = try JWS(compact: jws)
            #expect(parsed.payload == Array(payload.utf8))
            try parsed.signatures[0].verify(with: jwk.publicKey)
            // One flipped bit in the signing input, then in the signature.
            var tampered = Array(jws.utf8)
            tampered[tampered.firstIndex(of: UInt8(ascii: "."))! + 3] ^= 0x01
            if let t = try? JWS(compact: String(decoding: tampered, as: UTF8.self)) {
                #expect(throws: JOSEError(.signatureInvalid, "")) { try t.signatures[0].verify(with: jwk.publicKey) }
            }
            var sig = parsed.signatures[0]
            var bytes = sig.signature
            bytes[5] ^= 0x80
            sig = JWS.Signature(header: sig.header, signature: bytes, signingInput: sig.signingInput)
            #expect(throws: JOSEError.self) { try sig.verify(with: jwk.publicKey) }
            // The private key in the example signs what the public key verifies.
            let priv = try JWK.privateKey(try Self.json(key))
            let ours = try JWS(compact: try JWS.signCompact(payload: Array(payload.utf8), header: [], key: priv))
            try ours.signatures[0].verify(with: jwk.publicKey)
        }
        #expect(
            try JWS(compact: Self.rfc7520ES512).signatures[0].header.protectedString("kid")
                == "bilbo.baggins@hobbiton.example")
    }

    @Test(
        "RFC 7515 A.6/A.7: the general serialization with an RS256 signature is refused; the flattened ES256 one verifies"
    )
    func jsonSerializations() throws {
        let payload =
            "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        let es256 = "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
        let flattened = JSONValue.object([
            ("payload", .string(payload)), ("protected", .string("eyJhbGciOiJFUzI1NiJ9")),
            ("header", .object([("kid", .string("e9bc097a-ce51-4036-9562-d2ade882db0d"))])),
            ("signature", .string(es256)),
        ])
        let jwk = try JWK(try Self.json(Self.rfc7515P256))
        let jws = try JWS(json: flattened)
        try jws.signatures[0].verify(with: jwk.publicKey)
        #expect(jws.signatures[0].header["kid"]?.string == "e9bc097a-ce51-4036-9562-d2ade882db0d")
        let general = JSONValue.object([
            ("payload", .string(payload)),
            (
                "signatures",
                .array([
                    .object([
                        ("protected", .string("eyJhbGciOiJSUzI1NiJ9")),
                        ("header", .object([("kid", .string("2010-12-29"))])), ("signature", .string("AAAA")),
                    ]),
                    .object([("protected", .string("eyJhbGciOiJFUzI1NiJ9")), ("signature", .string(es256))]),
                ])
            ),
        ])
        #expect(throws: JOSEError(.unsupportedAlgorithm, "")) { try JWS(json: general) }
    }

    @Test("RFC 7518 Appendix C: ECDH-ES with apu/apv derives the published A128GCM key from either side")
    func concatKDF() throws {
        let alice = try Self.json(
            #"{"kty":"EC","crv":"P-256","x":"gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0","y":"SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps","d":"0_NxaRPUMQoAJt50Gz8YiTr8gRTwyEaCumd-MToTmIo"}"#
        )
        let bob = try Self.json(
            #"{"kty":"EC","crv":"P-256","x":"weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ","y":"e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck","d":"VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw"}"#
        )
        let z1 = try JWK.privateKey(alice).sharedSecret(with: try JWK(bob).publicKey)
        let z2 = try JWK.privateKey(bob).sharedSecret(with: try JWK(alice).publicKey)
        #expect(z1 == z2)
        // RFC 7518 C: Z as printed.
        #expect(
            z1 == [
                158, 86, 217, 29, 129, 113, 53, 211, 114, 131, 66, 131, 191, 132, 38, 156, 251, 49, 110, 163, 218, 128,
                106, 72, 246, 218, 167, 121, 140, 254, 144, 196,
            ])
        let key = JWE.concatKDF(
            sharedSecret: z1, keyLength: 16, algorithmID: "A128GCM", partyUInfo: Array("Alice".utf8),
            partyVInfo: Array("Bob".utf8))
        #expect(Base64URL.encode(key) == "VqqN6vgjbSBcIijNcacQGg")
        // Longer keys (one full round, two rounds, a round and a half) against the construction written
        // out: SHA-256(counter ‖ Z ‖ len ‖ "A256GCM" ‖ len ‖ apu ‖ len ‖ apv ‖ bits) per round.
        func be32(_ n: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: n >> (24 - 8 * $0)) } }
        for length in [32, 48, 64] {
            let apu = Array("Alice".utf8)
            let apv = Array("Bob".utf8)
            let other =
                be32(7) + Array("A256GCM".utf8) + be32(apu.count) + apu + be32(apv.count) + apv + be32(length * 8)
            var expected = [UInt8]()
            for counter in 1...((length + 31) / 32) {
                expected += DigestAlgorithm.sha256.hash(be32(counter) + z1 + other)
            }
            let derived = JWE.concatKDF(
                sharedSecret: z1, keyLength: length, algorithmID: "A256GCM", partyUInfo: apu, partyVInfo: apv)
            #expect(derived == Array(expected.prefix(length)), "key length \(length)")
        }
    }

    @Test(
        "OpenID4VP §8.3: the example encrypted response decrypts to the published plaintext with the published key",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func openID4VPResponse() throws {
        let v = try JSONValue.parse(Array(try SharedVectors.data("openid4vp/jwe-response-example.json")))
        let key = try JWK.privateKey(try #require(v["recipientPrivateJwk"]))
        let (header, plaintext) = try JWE.decrypt(try #require(v["jweCompact"]?.string), with: key)
        #expect(plaintext == Array(try #require(v["plaintext"]?.string).utf8))
        #expect(header == v["protectedHeader"])
        // The content-encryption key the vector states: Concat KDF of the ECDH secret with the epk.
        let epk = try JWK(try #require(header["epk"]))
        let cek = JWE.concatKDF(
            sharedSecret: try key.sharedSecret(with: epk.publicKey), keyLength: 16, algorithmID: "A128GCM",
            partyUInfo: [], partyVInfo: [])
        #expect(Hex.encode(cek) == v["contentEncryptionKeyHex"]?.string)
        // A wrong recipient key is one opaque refusal.
        let other = try PrivateKey.generate(.ec(.p256))
        #expect(throws: JOSEError(.decryptionFailed, "")) {
            try JWE.decrypt(try #require(v["jweCompact"]?.string), with: other)
        }
    }

    @Test(
        "OpenID4VP B.2.6.2: the verifier's encryption JWK has the published RFC 7638 thumbprint",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func thumbprint() throws {
        let v = try JSONValue.parse(Array(try SharedVectors.data("openid4vp/dcapi-session-transcript.json")))
        let jwk = try JWK(try #require(v["verifierEncryptionJwk"]))
        #expect(Hex.encode(jwk.thumbprint) == v["jwkThumbprintSha256Hex"]?.string)
        #expect(jwk.keyID == "1" && jwk.use == "enc" && jwk.algorithm == "ECDH-ES")
    }

    @Test(
        "RFC 7638 thumbprints on every curve: SHA-256 of the required members in order, read back from the JWK's JSON")
    func thumbprintEveryCurve() throws {
        for curve in [Curve.p256, .p384, .p521] {
            let key = try PrivateKey.generate(.ec(curve)).publicKey
            let jwk = try JWK(publicKey: key)
            let text = Array(
                #"{"crv":"\#(jwk.curve.rawValue)","kty":"EC","x":"\#(Base64URL.encode(jwk.x))","y":"\#(Base64URL.encode(jwk.y))"}"#
                    .utf8)
            #expect(jwk.thumbprint == DigestAlgorithm.sha256.hash(text), "\(curve)")
            // The same key read from its JSON (members in another order, kty and crv's hyphen escaped).
            let crv = jwk.curve.rawValue.replacingOccurrences(of: "-", with: #"\u002d"#)
            let json =
                #"{"y":"\#(Base64URL.encode(jwk.y))","use":"enc","x":"\#(Base64URL.encode(jwk.x))","kty":"E\u0043","kid":"k","crv":"\#(crv)"}"#
            let read = try JWK(try JSONDocument(Array(json.utf8)).root)
            #expect(read.thumbprint == jwk.thumbprint && read.keyID == "k" && read.use == "enc", "\(curve)")
        }
        // kty and crv compared in place: another type, an unknown curve, a curve that is not a string.
        for (json, code) in [
            (#"{"kty":"RSA","crv":"P-256","x":"","y":""}"#, JOSEError.Code.invalidKey),
            (#"{"kty":"EC","crv":"P-255","x":"","y":""}"#, .invalidKey),
            (#"{"kty":"EC","crv":1,"x":"","y":""}"#, .malformed),
            (#"{"kty":"EC","crv":"P-256","x":"","y":""}"#, .invalidKey),
        ] {
            #expect(throws: JOSEError(code, ""), "\(json)") { try JWK(try JSONDocument(Array(json.utf8)).root) }
        }
    }
}
