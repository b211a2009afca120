import Foundation
import Testing
import TestSupport
@testable import MdocCBOR
@testable import CryptoCore

func base64url(_ s: String) -> [UInt8] {
    var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while t.count % 4 != 0 { t += "=" }
    return Array(Data(base64Encoded: t)!)
}

@Suite("COSE: cose-wg examples and round trips")
struct COSETests {
    static let sign1Files = [
        "ecdsa-examples/ecdsa-sig-01.json", "ecdsa-examples/ecdsa-sig-02.json", "ecdsa-examples/ecdsa-sig-03.json",
        "ecdsa-examples/ecdsa-sig-04.json", "RFC8152/Appendix_C_2_1.json",
        "sign1-tests/sign-pass-01.json", "sign1-tests/sign-pass-02.json", "sign1-tests/sign-pass-03.json",
        "sign1-tests/sign-fail-01.json", "sign1-tests/sign-fail-02.json", "sign1-tests/sign-fail-03.json",
        "sign1-tests/sign-fail-04.json", "sign1-tests/sign-fail-06.json", "sign1-tests/sign-fail-07.json",
    ]

    static func key(_ jwk: [String: Any]) throws -> COSEKey {
        let crv: COSEKey.Curve =
            switch jwk["crv"] as! String {
            case "P-256": .p256
            case "P-384": .p384
            default: .p521
            }
        return try COSEKey(curve: crv, x: base64url(jwk["x"] as! String), y: base64url(jwk["y"] as! String))
    }

