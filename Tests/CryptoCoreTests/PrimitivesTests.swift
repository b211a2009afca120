import Foundation
import Testing
@testable import CryptoCore

@Suite("CryptoCore: random bytes and constant-time compare")
struct SecureBytesTests {
    @Test(
        "random(count:) returns the length asked for, differs between calls, refuses negative counts; constantTimeEqual compares"
    )
    func randomAndCompare() throws {
        #expect(try SecureBytes.random(count: 0).isEmpty)
        let a = try SecureBytes.random(count: 32)
        let b = try SecureBytes.random(count: 32)
        #expect(a.count == 32 && b.count == 32 && a != b)
        #expect(throws: CryptoError.invalidLength) { try SecureBytes.random(count: -1) }
        #expect(SecureBytes.constantTimeEqual(a, a))
        #expect(!SecureBytes.constantTimeEqual(a, b))
        #expect(!SecureBytes.constantTimeEqual(a, Array(a.dropLast())))
        var secret = a
        SecureBytes.cleanse(&secret)
        #expect(secret == [UInt8](repeating: 0, count: 32))
    }
}

@Suite("CryptoCore: byte arrays written in place")
struct ByteArraysTests {
    @Test(
        "make(count:) returns exactly what the writer wrote, through the stack buffer and past it; zeros(count:) is zeros"
    )
    func makeAndZeros() {
        for count in [0, 1, 31, 32, ByteArrays.stackLimit - 1, ByteArrays.stackLimit, ByteArrays.stackLimit + 1, 4096] {
            var calls = 0
            let a = ByteArrays.make(count: count) { buf in
                calls += 1
                #expect(buf.count == count)
                for i in buf.indices { buf[i] = UInt8(truncatingIfNeeded: i &* 31 &+ 7) }
            }
            #expect(a == (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }, "count \(count)")
            #expect(calls == (count == 0 ? 0 : 1))
            #expect(ByteArrays.zeros(count: count) == [UInt8](repeating: 0, count: count))
        }
    }
}

@Suite("CryptoCore: PKCS#8 EC private keys without OpenSSL's generic decoder")
struct PKCS8FastPathTests {
    @Test(
        "P-256/384/521 keys in PEM and DER load through the fast path with the same public key; damage is refused or left to OpenSSL"
    )
    func fastPath() throws {
        for curve in [Curve.p256, .p384, .p521] {
            let key = try PrivateKey.generate(.ec(curve))
            let der = try key.pkcs8DER()
            let pem = Array(try key.pkcs8PEM().utf8)
            for encoded in [der, pem] {
                let parsed = try #require(ECPKCS8.parse(encoded), "\(curve) not parsed by the fast path")
                #expect(parsed.curve == curve)
                #expect(parsed.publicPoint == key.publicKey.rawRepresentation)
                let loaded = try PrivateKey(encoded: encoded)
                #expect(loaded.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
                let sig = try loaded.signECDSA(message: [1, 2, 3], digest: .sha256)
                #expect(try key.publicKey.verifyECDSA(signature: sig, message: [1, 2, 3], digest: .sha256))
            }
            // An embedded public key that does not belong to the scalar is refused.
            var wrong = der
            wrong[wrong.count - 1] ^= 0x01
            #expect(ECPKCS8.parse(wrong) != nil)
            #expect(throws: CryptoError.self) { try PrivateKey(encoded: wrong) }
            // So is a valid point of the curve that is another key's (the point ends the DER).
            let other = try PrivateKey.generate(.ec(curve)).publicKey.rawRepresentation
            let swapped = Array(der.dropLast(other.count)) + other
            #expect(ECPKCS8.parse(swapped)?.publicPoint == other)
            #expect(throws: CryptoError.invalidPrivateKey) { try PrivateKey(encoded: swapped) }
            #expect(throws: CryptoError.invalidPrivateKey) {
                try PrivateKey(curve: curve, scalar: try key.exportSecret(), publicPoint: other)
            }
            #expect(
                try PrivateKey(
                    curve: curve, scalar: try key.exportSecret(), publicPoint: key.publicKey.rawRepresentation
                )
                .publicKey.rawRepresentation == key.publicKey.rawRepresentation)
            // With the caller's record that these bytes passed before, d·G is not computed again: the
            // embedded point is taken as it is (hence a record may only name bytes that passed), while a
            // point off the curve is still refused.
            #expect(try PrivateKey(encoded: swapped, publicPointChecked: true).publicKey.rawRepresentation == other)
            #expect(throws: CryptoError.self) { try PrivateKey(encoded: wrong, publicPointChecked: true) }
            let recorded = try PrivateKey(encoded: der, publicPointChecked: true)
            let signed = try recorded.signECDSA(message: [4, 5], digest: .sha256)
            #expect(try key.publicKey.verifyECDSA(signature: signed, message: [4, 5], digest: .sha256))
            // Its EVP_PKEY holds the scalar alone: exported, it loads back as the same key.
            #expect(
                try PrivateKey(encoded: try recorded.pkcs8DER()).publicKey.rawRepresentation
                    == key.publicKey.rawRepresentation)
            // Truncations never parse (and never crash); OpenSSL then refuses them too.
            for cut in stride(from: 0, to: der.count, by: 7) {
                #expect(ECPKCS8.parse(Array(der.prefix(cut))) == nil)
                #expect(throws: CryptoError.self) { try PrivateKey(encoded: Array(der.prefix(cut))) }
            }
        }
        // Non-EC keys are not the fast path's business: OpenSSL's decoder still loads them.
        let ed = try PrivateKey.generate(.ed25519)
        #expect(ECPKCS8.parse(try ed.pkcs8DER()) == nil)
        #expect(
            try PrivateKey(encoded: try ed.pkcs8DER()).publicKey.rawRepresentation == ed.publicKey.rawRepresentation)
        // The committed test keys load.
        let keys = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("TestVectors/context/keys")
        var n = 0
        for f in try FileManager.default.contentsOfDirectory(at: keys, includingPropertiesForKeys: nil)
        where f.pathExtension == "pem" {
            let bytes = Array(try Data(contentsOf: f))
            #expect(ECPKCS8.parse(bytes) != nil, "\(f.lastPathComponent)")
            _ = try PrivateKey(encoded: bytes)
            n += 1
        }
        #expect(n >= 5)
    }
}

