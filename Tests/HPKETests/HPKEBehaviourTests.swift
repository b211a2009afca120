import Foundation
import Testing
import TestSupport
@testable import HPKE

@Suite("HPKE: round trips and failures")
struct HPKEBehaviourTests {
    static let suite = HPKE.Ciphersuite.annexC
    static let info = Array("info".utf8)

    @Test(
        "Round trips for every KEM (P-384 included) with every KDF and AEAD, in every mode",
        arguments: HPKE.KEM.allCases)
    func roundTrips(kem: HPKE.KEM) throws {
        for kdf in HPKE.KDF.allCases {
            for aead in HPKE.AEAD.allCases where aead != .exportOnly {
                let suite = HPKE.Ciphersuite(kem: kem, kdf: kdf, aead: aead)
                let skR = try HPKE.PrivateKey.generate(kem: kem)
                let skS = try HPKE.PrivateKey.generate(kem: kem)
                for mode in HPKE.Mode.allCases {
                    let psk: [UInt8] = (mode == .psk || mode == .authPSK) ? [UInt8](repeating: 7, count: 32) : []
                    let pskID: [UInt8] = psk.isEmpty ? [] : [1]
                    let auth = mode == .auth || mode == .authPSK
                    let opts = HPKE.SetupOptions(psk: psk, pskID: pskID)
                    let (enc, ct) = try HPKE.seal(
                        suite: suite, recipient: skR.publicKey, info: Self.info, plaintext: [1, 2, 3], aad: [9],
                        options: opts, authenticatedBy: auth ? skS : nil)
                    #expect(enc.count == kem.encapsulatedKeySize)
                    #expect(ct.count == 3 + aead.tagSize)
                    let pt = try HPKE.open(
                        suite: suite, privateKey: skR, encapsulatedKey: enc, info: Self.info, ciphertext: ct, aad: [9],
                        options: opts, authenticatedBy: auth ? skS.publicKey : nil)
                    #expect(pt == [1, 2, 3])
                }
            }
        }
    }

    @Test("Multi-message contexts keep their sequence numbers in step; export matches")
    func contexts() throws {
        let skR = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
        var s = try HPKE.Sender(suite: Self.suite, recipient: skR.publicKey, info: Self.info)
        var r = try HPKE.Recipient(
            suite: Self.suite, privateKey: skR, encapsulatedKey: s.encapsulatedKey, info: Self.info)
        for i in 0..<5 {
            let ct = try s.seal([UInt8(i)])
            #expect(try r.open(ct) == [UInt8(i)])
        }
        #expect(s.sequenceNumber == 5 && r.sequenceNumber == 5)
        // Out-of-order: the next recipient nonce no longer matches an old ciphertext, and a failed open
        // does not advance the sequence.
        let c5 = try s.seal([5])
        let c6 = try s.seal([6])
        #expect(throws: HPKE.Error.openFailed) { try r.open(c6) }
        #expect(r.sequenceNumber == 5)
        #expect(try r.open(c5) == [5])
        #expect(try s.export(context: [1], length: 100) == (try r.export(context: [1], length: 100)))
        #expect(throws: HPKE.Error.invalidLength) { try s.export(context: [], length: 255 * 32 + 1) }
    }