    @Test(
        "Every Sign1 pass case verifies over a Sig_structure equal to ToBeSign; every fail case fails",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func coseWGSign1() throws {
        var pass = 0
        var fail = 0
        for file in Self.sign1Files {
            let j = try SharedVectors.json("cose/" + file) as! [String: Any]
            let input = j["input"] as! [String: Any]
            let sign0 = input["sign0"] as! [String: Any]
            let k = try Self.key(sign0["key"] as! [String: Any])
            let aad = (sign0["external"] as? String).map { h($0) } ?? []
            let message = h((j["output"] as! [String: Any])["cbor"] as! String)
            let shouldFail = (j["fail"] as? Bool) == true
            if shouldFail {
                var failed = false
                do {
                    let m = try COSESign1(encoded: message)
                    try m.verify(key: k, externalAAD: aad)
                } catch {
                    failed = true
                }
                #expect(failed, "\(file) must fail")
                fail += 1
                continue
            }
            let m = try COSESign1(encoded: message)
            let tbs = try m.signatureStructure(externalAAD: aad)
            let expected = ((j["intermediates"] as! [String: Any])["ToBeSign_hex"] as! String).lowercased()
            #expect(Hex.encode(tbs) == expected, "\(file) Sig_structure")
            if file.hasSuffix("ecdsa-sig-04.json") {
                // ES512 with a P-256 key: refused by default, verifies when the mismatch is allowed.
                #expect(throws: COSEError.keyAlgorithmMismatch) { try m.verify(key: k, externalAAD: aad) }
                try m.verify(key: k, externalAAD: aad, allowCurveMismatch: true)
            } else {
                try m.verify(key: k, externalAAD: aad)
            }
            pass += 1
        }
        print("cose-wg Sign1: \(pass) pass cases verified, \(fail) fail cases rejected")
        #expect(pass == 8 && fail == 6)
    }

    @Test(
        "Sign and verify round trip on every curve, attached and detached, tagged and untagged",
        arguments: [COSEKey.Curve.p256, .p384, .p521, .ed25519])
    func roundTrip(curve: COSEKey.Curve) throws {
        let signer = try SoftwareSigner.generate(curve: curve)
        let payload = Array("payload".utf8)
        for detached in [false, true] {
            for tagged in [false, true] {
                let bytes = try COSESign1.sign(payload: payload, detached: detached, signer: signer, tagged: tagged)
                let m = try COSESign1(encoded: bytes)
                #expect(m.isTagged == tagged)
                #expect(m.signature.count == (curve == .ed25519 ? 64 : 2 * curve.coordinateSize))
                try m.verify(key: signer.publicKey, detachedPayload: detached ? payload : nil)
                // Tampered payload fails.
                if detached {
                    #expect(throws: COSEError.verificationFailed) {
                        try m.verify(key: signer.publicKey, detachedPayload: payload + [0])
                    }
                    #expect(throws: COSEError.payloadMismatch) { try m.verify(key: signer.publicKey) }
                }
                // Wrong key fails.
                let other = try SoftwareSigner.generate(curve: curve)
                #expect(throws: COSEError.verificationFailed) {
                    try m.verify(key: other.publicKey, detachedPayload: detached ? payload : nil)
                }
            }
        }
    }

    @Test("ISO 18013-5 device signature shape: protected h'a10126', empty unprotected map, null payload")
    func deviceSignatureShape() throws {
        let signer = try SoftwareSigner.generate(curve: .p256)
        let bytes = try COSESign1.sign(payload: [1, 2, 3], detached: true, signer: signer)
        #expect(Array(bytes.prefix(7)) == h("84 43 a10126 a0 f6"))
        #expect(bytes.count == 7 + 2 + 64)
    }

    @Test("Signatures of the wrong length, unknown algorithms and garbage are rejected with typed errors")
    func rejections() throws {
        let signer = try SoftwareSigner.generate(curve: .p256)
        var bytes = try COSESign1.sign(payload: [1], detached: false, signer: signer)
        // Cut the signature to 63 bytes: re-encode the last bstr.
        let m = try COSESign1(encoded: bytes)
        var w = CBORWriter()
        w.writeArrayHeader(count: 4)
        w.writeBytes(m.headers.protectedBytes)
        w.writeMapHeader(count: 0)
        w.writeBytes([1])
        w.writeBytes(m.signature.dropLast())
        #expect(throws: COSEError.invalidSignatureLength) {
            try COSESign1(encoded: w.bytes).verify(key: signer.publicKey)
        }
        // Unknown alg (-999) in the protected header.
        var w2 = CBORWriter()
        w2.writeArrayHeader(count: 4)
        w2.writeBytes(h("a1 01 3903e6"))
        w2.writeMapHeader(count: 0)
        w2.writeBytes([1])
        w2.writeBytes(m.signature)
        #expect(throws: COSEError.unsupportedAlgorithm) {
            try COSESign1(encoded: w2.bytes).verify(key: signer.publicKey)
        }
        // ESP256 with a P-384 key: mismatch.
        let p384 = try SoftwareSigner.generate(curve: .p384)
        var w3 = CBORWriter()
        w3.writeArrayHeader(count: 4)
        w3.writeBytes(h("a1 01 28"))
        w3.writeMapHeader(count: 0)
        w3.writeBytes([1])
        w3.writeBytes(m.signature)
        #expect(throws: COSEError.keyAlgorithmMismatch) { try COSESign1(encoded: w3.bytes).verify(key: p384.publicKey) }
        // Not an array of 4.
        #expect(throws: COSEError.malformed("COSE_Sign1 is not an array of 4")) {
            try COSESign1(encoded: h("83 40 a0 f6"))
        }
        // Wrong tag.
        #expect(throws: COSEError.self) { try COSESign1(encoded: h("d1 84 40 a0 f6 40")) }
        // Label in both buckets.
        #expect(throws: COSEError.malformed("header label in both buckets")) {
            try COSESign1(encoded: h("84 43 a10126 a10126 f6 40"))
        }
        bytes[bytes.count - 1] ^= 1
        #expect(throws: COSEError.verificationFailed) { try COSESign1(encoded: bytes).verify(key: signer.publicKey) }
    }

    @Test("x5chain as one bstr, as an array, and in the protected bucket")
    func x5chainForms() throws {
        let one = try COSESign1(encoded: h("84 40 a1 1821 43 010203 f6 40"))
        #expect(try one.headers.x5chain() == [[1, 2, 3]])
        let two = try COSESign1(encoded: h("84 40 a1 1821 82 41 01 41 02 f6 40"))
        #expect(try two.headers.x5chain() == [[1], [2]])
        let prot = try COSESign1(encoded: h("84 45 a1 1821 41 07 a0 f6 40"))
        #expect(try prot.headers.x5chain() == [[7]])
        let none = try COSESign1(encoded: h("84 40 a0 f6 40"))
        #expect(try none.headers.x5chain().isEmpty)
        #expect(throws: COSEError.self) { try COSESign1(encoded: h("84 40 a1 1821 80 f6 40")).headers.x5chain() }
        #expect(throws: COSEError.self) { try COSESign1(encoded: h("84 40 a1 1821 81 01 f6 40")).headers.x5chain() }
    }

    @Test("COSE_Mac0 HMAC 256/256 create, verify, tamper")
    func mac0() throws {
        let key = [UInt8](repeating: 7, count: 32)
        let bytes = try COSEMac0.create(payload: [9, 9], detached: true, key: key)
        let doc = try CBORDocument(decoding: bytes)
        let m = try COSEMac0(doc.root)
        try m.verify(key: key, detachedPayload: [9, 9])
        #expect(throws: COSEError.verificationFailed) { try m.verify(key: key, detachedPayload: [9, 8]) }
        #expect(throws: COSEError.verificationFailed) {
            try m.verify(key: [UInt8](repeating: 8, count: 32), detachedPayload: [9, 9])
        }
    }

    @Test("COSE_Key: validation of lengths, curves, off-curve points, compressed form and private material")
    func coseKey() throws {
        let signer = try SoftwareSigner.generate(curve: .p256)
        let k = signer.publicKey
        let round = try COSEKey(encoded: k.encoded())
        #expect(round == k)
        #expect(throws: COSEError.self) { try COSEKey(curve: .p256, x: Array(k.x.dropLast()), y: k.y!) }
        var badY = k.y!
        badY[31] ^= 1
        #expect(throws: COSEError.invalidKey("point not on curve")) { try COSEKey(curve: .p256, x: k.x, y: badY) }
        #expect(throws: COSEError.self) {
            try COSEKey(curve: .p256, x: [UInt8](repeating: 0, count: 32), y: [UInt8](repeating: 0, count: 32))
        }
        // Coordinates ≥ p are rejected.
        #expect(throws: COSEError.self) { try COSEKey(curve: .p256, x: [UInt8](repeating: 0xff, count: 32), y: k.y!) }
        // Compressed form (y = true) and private key material.
        var w = CBORWriter()
        w.write(
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(k.x)),
                .init(.int(-3), .bool(true)),
            ]))
        #expect(throws: COSEError.invalidKey("compressed point")) { try COSEKey(encoded: w.bytes) }
        var w2 = CBORWriter()
        w2.write(
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(k.x)),
                .init(.int(-3), .bytes(k.y!)), .init(.int(-4), .bytes([1])),
            ]))
        #expect(throws: COSEError.invalidKey("private key material in a public COSE_Key")) {
            try COSEKey(encoded: w2.bytes)
        }
        // Wrong kty/crv pairing.
        var w3 = CBORWriter()
        w3.write(.map([.init(.int(1), .int(1)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(k.x))]))
        #expect(throws: COSEError.invalidKey("unsupported crv")) { try COSEKey(encoded: w3.bytes) }
        // The map read on the tape: an indefinite-length map; labels of no interest (text, 0, 3, -5, and
        // integers past Int64 in either sign) skipped; a key ID kept; a coordinate that is not one
        // definite byte string refused.
        let x: [UInt8] = [0x58, 0x20] + k.x
        let y: [UInt8] = [0x58, 0x20] + k.y!
        let indefinite: [UInt8] = [0xbf, 0x01, 0x02, 0x20, 0x01, 0x21] + x + [0x22] + y + [0xff]
        #expect(try COSEKey(encoded: indefinite) == k)
        let huge: [UInt8] = [0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        let hugeNegative: [UInt8] = [0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        var extra: [UInt8] = [0xab, 0x61, 0x78, 0x00, 0x03, 0x26, 0x00, 0x00, 0x24, 0x01]
        extra += huge + [0x01] + hugeNegative + [0x01] + [0x02, 0x42, 0xab, 0xcd]
        extra += [0x01, 0x02, 0x20, 0x01, 0x21] + x + [0x22] + y
        let withExtra = try COSEKey(encoded: extra)
        #expect(withExtra.x == k.x && withExtra.y == k.y && withExtra.keyID == [0xab, 0xcd])
        let chunkedX: [UInt8] = [0xa4, 0x01, 0x02, 0x20, 0x01, 0x21, 0x5f] + x + [0xff, 0x22] + y
        #expect(throws: COSEError.invalidKey("x is not a byte string")) { try COSEKey(encoded: chunkedX) }
        let text32 = [UInt8](repeating: 0x61, count: 32)
        let textY: [UInt8] = [0xa4, 0x01, 0x02, 0x20, 0x01, 0x21] + x + [0x22, 0x78, 0x20] + text32
        #expect(throws: COSEError.invalidKey("y is not a byte string")) { try COSEKey(encoded: textY) }
        let noY: [UInt8] = [0xa3, 0x01, 0x02, 0x20, 0x01, 0x21] + x
        #expect(throws: COSEError.invalidKey("missing y")) { try COSEKey(encoded: noY) }
        let textKID: [UInt8] = [0xa5, 0x01, 0x02, 0x20, 0x01, 0x21] + x + [0x22] + y + [0x02, 0x61, 0x6b]
        #expect(throws: COSEError.invalidKey("kid")) { try COSEKey(encoded: textKID) }
        // PKCS#8 PEM round trip of the signer.
        let pem = try signer.pkcs8PEM()
        let again = try SoftwareSigner(encodedPrivateKey: Array(pem.utf8))
        #expect(again.publicKey == signer.publicKey)
    }
}