@Suite("CryptoCore: AEAD over a message in pieces")
struct AEADPiecesTests {
    static let ciphers: [AEADAlgorithm] = [.aes128gcm, .aes256gcm, .chacha20poly1305]

    /// `count` random bytes.
    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    /// `pt` cut at `cuts` and sealed piece by piece, declaring `count` bytes.
    static func sealInPieces(
        _ aead: AEADAlgorithm, key: [UInt8], nonce: [UInt8], aad: [UInt8], _ pt: [UInt8], cuts: [Int], count: Int? = nil
    ) throws(CryptoError) -> [UInt8] {
        let declared = count ?? pt.count
        var out = [UInt8](repeating: 0, count: max(declared, pt.count) + aead.tagSize)
        let bounds = [0] + cuts + [pt.count]
        let result: Result<Void, CryptoError> = pt.withUnsafeBytes { p in
            out.withUnsafeMutableBytes { o in
                Result { () throws(CryptoError) in
                    try aead.seal(key: key, nonce: nonce, count: declared, aad: aad, into: o) { piece in
                        for k in 0..<(bounds.count - 1) {
                            piece(UnsafeRawBufferPointer(rebasing: p[bounds[k]..<bounds[k + 1]]))
                        }
                    }
                }
            }
        }
        try result.get()
        return Array(out[..<(declared + aead.tagSize)])
    }

