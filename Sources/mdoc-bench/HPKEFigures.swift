import Foundation
import Dispatch
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR
import HPKE
import CryptoCore
import DigitalCredentials
import AnnexCReader

// MARK: HPKE (Annex C suite) against its primitive floor

/// The unavoidable OpenSSL work of an Annex C seal: one P-256 key generation, one ECDH, the 4
/// HKDF-Extract and 4 HKDF-Expand calls of DHKEM + key schedule, one AES-128-GCM pass. Open replaces
/// key generation with one public key import (the `enc`). Same inputs sizes as HPKE uses.
@MainActor
func hpkeFigures(size: Int) {
    let label = "annexc_\(size / 1024)k"
    let recipient = try! HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
    let pkR = recipient.publicKey
    let info = [UInt8](repeating: 0x83, count: 44)  // a SessionTranscript is 44 bytes
    let plaintext = [UInt8](repeating: 0x5a, count: size)
    let rawR = try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: pkR.serialized)
    let rawSkR = try! CryptoCore.PrivateKey(curve: .p256, scalar: try! recipient.serialized())
    let salt32 = [UInt8](repeating: 1, count: 32)
    let ikm = [UInt8](repeating: 2, count: 80)
    let info60 = [UInt8](repeating: 3, count: 90)
    func hkdfCalls() {
        for _ in 0..<4 { blackHole(DigestAlgorithm.sha256.hkdfExtract(salt: salt32, ikm: ikm)) }
        for _ in 0..<4 { blackHole(try! DigestAlgorithm.sha256.hkdfExpand(prk: salt32, info: info60, length: 32)) }
    }
    let key = [UInt8](repeating: 9, count: 16)
    let nonce = [UInt8](repeating: 8, count: 12)
    let (enc, ct) = try! HPKE.seal(suite: .annexC, recipient: pkR, info: info, plaintext: plaintext)
    let realKey = [UInt8](repeating: 9, count: 16)
    let aeadCT = try! AEADAlgorithm.aes128gcm.seal(key: realKey, nonce: nonce, plaintext: plaintext, aad: [UInt8]())
    let (seal, sealFloor) = measurePair(
        "hpke.seal.\(label)", "floor.seal.\(label)", bytes: size,
        {
            blackHole(try! HPKE.seal(suite: .annexC, recipient: pkR, info: info, plaintext: plaintext))
        },
        {
            let e = try! CryptoCore.PrivateKey.generateForAgreement(.ec(.p256))
            blackHole(e.publicKey.rawRepresentation)
            blackHole(try! e.sharedSecret(with: rawR))
            hkdfCalls()
            blackHole(try! AEADAlgorithm.aes128gcm.seal(key: key, nonce: nonce, plaintext: plaintext, aad: [UInt8]()))
        })
    let (open, openFloor) = measurePair(
        "hpke.open.\(label)", "floor.open.\(label)", bytes: size,
        {
            blackHole(
                try! HPKE.open(suite: .annexC, privateKey: recipient, encapsulatedKey: enc, info: info, ciphertext: ct))
        },
        {
            let pkE = try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: enc)
            blackHole(try! rawSkR.sharedSecret(with: pkE))
            hkdfCalls()
            blackHole(try! AEADAlgorithm.aes128gcm.open(key: realKey, nonce: nonce, ciphertext: aeadCT, aad: [UInt8]()))
        })
    figures += [seal, sealFloor, open, openFloor]
}

/// The floor of one `accept`: the OpenSSL operations it cannot avoid, on the same key sizes and
/// payload size, through the same thin wrapper. Immutable, so threads can share it.
struct FloorOperations: Sendable {
    let devKey = try! CryptoCore.PrivateKey.generate(.ec(.p256))
    let pkR: CryptoCore.PublicKey
    let recipientPoint: [UInt8]
    let aesKey = [UInt8](repeating: 1, count: 16), nonce = [UInt8](repeating: 2, count: 12)
    let payload: [UInt8]
    let tbs = [UInt8](repeating: 4, count: 120)
    let salt32 = [UInt8](repeating: 1, count: 32), ikm80 = [UInt8](repeating: 2, count: 80),
        info90 = [UInt8](repeating: 3, count: 90)
    let dcapiInfo: [UInt8]

    /// The floor of answering `request` from `origin` with `engine`: the same recipient key, a
    /// DeviceResponse of the size the engine produces, a dcapiInfo of the size the transcript hashes.
    init(engine: DigitalCredentialsEngine, request: AnnexCReader.BuiltRequest, origin: Origin) {
        recipientPoint = request.recipientKey.publicKey.serialized
        pkR = try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: recipientPoint)
        let sealed = try! engine.accept(rawRequest: request.rawRequest, origin: origin.serialized)
        let responseSize = try! DeviceResponse(
            encoded: AnnexCReader.decrypt(
                sealed, recipientKey: request.recipientKey,
                encryptionInfo: request.encryptionInfo, origin: origin)
        ).item.encodedBytes.count
        payload = [UInt8](repeating: 3, count: responseSize)
        // dcapiInfo = ["dcapi" … ] as hashed: array and string heads around encryptionInfo and origin.
        dcapiInfo = [UInt8](
            repeating: 5, count: 2 + 2 + request.encryptionInfo.utf8.count + 2 + origin.serialized.utf8.count)
    }

    /// Size of the plaintext DeviceResponse.
    var responseSize: Int { payload.count }

    func run() {
        // The transcript's SHA-256 of dcapiInfo.
        blackHole(DigestAlgorithm.sha256.hash(dcapiInfo))
        // The reader's recipient key must be imported (and so validated) once.
        blackHole(try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: recipientPoint))
        let e = try! CryptoCore.PrivateKey.generateForAgreement(.ec(.p256))
        blackHole(e.publicKey.rawRepresentation)  // enc must be serialized
        blackHole(try! e.sharedSecret(with: pkR))
        // HPKE's 4 HKDF-Extract and 4 HKDF-Expand calls.
        for _ in 0..<4 { blackHole(DigestAlgorithm.sha256.hkdfExtract(salt: salt32, ikm: ikm80)) }
        for _ in 0..<4 { blackHole(try! DigestAlgorithm.sha256.hkdfExpand(prk: salt32, info: info90, length: 32)) }
        blackHole(try! devKey.signECDSA(message: tbs, digest: .sha256))
        blackHole(try! AEADAlgorithm.aes128gcm.seal(key: aesKey, nonce: nonce, plaintext: payload, aad: [UInt8]()))
    }
}