@Suite("COSE: software signer key loading")
struct SignerLoadingTests {
    @Test(
        "PKCS#8 PEM and DER load on P-256, P-384, P-521 and Ed25519; garbage is refused",
        arguments: [COSEKey.Curve.p256, .p384, .p521, .ed25519])
    func loads(curve: COSEKey.Curve) throws {
        let s = try SoftwareSigner.generate(curve: curve)
        let pem = try s.pkcs8PEM()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = Array(Data(base64Encoded: body)!)
        for encoded in [Array(pem.utf8), der] {
            let loaded = try SoftwareSigner(encodedPrivateKey: encoded)
            #expect(loaded.publicKey == s.publicKey)
            #expect(loaded.algorithm == s.algorithm)
            let m = try COSESign1.sign(payload: [1, 2, 3], detached: false, signer: loaded)
            try COSESign1(encoded: m).verify(key: s.publicKey)
        }
        #expect(throws: COSEError.self) { try SoftwareSigner(encodedPrivateKey: der + [0]) }
        #expect(throws: COSEError.self) { try SoftwareSigner(encodedPrivateKey: Array(der.dropLast())) }
        #expect(throws: COSEError.self) {
            try SoftwareSigner(
                encodedPrivateKey: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8))
        }
        if curve != .ed25519 {
            // An explicit fully specified algorithm is accepted when it matches the curve.
            let esp: COSEAlgorithm = curve == .p256 ? .esp256 : curve == .p384 ? .esp384 : .esp512
            let s2 = try SoftwareSigner(encodedPrivateKey: der, algorithm: esp)
            let m = try COSESign1.sign(payload: [4], detached: false, signer: s2)
            #expect(try COSESign1(encoded: m).algorithm() == esp)
            try COSESign1(encoded: m).verify(key: s.publicKey)
            #expect(throws: COSEError.keyAlgorithmMismatch) {
                try SoftwareSigner(encodedPrivateKey: der, algorithm: .edDSA)
            }
        }
    }
}