    @Test(
        "A message sealed from pieces opens like one sealed whole and advances the sequence number once; pieces that do not add up are invalidLength and leave it"
    )
    func sealPieces() throws {
        let r = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
        var s = try HPKE.Sender(suite: .annexC, recipient: r.publicKey, info: [7])
        var recipient = try HPKE.Recipient(suite: .annexC, privateKey: r, encapsulatedKey: s.encapsulatedKey, info: [7])
        let pt = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        func sealed(_ count: Int) throws(HPKE.Error) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: count + 16)
            let result: Result<Void, HPKE.Error> = pt.withUnsafeBytes { p in
                out.withUnsafeMutableBytes { o in
                    Result { () throws(HPKE.Error) in
                        try s.seal(count: count, into: o) { piece in
                            piece(UnsafeRawBufferPointer(rebasing: p[..<33]))
                            piece(UnsafeRawBufferPointer(rebasing: p[33...]))
                        }
                    }
                }
            }
            try result.get()
            return out
        }
        #expect(throws: HPKE.Error.invalidLength) { try sealed(99) }
        let first = try sealed(100)
        #expect(try recipient.open(first) == pt)
        let second = try s.seal(pt)
        #expect(try recipient.open(second) == pt)
    }

    @Test("Sequence number exhaustion is an error, never a nonce reuse")
    func sequenceLimit() throws {
        let skR = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
        var s = try HPKE.Sender(suite: Self.suite, recipient: skR.publicKey, info: [])
        s.core.sequence = UInt64.max - 1
        _ = try s.seal([1])
        #expect(throws: HPKE.Error.messageLimitReached) { try s.seal([2]) }
        #expect(s.sequenceNumber == UInt64.max)
    }

    @Test("Tampered ciphertext, tag, enc, info, aad, wrong key, wrong mode, wrong PSK: all fail as openFailed")
    func tampering() throws {
        let skR = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
        let skS = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
        let psk = HPKE.SetupOptions(psk: [UInt8](repeating: 1, count: 32), pskID: [2])
        let (enc, ct) = try HPKE.seal(
            suite: Self.suite, recipient: skR.publicKey, info: Self.info, plaintext: Array(repeating: 5, count: 40),
            aad: [7], options: psk, authenticatedBy: skS)
        func open(
            enc: [UInt8] = enc, ct: [UInt8] = ct, info: [UInt8] = Self.info, aad: [UInt8] = [7],
            key: HPKE.PrivateKey = skR,
            options: HPKE.SetupOptions = psk, sender: HPKE.PublicKey? = skS.publicKey
        ) throws(HPKE.Error) -> [UInt8] {
            try HPKE.open(
                suite: Self.suite, privateKey: key, encapsulatedKey: enc, info: info, ciphertext: ct, aad: aad,
                options: options, authenticatedBy: sender)
        }
        #expect(try open() == Array(repeating: 5, count: 40))
        var c1 = ct
        c1[0] ^= 1
        var c2 = ct
        c2[c2.count - 1] ^= 1
        var e1 = enc
        e1[10] ^= 1
        let cases: [(String, () throws(HPKE.Error) -> [UInt8])] = [
            ("ciphertext", { () throws(HPKE.Error) in try open(ct: c1) }),
            ("tag", { () throws(HPKE.Error) in try open(ct: c2) }),
            ("truncated ciphertext", { () throws(HPKE.Error) in try open(ct: Array(ct.prefix(10))) }),
            ("empty ciphertext", { () throws(HPKE.Error) in try open(ct: []) }),
            ("enc (off curve)", { () throws(HPKE.Error) in try open(enc: e1) }),
            ("enc truncated", { () throws(HPKE.Error) in try open(enc: Array(enc.dropLast())) }),
            ("enc compressed", { () throws(HPKE.Error) in try open(enc: [0x02] + enc[1..<33]) }),
            ("enc infinity", { () throws(HPKE.Error) in try open(enc: [0x00]) }),
            ("info", { () throws(HPKE.Error) in try open(info: [0]) }),
            ("aad", { () throws(HPKE.Error) in try open(aad: []) }),
            (
                "wrong key",
                { () throws(HPKE.Error) in try open(key: try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)) }
            ),
            ("wrong mode (no auth)", { () throws(HPKE.Error) in try open(sender: nil) }),
            (
                "wrong sender",
                { () throws(HPKE.Error) in
                    try open(sender: try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256).publicKey)
                }
            ),
            (
                "wrong PSK",
                { () throws(HPKE.Error) in try open(options: .init(psk: [UInt8](repeating: 9, count: 32), pskID: [2])) }
            ),
            (
                "wrong PSK id",
                { () throws(HPKE.Error) in try open(options: .init(psk: [UInt8](repeating: 1, count: 32), pskID: [3])) }
            ),
            ("missing PSK", { () throws(HPKE.Error) in try open(options: .init()) }),
            (
                "PSK without id",
                { () throws(HPKE.Error) in try open(options: .init(psk: [UInt8](repeating: 1, count: 32))) }
            ),
        ]
        for (name, body) in cases {
            #expect(throws: HPKE.Error.openFailed, "\(name)") { try body() }
        }
    }

    @Test("Setup-level errors are specific: invalid enc, PSK rules, KEM mismatch, export-only")
    func setupErrors() throws {
        let skR = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
        #expect(throws: HPKE.Error.invalidEncapsulatedKey) {
            _ = try HPKE.Recipient(
                suite: Self.suite, privateKey: skR, encapsulatedKey: [UInt8](repeating: 4, count: 65), info: [])
        }
        #expect(throws: HPKE.Error.invalidPSKInputs) {
            _ = try HPKE.Sender(suite: Self.suite, recipient: skR.publicKey, info: [], options: .init(psk: [1]))
        }
        #expect(throws: HPKE.Error.invalidPSKInputs) {
            _ = try HPKE.Sender(suite: Self.suite, recipient: skR.publicKey, info: [], options: .init(pskID: [1]))
        }
        let x = try HPKE.PrivateKey.generate(kem: .x25519HKDFSHA256)
        #expect(throws: HPKE.Error.kemMismatch) {
            _ = try HPKE.Sender(suite: Self.suite, recipient: x.publicKey, info: [])
        }
        let exportOnly = HPKE.Ciphersuite(kem: .p256HKDFSHA256, kdf: .hkdfSHA256, aead: .exportOnly)
        #expect(throws: HPKE.Error.exportOnly) {
            try HPKE.seal(suite: exportOnly, recipient: skR.publicKey, info: [], plaintext: [1])
        }
        #expect(throws: HPKE.Error.exportOnly) {
            try HPKE.open(suite: exportOnly, privateKey: skR, encapsulatedKey: [], info: [], ciphertext: [])
        }
    }

    @Test("Public key validation: off-curve, infinity, compressed, wrong length; all-zero X25519/X448 shared secrets")
    func publicKeyValidation() throws {
        let good = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256).publicKey.serialized
        var off = good
        off[64] ^= 1
        for bad in [
            off, [0x00], [0x02] + Array(good[1..<33]), Array(good.dropLast()), good + [0],
            [UInt8](repeating: 0, count: 65),
            [0x04] + [UInt8](repeating: 0xff, count: 64),
        ] {
            #expect(throws: HPKE.Error.invalidPublicKey) { try HPKE.PublicKey(serialized: bad, kem: .p256HKDFSHA256) }
        }
        // Low-order X25519 / X448 points give an all-zero DH output, which must be refused.
        for (kem, size) in [(HPKE.KEM.x25519HKDFSHA256, 32), (.x448HKDFSHA512, 56)] {
            let zero = try HPKE.PublicKey(serialized: [UInt8](repeating: 0, count: size), kem: kem)
            let suite = HPKE.Ciphersuite(kem: kem, kdf: .hkdfSHA256, aead: .aes128GCM)
            #expect(throws: HPKE.Error.invalidPublicKey) {
                _ = try HPKE.Sender(suite: suite, recipient: zero, info: [])
            }
            let skR = try HPKE.PrivateKey.generate(kem: kem)
            #expect(throws: HPKE.Error.invalidEncapsulatedKey) {
                _ = try HPKE.Recipient(
                    suite: suite, privateKey: skR, encapsulatedKey: [UInt8](repeating: 0, count: size), info: [])
            }
        }
        // Private keys: zero and ≥ order refused.
        #expect(throws: HPKE.Error.invalidPrivateKey) {
            try HPKE.PrivateKey(serialized: [UInt8](repeating: 0, count: 32), kem: .p256HKDFSHA256)
        }
        #expect(throws: HPKE.Error.invalidPrivateKey) {
            try HPKE.PrivateKey(serialized: [UInt8](repeating: 0xff, count: 32), kem: .p256HKDFSHA256)
        }
        #expect(throws: HPKE.Error.invalidPrivateKey) { try HPKE.PrivateKey(serialized: [1], kem: .x25519HKDFSHA256) }
    }

    @Test(
        "Annex C derived deterministic seal vector (fixed ephemeral key) is reproduced byte for byte and opens",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func annexCDeterministicSeal() throws {
        let j = try SharedVectors.json("annexc/derived-deterministic-seal/vector.json") as! [String: Any]
        let inputs = j["inputs"] as! [String: String]
        let outputs = j["outputs"] as! [String: String]
        let pkR = try HPKE.PublicKey(
            serialized: h(inputs["recipientPublicKey_uncompressed_hex"]!), kem: .p256HKDFSHA256)
        let skE = try HPKE.PrivateKey(
            serialized: h(inputs["ephemeral_skE_hex (RFC 9180 A.3.1 skEm reused)"]!), kem: .p256HKDFSHA256)
        let info = h(inputs["sessionTranscript_cbor_hex"]!)
        var s = try HPKE.Sender(suite: .annexC, recipient: pkR, info: info, ephemeralKey: skE)
        let ct = try s.seal(h(inputs["plaintext_DeviceResponse_cbor_hex"]!))
        #expect(s.encapsulatedKey == h(outputs["enc_hex"]!))
        #expect(ct == h(outputs["cipherText_hex"]!))
        // The recipient's private key was published with the Chrome capture on purpose (test key).
        let jwk = try SharedVectors.json("annexc/shc-real-chrome-android/recipient-private.jwk.json") as! [String: Any]
        let skR = try HPKE.PrivateKey(serialized: base64url(jwk["d"] as! String), kem: .p256HKDFSHA256)
        #expect(skR.publicKey == pkR)
        let pt = try HPKE.open(
            suite: .annexC, privateKey: skR, encapsulatedKey: s.encapsulatedKey, info: info, ciphertext: ct)
        #expect(pt == h(inputs["plaintext_DeviceResponse_cbor_hex"]!))
    }
}

func base64url(_ s: String) -> [UInt8] {
    var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while t.count % 4 != 0 { t += "=" }
    return Array(Data(base64Encoded: t)!)
}