    @Test(
        "Sealing a message handed over in pieces gives the one-shot ciphertext and tag (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305; cuts inside and across blocks, empty pieces); pieces that do not add up are invalidLength"
    )
    func pieces() throws {
        var rng = SystemRandomNumberGenerator()
        for aead in Self.ciphers {
            let key = Self.random(aead.keySize)
            let nonce = Self.random(12)
            let aad: [UInt8] = [1, 2, 3]
            for n in [0, 1, 15, 16, 17, 47, 300, 5_000] {
                let pt = Self.random(n)
                let whole = try aead.seal(key: key, nonce: nonce, plaintext: pt, aad: aad)
                var cutSets: [[Int]] = [[], [0], [n], [n / 2], [n / 3, n / 3, 2 * n / 3]]
                for _ in 0..<8 { cutSets.append((0..<5).map { _ in Int.random(in: 0...n, using: &rng) }.sorted()) }
                for cuts in cutSets {
                    let sealed = try Self.sealInPieces(aead, key: key, nonce: nonce, aad: aad, pt, cuts: cuts)
                    #expect(sealed == whole, "\(aead) length \(n) cuts \(cuts)")
                }
                #expect(try aead.open(key: key, nonce: nonce, ciphertext: whole, aad: aad) == pt)
            }
            let pt = [UInt8](repeating: 9, count: 40)
            #expect(throws: CryptoError.invalidLength) {
                try Self.sealInPieces(aead, key: key, nonce: nonce, aad: aad, pt, cuts: [20], count: 39)
            }
            #expect(throws: CryptoError.invalidLength) {
                try Self.sealInPieces(aead, key: key, nonce: nonce, aad: aad, pt, cuts: [20], count: 41)
            }
        }
    }

    @Test(
        "Sealing in place leaves the one-shot ciphertext where the plaintext was and the tag in its own buffer (every cipher, empty to multi-block); a tag buffer of the wrong size is invalidLength"
    )
    func inPlace() throws {
        for aead in Self.ciphers {
            let key = Self.random(aead.keySize)
            let nonce = Self.random(12)
            let aad: [UInt8] = [4, 5]
            for n in [0, 1, 16, 33, 5_000] {
                let pt = Self.random(n)
                let whole = try aead.seal(key: key, nonce: nonce, plaintext: pt, aad: aad)
                var buffer = pt
                var tag = [UInt8](repeating: 0, count: aead.tagSize)
                let result: Result<Void, CryptoError> = buffer.withUnsafeMutableBytes { b in
                    tag.withUnsafeMutableBytes { t in
                        Result { () throws(CryptoError) in
                            try aead.seal(key: key, nonce: nonce, inPlace: b, aad: aad, tag: t)
                        }
                    }
                }
                try result.get()
                #expect(buffer + tag == whole, "\(aead) length \(n)")
            }
            var buffer = [UInt8](repeating: 1, count: 20)
            var short = [UInt8](repeating: 0, count: aead.tagSize - 1)
            #expect(throws: CryptoError.invalidLength) {
                try buffer.withUnsafeMutableBytes { b in
                    try short.withUnsafeMutableBytes { t in
                        try aead.seal(key: key, nonce: nonce, inPlace: b, aad: aad, tag: t)
                    }
                }
            }
            #expect(buffer == [UInt8](repeating: 1, count: 20))
        }
    }
}