@Suite("Certificates: the parse cache and the facts extracted once")
struct CertificateCacheTests {
    @Test("Cache keys hash only the length and the last 32 bytes but compare the whole DER; empty input never crashes")
    func keys() throws {
        let tail = [UInt8](repeating: 0xab, count: 32)
        let a = CertificateCache.Key(der: [1, 2, 3] + tail)
        let b = CertificateCache.Key(der: [1, 2, 4] + tail)
        #expect(a.hashValue == b.hashValue)
        #expect(a != b)
        #expect(a == CertificateCache.Key(der: [1, 2, 3] + tail))
        #expect(CertificateCache.Key(der: []) == CertificateCache.Key(der: []))
        #expect(CertificateCache.Key(der: []) != CertificateCache.Key(der: [0]))
        let cache = CertificateCache(capacity: 4)
        #expect(cache.lookup([]) == nil)
        #expect(throws: COSEError.self) { try Certificate(der: []) }
        #expect(throws: COSEError.self) { try Certificate(der: []) }
    }

    @Test(
        "A certificate from the cache reports the same subject, validity, AKI and EKU as a fresh parse; a look-alike DER is not confused with it"
    )
    func facts() throws {
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let rootKey = try SoftwareSigner.generate()
        let leafKey = try SoftwareSigner.generate()
        let rootName = DistinguishedName(commonName: "Cache Root", country: "UT")
        let root = try Certificate.issue(
            subject: rootName, publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey, serial: 1,
            notBefore: now - 86400, notAfter: now + 86400, profile: .readerRoot)
        let leaf = try Certificate.issue(
            subject: .init(commonName: "Cache Reader"), publicKey: leafKey.publicKey, issuer: root, issuerKey: rootKey,
            serial: 2, notBefore: now - 3600, notAfter: now + 3600, profile: .readerAuthentication)
        let again = try Certificate(der: leaf.der)
        let fresh = try X509CertificateFacts.fresh(leaf.der)
        #expect(again.subject == fresh.subject && again.subject.contains("Cache Reader"))
        #expect(again.notBefore == fresh.notBefore && again.notAfter == fresh.notAfter)
        #expect(again.authorityKeyIdentifier == root.subjectKeyIdentifier)
        #expect(fresh.extendedKeyUsages == [MdocKeyUsage.readerAuthentication])
        #expect(again.hasExtendedKeyUsage(MdocKeyUsage.readerAuthentication))
        #expect(!again.hasExtendedKeyUsage(MdocKeyUsage.documentSigner))
        #expect(!root.hasExtendedKeyUsage(MdocKeyUsage.readerAuthentication))
        // Same length and same last 32 bytes, one byte changed earlier: a different (invalid) certificate, not a cache hit.
        var forged = leaf.der
        forged[forged.count / 2] ^= 0x01
        if let c = try? Certificate(der: forged) { #expect(c.der == forged) }
    }
}

/// A certificate's facts read straight from OpenSSL, bypassing the cache.
enum X509CertificateFacts {
    static func fresh(_ der: [UInt8]) throws -> CertificateFacts { CertificateFacts(try X509Certificate(der: der)) }
}
