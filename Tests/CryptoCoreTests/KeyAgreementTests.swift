import Foundation
import Testing
@testable import CryptoCore

/// The two forms a NIST-curve key can take in CryptoCore — an `EVP_PKEY`, or the bare scalar / point
/// that key agreement uses — must agree with each other in every direction.
@Suite("CryptoCore: key-agreement keys (bare scalar and point) against EVP key pairs")
struct KeyAgreementTests {
    @Test(
        "ECDH between the two forms gives one secret; the point is d·G; export, re-import and signing still work",
        arguments: [Curve.p256, .p384, .p521])
    func formsAgree(curve: Curve) throws {
        let agreement = try PrivateKey.generateForAgreement(.ec(curve))  // scalar + point
        let evp = try PrivateKey.generate(.ec(curve))  // EVP_PKEY key pair
        guard agreement.storage.bareBox != nil, agreement.publicKey.storage.bareBox != nil, evp.storage.evpBox != nil
        else {
            Issue.record("unexpected key storage")
            return
        }
        let s1 = try agreement.sharedSecret(with: evp.publicKey)
        let s2 = try evp.sharedSecret(with: agreement.publicKey)
        #expect(s1 == s2)
        #expect(s1.count == curve.coordinateSize)
        // The same peer imported from its encoding (point form) gives the same secret.
        let peerAsPoint = try PublicKey(curve: curve, uncompressedPoint: evp.publicKey.rawRepresentation)
        #expect(try agreement.sharedSecret(with: peerAsPoint) == s1)

        // The scalar re-imported as an EVP key pair has the same public point (so d·G was right) and
        // the same secret.
        var d = try agreement.exportSecret()
        defer { SecureBytes.cleanse(&d) }
        #expect(d.count == curve.coordinateSize)
        let reimported = try PrivateKey(curve: curve, scalar: d)
        #expect(reimported.publicKey.rawRepresentation == agreement.publicKey.rawRepresentation)
        #expect(try reimported.sharedSecret(with: evp.publicKey) == s1)

        // Signing with the bare scalar and verifying with the bare point both convert on demand.
        let message = Array("key agreement keys can still sign".utf8)
        let sig = try agreement.signECDSA(message: message, digest: curve.digest)
        #expect(try agreement.publicKey.verifyECDSA(signature: sig, message: message, digest: curve.digest))
        #expect(try evp.publicKey.verifyECDSA(signature: sig, message: message, digest: curve.digest) == false)
        #expect(try reimported.publicKey.verifyECDSA(signature: sig, message: message, digest: curve.digest))
        #expect(try agreement.pkcs8DER().count > 0)

        // Fresh keys differ.
        let other = try PrivateKey.generateForAgreement(.ec(curve))
        #expect(other.publicKey.rawRepresentation != agreement.publicKey.rawRepresentation)
        #expect(try other.sharedSecret(with: evp.publicKey) != s1)
    }

    @Test(
        "Point import refuses the wrong curve's size, a flipped y, x or y not below the prime, and non-uncompressed forms",
        arguments: [Curve.p256, .p384, .p521])
    func pointValidation(curve: Curve) throws {
        let good = try PrivateKey.generateForAgreement(.ec(curve)).publicKey.rawRepresentation
        let n = curve.coordinateSize
        var flippedY = good
        flippedY[2 * n] ^= 1
        var compressed = Array(good[0...n])
        compressed[0] = 2
        let allOnes = [4] + [UInt8](repeating: 0xff, count: 2 * n)
        for bad in [
            flippedY, compressed, allOnes, [0x00], Array(good.dropLast()), good + [0], [0x06] + Array(good.dropFirst()),
        ] {
            #expect(throws: CryptoError.invalidPublicKey) { try PublicKey(curve: curve, uncompressedPoint: bad) }
        }
        for other in Curve.allCases where other != curve {
            #expect(throws: CryptoError.invalidPublicKey) { try PublicKey(curve: other, uncompressedPoint: good) }
        }
        // Agreement across curves is refused before any arithmetic.
        let mine = try PrivateKey.generateForAgreement(.ec(curve))
        for other in Curve.allCases where other != curve {
            let peer = try PrivateKey.generateForAgreement(.ec(other)).publicKey
            #expect(throws: CryptoError.invalidPublicKey) { try mine.sharedSecret(with: peer) }
        }
    }
}

/// Signing and verifying contexts are pooled per key and lent to one caller at a time.
@Suite("CryptoCore: pooled ECDSA signing and verifying contexts")
struct PooledContextTests {
    /// A plain counter only the section touches (so a body run concurrently would lose increments,
    /// and ThreadSanitizer, which runs this suite, would report it).
    final class Counter: @unchecked Sendable {
        var value = 0
    }

    @Test("A critical section runs one body at a time across threads (the serialized PKCS#11 module's lock)")
    func criticalSection() {
        let section = CriticalSection()
        let counter = Counter()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<20_000 { section.run { counter.value += 1 } }
        }
        #expect(section.run { counter.value } == 80_000)
    }

    @Test(
        "One key signing and verifying from two threads: every signature verifies, nonces are fresh, a wrong signature leaves the context usable"
    )
    func concurrentSignAndVerify() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let other = try PrivateKey.generate(.ec(.p256))
        let message = Array("pooled".utf8)
        let collected = LockedValue<(signatures: [[UInt8]], failures: [String])>(([], []))
        DispatchQueue.concurrentPerform(iterations: 2) { t in
            var mine = [[UInt8]]()
            var bad = [String]()
            for i in 0..<150 {
                do {
                    let sig = try key.signECDSA(message: message + [UInt8(t), UInt8(i)], digest: .sha256)
                    if try !key.publicKey.verifyECDSA(
                        signature: sig, message: message + [UInt8(t), UInt8(i)], digest: .sha256)
                    {
                        bad.append("thread \(t) #\(i) did not verify")
                    }
                    // A wrong message, then a wrong key: false, and the pooled contexts stay usable.
                    if try key.publicKey.verifyECDSA(signature: sig, message: message, digest: .sha256) {
                        bad.append("wrong message verified")
                    }
                    if try other.publicKey.verifyECDSA(
                        signature: sig, message: message + [UInt8(t), UInt8(i)], digest: .sha256)
                    {
                        bad.append("wrong key verified")
                    }
                    mine.append(sig)
                } catch {
                    bad.append("thread \(t) #\(i): \(error)")
                }
            }
            collected.withLock {
                $0.signatures += mine
                $0.failures += bad
            }
        }
        let (signatures, failures) = collected.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(signatures.count == 300)
        // Two signatures of one message differ (a fresh nonce per call on a reused context).
        let a = try key.signECDSA(message: message, digest: .sha256)
        let b = try key.signECDSA(message: message, digest: .sha256)
        #expect(a != b)
        #expect(try key.publicKey.verifyECDSA(signature: a, message: message, digest: .sha256))
        #expect(try key.publicKey.verifyECDSA(signature: b, message: message, digest: .sha256))
        // Other digests through the same pooled context.
        for d in [DigestAlgorithm.sha384, .sha512] {
            let s = try key.signECDSA(message: message, digest: d)
            #expect(try key.publicKey.verifyECDSA(signature: s, message: message, digest: d))
            #expect(try !key.publicKey.verifyECDSA(signature: s, message: message, digest: .sha256))
        }
    }
}