@Suite("CryptoCore: HMAC")
struct HMACTests {
    static func hex(_ s: String) -> [UInt8] {
        var out = [UInt8]()
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            out.append(UInt8(s[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    @Test(
        "RFC 4231 test cases 1, 2, 6 and 7 (short key, short data, a key longer than a block, data longer than a block) for HMAC-SHA-256 and HMAC-SHA-512"
    )
    func rfc4231() {
        let large = [UInt8](repeating: 0xaa, count: 131)
        let cases: [(key: [UInt8], data: String, sha256: String, sha512: String)] = [
            (
                [UInt8](repeating: 0x0b, count: 20), "Hi There",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
                "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"
            ),
            (
                Array("Jefe".utf8), "what do ya want for nothing?",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
                "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
            ),
            (
                large, "Test Using Larger Than Block-Size Key - Hash Key First",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
                "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"
            ),
            (
                large,
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.",
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
                "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"
            ),
        ]
        for c in cases {
            #expect(DigestAlgorithm.sha256.hmac(key: c.key, data: Array(c.data.utf8)) == Self.hex(c.sha256))
            #expect(DigestAlgorithm.sha512.hmac(key: c.key, data: Array(c.data.utf8)) == Self.hex(c.sha512))
        }
    }

    @Test(
        "HMAC over a message in parts equals the definition H((K ^ opad) || H((K ^ ipad) || m)) for every digest, messages joined on the stack and streamed (around the joining limit), keys short, empty and longer than a block"
    )
    func partsAgainstDefinition() {
        var rng = SystemRandomNumberGenerator()
        for digest in [DigestAlgorithm.sha256, .sha384, .sha512] {
            let bs = digest.blockSize
            for keyLength in [0, 16, bs, bs + 1] {
                let key = (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &rng) }
                var k0 = keyLength > bs ? digest.hash(key) : key
                k0 += [UInt8](repeating: 0, count: bs - k0.count)
                for length in [0, 1, 100, DigestAlgorithm.joinedLimit, DigestAlgorithm.joinedLimit + 1, 3_000] {
                    let m = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
                    let inner = digest.hash(k0.map { $0 ^ 0x36 } + m)
                    let expected = digest.hash(k0.map { $0 ^ 0x5c } + inner)
                    // The message cut into three parts (some empty at the ends).
                    let cuts = [length / 3, length / 2].sorted()
                    var out = [UInt8](repeating: 0, count: digest.outputSize)
                    key.withUnsafeBytes { kb in
                        m.withUnsafeBytes { mb in
                            let parts = [
                                UnsafeRawBufferPointer(rebasing: mb[..<cuts[0]]),
                                UnsafeRawBufferPointer(rebasing: mb[cuts[0]..<cuts[1]]),
                                UnsafeRawBufferPointer(rebasing: mb[cuts[1]...]),
                            ]
                            parts.withUnsafeBufferPointer { p in
                                out.withUnsafeMutableBytes { digest.hmac(key: kb, parts: p, into: $0) }
                            }
                        }
                    }
                    #expect(out == expected, "\(digest) key \(keyLength) message \(length)")
                    #expect(digest.hmac(key: key, data: m) == expected)
                }
            }
        }
    }
}

@Suite("CryptoCore: UTF-8 checks and short byte compares")
struct UTF8CheckTests {
    @Test(
        "ShortBytes.equal reads exactly its bytes: equal strings to 80 bytes at any alignment are equal, a difference at any position is found"
    )
    func shortBytesEqual() {
        for length in 0...80 {
            let text = (0..<length).map { UInt8(truncatingIfNeeded: 0x41 + $0 * 5) }
            for offset in 0..<8 {
                // Different bytes around each copy: a read outside the strings would tell them apart.
                let a = [UInt8](repeating: 0x01, count: offset) + text + [UInt8](repeating: 0x02, count: 8)
                let b = [UInt8](repeating: 0x03, count: 3) + text + [UInt8](repeating: 0x04, count: 8)
                a.withUnsafeBytes { x in
                    b.withUnsafeBytes { y in
                        #expect(ShortBytes.equal(x.baseAddress! + offset, y.baseAddress! + 3, count: length))
                    }
                }
                for position in 0..<length {
                    var c = b
                    c[3 + position] ^= 0x20
                    a.withUnsafeBytes { x in
                        c.withUnsafeBytes { y in
                            #expect(
                                !ShortBytes.equal(x.baseAddress! + offset, y.baseAddress! + 3, count: length),
                                "\(position) of \(length)")
                        }
                    }
                }
            }
        }
    }

    @Test(
        "isASCII reads exactly its bytes: a byte at or above 0x80 at any position of text to 40 bytes is found, the non-ASCII bytes around it never are"
    )
    func isASCIIReadsItsBytes() {
        for length in 0...40 {
            for offset in 0..<8 {
                // Non-ASCII bytes on both sides: a read outside the text would report them.
                var buffer = [UInt8](repeating: 0xff, count: offset) + [UInt8](repeating: 0x7f, count: length)
                buffer += [UInt8](repeating: 0x80, count: 8)
                buffer.withUnsafeBufferPointer { b in
                    #expect(UTF8Check.isASCII(b.baseAddress! + offset, count: length), "\(length) at \(offset)")
                    #expect(UTF8Check.isValid(b.baseAddress! + offset, count: length))
                }
                for position in 0..<length {
                    for high: UInt8 in [0x80, 0xc3, 0xff] {
                        var changed = buffer
                        changed[offset + position] = high
                        changed.withUnsafeBufferPointer { b in
                            #expect(
                                !UTF8Check.isASCII(b.baseAddress! + offset, count: length), "\(position) of \(length)")
                        }
                    }
                }
            }
        }
    }
}
