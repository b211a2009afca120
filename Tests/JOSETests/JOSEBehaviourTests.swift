import CryptoCore
import Foundation
import Testing
import TestSupport
import WebEncoding

@testable import JOSE

@Suite("JOSE: round trips and refusals")
struct JOSEBehaviourTests {
    static func b64(_ s: String) -> String { Base64URL.encode(Array(s.utf8)) }

    @Test("JWE ECDH-ES round trips on every curve and both encryptions, with and without apu/apv and kid")
    func jweRoundTrip() throws {
        for curve in Curve.allCases {
            let key = try PrivateKey.generate(.ec(curve))
            let jwk = try JWK(publicKey: key.publicKey, keyID: "k1")
            for enc in JWEEncryption.allCases {
                for (apu, apv) in [([UInt8](), [UInt8]()), (Array("Alice".utf8), Array("Bob".utf8))] {
                    let message = Array("{\"vp_token\":{}}".utf8) + [UInt8](repeating: 7, count: 1000)
                    let jwe = try JWE.encrypt(
                        message, to: jwk, encryption: enc, keyID: jwk.keyID, partyUInfo: apu, partyVInfo: apv)
                    let (header, plaintext) = try JWE.decrypt(jwe, with: key)
                    #expect(plaintext == message)
                    #expect(header["enc"]?.string == enc.rawValue && header["kid"]?.string == "k1")
                    #expect(
                        header.object?.map(\.0) == ["alg", "enc", "kid", "epk"] + (apu.isEmpty ? [] : ["apu", "apv"]))
                    #expect(jwe.split(separator: ".", omittingEmptySubsequences: false)[1].isEmpty)
                    // The protected header's exact text: members in this order, no whitespace, the
                    // epk's four members as RFC 7518 §6.2.1 names them (the AAD is these bytes).
                    let epk = try #require(header["epk"])
                    var expected: [(String, JSONValue)] = [
                        ("alg", .string("ECDH-ES")), ("enc", .string(enc.rawValue)), ("kid", .string("k1")),
                        (
                            "epk",
                            .object([
                                ("kty", .string("EC")),
                                ("crv", .string(curve == .p256 ? "P-256" : curve == .p384 ? "P-384" : "P-521")),
                                ("x", try #require(epk["x"])), ("y", try #require(epk["y"])),
                            ])
                        ),
                    ]
                    if !apu.isEmpty {
                        expected += [("apu", .string(Base64URL.encode(apu))), ("apv", .string(Base64URL.encode(apv)))]
                    }
                    let protectedText = try #require(
                        Base64URL.decode(String(jwe.split(separator: ".", omittingEmptySubsequences: false)[0])))
                    #expect(protectedText == JSONValue.object(expected).serialized)
                }
            }
        }
    }

    @Test("A JWE sealer's length is exact before encryption, for every plaintext length 0…70 and both encryptions")
    func sealerLength() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let jwk = try JWK(publicKey: key.publicKey, keyID: "k1")
        for enc in JWEEncryption.allCases {
            for n in 0...70 {
                let message = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37) }
                let sealer = try JWESealer(to: jwk, encryption: enc, keyID: "k1")
                let length = sealer.compactLength(plaintextCount: n)
                // Written between two guard bytes that must stay as they are.
                var buffer = [UInt8](repeating: 0xEE, count: length + 2)
                try buffer.withUnsafeMutableBytes { b in
                    try message.withUnsafeBytes {
                        try sealer.seal($0, into: UnsafeMutableRawBufferPointer(rebasing: b[1...length]))
                    }
                }
                #expect(buffer.first == 0xEE && buffer.last == 0xEE)
                let compact = String(decoding: buffer[1...length], as: UTF8.self)
                #expect(compact.split(separator: ".", omittingEmptySubsequences: false).count == 5)
                let (header, plaintext) = try JWE.decrypt(compact, with: key)
                #expect(plaintext == message && header["enc"]?.string == enc.rawValue)
            }
        }
    }

    @Test("JWE tampering, a wrong key, an off-curve epk, another alg/enc and zip/crit are refused")
    func jweRefusals() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let jwk = try JWK(publicKey: key.publicKey)
        let jwe = try JWE.encrypt(Array("hello".utf8), to: jwk, encryption: .a128gcm)
        var parts = jwe.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        // Each segment changed in turn.
        for i in [0, 2, 3, 4] {
            var p = parts
            var b = Base64URL.decode(p[i])!
            b[b.count - 1] ^= 0x01
            p[i] = Base64URL.encode(b)
            #expect(throws: JOSEError.self) { try JWE.decrypt(p.joined(separator: "."), with: key) }
        }
        #expect(throws: JOSEError(.decryptionFailed, "")) {
            try JWE.decrypt(jwe, with: try PrivateKey.generate(.ec(.p256)))
        }
        #expect(throws: JOSEError(.invalidKey, "")) { try JWE.decrypt(jwe, with: try PrivateKey.generate(.ec(.p384))) }
        var withKey = parts
        withKey[1] = "AAAA"
        #expect(throws: JOSEError(.malformed, "")) { try JWE.decrypt(withKey.joined(separator: "."), with: key) }
        #expect(throws: JOSEError(.malformed, "")) {
            try JWE.decrypt(parts.dropLast().joined(separator: "."), with: key)
        }
        // Headers with one fault each (the tag cannot verify anyway: the check must come first).
        let header = try JSONValue.parse(Base64URL.decode(parts[0])!)
        func with(_ change: (inout [(String, JSONValue)]) -> Void) -> String {
            var m = header.object!
            change(&m)
            var p = parts
            p[0] = Base64URL.encode(JSONValue.object(m).serialized)
            return p.joined(separator: ".")
        }
        let rows: [(String, JOSEError.Code, (inout [(String, JSONValue)]) -> Void)] = [
            ("alg ECDH-ES+A128KW", .unsupportedAlgorithm, { $0[0].1 = .string("ECDH-ES+A128KW") }),
            ("alg RSA-OAEP", .unsupportedAlgorithm, { $0[0].1 = .string("RSA-OAEP") }),
            ("enc A128CBC-HS256", .unsupportedAlgorithm, { $0[1].1 = .string("A128CBC-HS256") }),
            ("zip", .unsupportedAlgorithm, { $0.append(("zip", .string("DEF"))) }),
            ("crit", .unsupportedCritical, { $0.append(("crit", .array([.string("exp")]))) }),
            ("no epk", .malformed, { $0.removeAll { $0.0 == "epk" } }),
            (
                "epk off the curve", .invalidKey,
                { m in
                    let i = m.firstIndex { $0.0 == "epk" }!
                    var e = m[i].1.object!
                    e[3].1 = .string(Base64URL.encode([UInt8](repeating: 1, count: 32)))
                    m[i].1 = .object(e)
                }
            ),
            (
                "epk of another kty", .invalidKey,
                { m in
                    let i = m.firstIndex { $0.0 == "epk" }!
                    m[i].1 = .object([("kty", .string("OKP")), ("crv", .string("X25519")), ("x", .string("AAAA"))])
                }
            ),
            ("apu not base64url", .malformed, { $0.append(("apu", .string("a+b"))) }),
        ]
        for (name, code, change) in rows {
            #expect(throws: JOSEError(code, ""), "\(name)") { try JWE.decrypt(with(change), with: key) }
        }
        parts[0] = Self.b64("[]")
        #expect(throws: JOSEError(.malformed, "")) { try JWE.decrypt(parts.joined(separator: "."), with: key) }
    }

    struct JWSRow: CustomTestStringConvertible, Sendable {
        let name: String
        let compact: String
        let code: JOSEError.Code
        let detail: String
        var testDescription: String { name }
    }

    static var jwsRows: [JWSRow] {
        let payload = b64("{}")
        let sig64 = Base64URL.encode([UInt8](repeating: 1, count: 64))
        func row(_ name: String, _ header: String, _ code: JOSEError.Code, _ detail: String, sig: String? = nil)
            -> JWSRow
        {
            JWSRow(name: name, compact: b64(header) + "." + payload + "." + (sig ?? sig64), code: code, detail: detail)
        }
        return [
            row("alg none", #"{"alg":"none"}"#, .unsupportedAlgorithm, "JWS alg none is refused", sig: ""),
            row("alg HS256", #"{"alg":"HS256"}"#, .unsupportedAlgorithm, "JWS alg HMAC is refused"),
            row("alg RS256", #"{"alg":"RS256"}"#, .unsupportedAlgorithm, "JWS alg RSA is not supported"),
            row("alg PS512", #"{"alg":"PS512"}"#, .unsupportedAlgorithm, "JWS alg RSA is not supported"),
            row("alg EdDSA", #"{"alg":"EdDSA"}"#, .unsupportedAlgorithm, "JWS alg EdDSA is not supported"),
            row("alg es256 lower case", #"{"alg":"es256"}"#, .unsupportedAlgorithm, "JWS alg not supported"),
            row("alg missing", #"{"typ":"JWT"}"#, .malformed, "JWS alg missing"),
            row("alg not a string", #"{"alg":1}"#, .malformed, "JWS alg missing"),
            row("crit", #"{"alg":"ES256","crit":["b64"],"b64":false}"#, .unsupportedCritical, "JWS crit names"),
            row("crit empty", #"{"alg":"ES256","crit":[]}"#, .malformed, "JWS crit is not a non-empty array"),
            row("header not an object", #"["ES256"]"#, .malformed, "JWS protected header is not a JSON object"),
            row("duplicate header member", #"{"alg":"ES256","alg":"ES256"}"#, .malformed, "duplicate JSON object key"),
            row(
                "signature of the wrong size", #"{"alg":"ES256"}"#, .malformed, "not the algorithm's size", sig: "AAAA"),
            row(
                "ES512 header with a 64-byte signature", #"{"alg":"ES512"}"#, .malformed, "not the algorithm's size"),
            JWSRow(name: "two segments", compact: "a.b", code: .malformed, detail: "JWS is not three segments"),
            JWSRow(name: "empty", compact: "", code: .malformed, detail: "JWS is not three segments"),
            JWSRow(name: "no dot", compact: "abc", code: .malformed, detail: "JWS is not three segments"),
            JWSRow(name: "four segments", compact: "a.b.c.d", code: .malformed, detail: "JWS is not three segments"),
            JWSRow(
                name: "six segments", compact: "a.b.c.d.e.f", code: .malformed, detail: "JWS is not three segments"),
            JWSRow(name: "only dots", compact: "..", code: .malformed, detail: "JWS protected header"),
            JWSRow(
                name: "a JWE", compact: "a.b.c.d.e", code: .malformed, detail: "a JWE where a JWS is expected"),
            JWSRow(
                name: "padded segment", compact: b64(#"{"alg":"ES256"}"#) + "." + payload + "=." + sig64,
                code: .malformed, detail: "JWS payload is not base64url"),
            JWSRow(
                name: "empty payload", compact: b64(#"{"alg":"ES256"}"#) + ".." + sig64, code: .malformed,
                detail: "JWS payload is not base64url"),
            JWSRow(
                name: "standard base64 alphabet",
                compact: b64(#"{"alg":"ES256"}"#) + "." + payload + "." + "+/"
                    + sig64.dropFirst(2), code: .malformed, detail: "JWS signature is not base64url"),
        ]
    }

    @Test("Hostile compact JWSs are refused with the rule they break", arguments: jwsRows)
    func jwsRefusal(_ r: JWSRow) {
        #expect {
            try JWS(compact: r.compact)
        } throws: { error in
            guard let e = error as? JOSEError else { return false }
            return e.code == r.code && e.detail.contains(r.detail)
        }
    }

    @Test("A JWS verifies only with a key of its algorithm's curve, and only with the signer's key")
    func keyConfusion() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let jws = try JWS(compact: try JWS.signCompact(payload: [1, 2, 3], header: [("typ", .string("x"))], key: key))
        #expect(jws.signatures[0].header.algorithm == .es256)
        #expect(jws.signatures[0].header.protected.members?.map(\.0) == ["alg", "typ"])
        try jws.signatures[0].verify(with: key.publicKey)
        #expect(throws: JOSEError(.signatureInvalid, "")) {
            try jws.signatures[0].verify(with: try PrivateKey.generate(.ec(.p256)).publicKey)
        }
        #expect(throws: JOSEError(.invalidKey, "")) {
            try jws.signatures[0].verify(with: try PrivateKey.generate(.ec(.p384)).publicKey)
        }
        #expect(throws: JOSEError(.invalidKey, "")) {
            try jws.signatures[0].verify(with: try PrivateKey.generate(.ed25519).publicKey)
        }
    }

    @Test("JSON serializations: disjoint headers, alg/crit/x5c protected, bounded signature lists")
    func jsonRefusals() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let payload = Self.b64("{}")
        let entry = try JWS.signatureEntry(payloadEncoded: payload, header: [("kid", .string("a"))], key: key)
        func general(_ entries: [JSONValue], extra: [(String, JSONValue)] = []) -> JSONValue {
            .object([("payload", .string(payload)), ("signatures", .array(entries))] + extra)
        }
        let ok = try JWS(json: general([entry, entry]))
        #expect(ok.signatures.count == 2)
        for s in ok.signatures { try s.verify(with: key.publicKey) }
        func withHeader(_ h: JSONValue) -> JSONValue { .object(entry.object! + [("header", h)]) }
        let rows: [(String, JSONValue, JOSEError.Code)] = [
            ("no signatures", general([]), .malformed),
            ("nine signatures", general(Array(repeating: entry, count: 9)), .malformed),
            ("kid in both headers", general([withHeader(.object([("kid", .string("b"))]))]), .malformed),
            ("alg unprotected", general([withHeader(.object([("alg", .string("ES256"))]))]), .malformed),
            ("header not an object", general([withHeader(.string("x"))]), .malformed),
            ("general and flattened mixed", general([entry], extra: [("signature", .string("x"))]), .malformed),
            ("no payload", .object([("signatures", .array([entry]))]), .malformed),
            ("not an object", .array([]), .malformed),
        ]
        for (name, json, code) in rows {
            #expect(throws: JOSEError(code, ""), "\(name)") { try JWS(json: json) }
        }
        // x5c only in the unprotected header is never read as the signer's chain.
        let unprotectedChain = try JWS(json: general([withHeader(.object([("x5c", .array([.string("AAAA")]))]))]))
        #expect(throws: JOSEError(.malformed, "")) {
            try unprotectedChain.signatures[0].header.certificateChain(limits: JOSELimits())
        }
    }

    @Test("x5c: standard base64 DER certificates, leaf first, bounded; base64url or empty entries refused")
    func certificateChains() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        func chain(_ x5c: JSONValue) throws -> [[UInt8]]? {
            let jws = try JWS(compact: try JWS.signCompact(payload: [1], header: [("x5c", x5c)], key: key))
            return try jws.signatures[0].header.certificateChain(limits: JOSELimits())
        }
        let a: [UInt8] = [0xfb, 0xff, 0x01]
        #expect(try chain(.array([.string(Base64.encode(a)), .string(Base64.encode([1]))])) == [a, [1]])
        for bad: JSONValue in [
            .array([]), .string(Base64.encode(a)), .array([.string(Base64URL.encode(a))]), .array([.string("")]),
            .array([.string("AQ")]), .array(Array(repeating: .string("AQ=="), count: 9)),
            .array([.number(JSONNumber(1))]),
        ] {
            #expect(throws: JOSEError(.malformed, "")) { try chain(bad) }
        }
        #expect(
            try JWS(compact: try JWS.signCompact(payload: [1], header: [], key: key)).signatures[0].header
                .certificateChain(limits: JOSELimits()) == nil)
    }

    @Test("JWK: EC keys of the right size on the curve; other types, curves and shapes are refused")
    func jwkRefusals() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let good = try JWK(publicKey: key.publicKey).json
        #expect(try JWK(good).publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        // The coordinates read back as the key's own.
        let read = try JWK(good)
        #expect(read.x == key.publicKey.coordinates?.x && read.y == key.publicKey.coordinates?.y)
        func edit(_ f: (inout [(String, JSONValue)]) -> Void) -> JSONValue {
            var m = good.object!
            f(&m)
            return .object(m)
        }
        let x = good["x"]!.string!
        let rows: [(String, JSONValue, JOSEError.Code)] = [
            ("kty RSA", edit { $0[0].1 = .string("RSA") }, .invalidKey),
            ("kty oct", edit { $0[0].1 = .string("oct") }, .invalidKey),
            ("kty missing", edit { $0.remove(at: 0) }, .malformed),
            ("crv secp256k1", edit { $0[1].1 = .string("secp256k1") }, .invalidKey),
            ("crv P-384 with P-256 coordinates", edit { $0[1].1 = .string("P-384") }, .invalidKey),
            (
                "x one byte short", edit { $0[2].1 = .string(Base64URL.encode(Base64URL.decode(x)!.dropFirst())) },
                .invalidKey
            ),
            ("x padded", edit { $0[2].1 = .string(x + "=") }, .malformed),
            // At the coordinate's length (decoded in place) and not: the same rule either way.
            ("x of the right length, not base64url", edit { $0[2].1 = .string("+" + x.dropFirst()) }, .malformed),
            ("x of the right length, trailing bits set", edit { $0[2].1 = .string(x.dropLast() + "B") }, .malformed),
            ("x too long, not base64url", edit { $0[2].1 = .string(x + "+B") }, .malformed),
            (
                "x a byte too long", edit { $0[2].1 = .string(Base64URL.encode(Base64URL.decode(x)! + [1])) },
                .invalidKey
            ),
            (
                "y off the curve", edit { $0[3].1 = .string(Base64URL.encode([UInt8](repeating: 9, count: 32))) },
                .invalidKey
            ),
            ("y missing", edit { $0.remove(at: 3) }, .malformed),
            ("kid a number", edit { $0.append(("kid", .number(JSONNumber(1)))) }, .malformed),
            ("not an object", .array([good]), .malformed),
        ]
        for (name, json, code) in rows {
            #expect(throws: JOSEError(code, ""), "\(name)") { try JWK(json) }
        }
        // A private JWK whose d does not match x/y.
        let other = try PrivateKey.generate(.ec(.p256))
        let mismatched = edit { $0.append(("d", .string(Base64URL.encode(try! other.exportSecret())))) }
        #expect(throws: JOSEError(.invalidKey, "")) { try JWK.privateKey(mismatched) }
        let matching = edit { $0.append(("d", .string(Base64URL.encode(try! key.exportSecret())))) }
        #expect(try JWK.privateKey(matching).publicKey.rawRepresentation == key.publicKey.rawRepresentation)
    }

    @Test("Standard base64 (x5c): padding required, the standard alphabet only, trailing bits zero")
    func standardBase64() {
        var rng = SystemRandomNumberGenerator()
        for n in 0...70 {
            let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let e = Base64.encode(b)
            #expect(e == Data(b).base64EncodedString())
            #expect(Base64.decode(e) == b)
        }
        for bad in ["AQ", "AQ=", "-_8=", "AQ==\n", "A===", "AR==", " AQ=="] {
            #expect(Base64.decode(bad) == nil, "\(bad)")
        }
        #expect(Base64URL.decode("AQ==") == nil && Base64URL.decode("AQ") == [1])
    }
}
