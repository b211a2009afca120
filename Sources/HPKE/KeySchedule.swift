internal import CryptoCore

/// The key schedule (RFC 9180 §5.1) and the secrets it produces. A class so that exactly one
/// owner holds the buffer and cleanses it on release; the contents never change after init. The
/// three secrets live in one buffer (`key ‖ base_nonce ‖ exporter_secret`): one allocation.
final class KeySchedule: @unchecked Sendable {
    private var secrets: [UInt8]
    private let nk: Int, nn: Int

    init(secrets: [UInt8], keySize: Int, nonceSize: Int) {
        self.secrets = secrets
        nk = keySize
        nn = nonceSize
    }

    deinit { SecureBytes.cleanse(&secrets) }

    /// The AEAD key.
    var key: ArraySlice<UInt8> { secrets[0..<nk] }
    /// The base nonce.
    var baseNonce: ArraySlice<UInt8> { secrets[nk..<(nk + nn)] }
    /// The exporter secret.
    var exporterSecret: ArraySlice<UInt8> { secrets[(nk + nn)...] }

    /// `VerifyPSKInputs` then `KeySchedule<ROLE>(mode, shared_secret, info, psk, psk_id)`. Every
    /// intermediate (the two hashes, the context, `secret`) lives on the stack and is cleansed.
    static func derive(
        suite: HPKE.Ciphersuite, mode: HPKE.Mode, sharedSecret: [UInt8], info: [UInt8],
        psk: [UInt8], pskID: [UInt8]
    ) throws(HPKE.Error) -> KeySchedule {
        let gotPSK = !psk.isEmpty
        let gotPSKID = !pskID.isEmpty
        guard gotPSK == gotPSKID else { throw .invalidPSKInputs }
        let pskMode = mode == .psk || mode == .authPSK
        guard gotPSK == pskMode else { throw .invalidPSKInputs }

        let kdf = LabeledKDF(digest: suite.kdf.digest, suiteID: suite.suiteID)
        let nh = suite.kdf.hashSize
        let nk = suite.aead.keySize
        let nn = suite.aead.nonceSize
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        var failed = false
        let secrets = ByteArrays.make(count: nk + nn + nh) { out in
            // scratch = mode(1) ‖ psk_id_hash(Nh) ‖ info_hash(Nh) ‖ secret(Nh)
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1 + 3 * nh) { scratch in
                let raw = UnsafeMutableRawBufferPointer(scratch)
                defer { SecureBytes.cleanse(raw) }
                raw[0] = mode.rawValue
                let pskIDHash = UnsafeMutableRawBufferPointer(rebasing: raw[1..<(1 + nh)])
                let infoHash = UnsafeMutableRawBufferPointer(rebasing: raw[(1 + nh)..<(1 + 2 * nh)])
                let secret = UnsafeMutableRawBufferPointer(rebasing: raw[(1 + 2 * nh)...])
                pskID.withUnsafeBytes { kdf.labeledExtract(salt: none, label: "psk_id_hash", ikm: $0, into: pskIDHash) }
                info.withUnsafeBytes { kdf.labeledExtract(salt: none, label: "info_hash", ikm: $0, into: infoHash) }
                sharedSecret.withUnsafeBytes { ss in
                    psk.withUnsafeBytes { p in
                        kdf.labeledExtract(salt: ss, label: "secret", ikm: p, into: secret)
                    }
                }
                let context = UnsafeRawBufferPointer(rebasing: raw[0..<(1 + 2 * nh)])
                let prk = UnsafeRawBufferPointer(secret)
                let o = UnsafeMutableRawBufferPointer(out)
                withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 1) { parts in
                    parts[0] = context
                    let ctx = UnsafeBufferPointer(parts)
                    do {
                        try kdf.labeledExpand(
                            prk: prk, label: "key", info: ctx, into: UnsafeMutableRawBufferPointer(rebasing: o[0..<nk]))
                        try kdf.labeledExpand(
                            prk: prk, label: "base_nonce", info: ctx,
                            into: UnsafeMutableRawBufferPointer(rebasing: o[nk..<(nk + nn)]))
                        try kdf.labeledExpand(
                            prk: prk, label: "exp", info: ctx,
                            into: UnsafeMutableRawBufferPointer(rebasing: o[(nk + nn)...]))
                    } catch {
                        failed = true
                    }
                }
            }
        }
        if failed { throw .invalidLength }
        return KeySchedule(secrets: secrets, keySize: nk, nonceSize: nn)
    }
}

/// The shared part of sender and recipient contexts: keys, sequence number, export.
struct ContextCore: Sendable {
    let suite: HPKE.Ciphersuite
    var schedule: KeySchedule
    var sequence: UInt64 = 0

    /// Decrypts a message at the current sequence number without advancing it: `exportOnly` for an
    /// export-only suite, `openFailed` for any AEAD failure.
    func open(_ ciphertext: [UInt8], aad: [UInt8]) throws(HPKE.Error) -> [UInt8] {
        guard let aead = suite.aead.algorithm else { throw .exportOnly }
        do { return try aead.open(key: schedule.key, nonce: nonce(), ciphertext: ciphertext, aad: aad) } catch {
            throw .openFailed
        }
    }

    /// `ComputeNonce(seq) = base_nonce XOR I2OSP(seq, Nn)`.
    func nonce() -> [UInt8] { withNonce { Array($0) } }

    /// `ComputeNonce(seq)` in a stack buffer, valid inside `body` (no allocation per message).
    func withNonce<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let base = schedule.baseNonce
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: base.count) { n in
            _ = n.initialize(from: base)
            var s = sequence
            var i = n.count - 1
            while s != 0 && i >= 0 {
                n[i] ^= UInt8(truncatingIfNeeded: s)
                s >>= 8
                i -= 1
            }
            return try body(UnsafeRawBufferPointer(n))
        }
    }

    /// `IncrementSeq`: refuses to wrap (a wrapped sequence would reuse a nonce).
    mutating func increment() throws(HPKE.Error) {
        guard sequence < UInt64.max else { throw .messageLimitReached }
        sequence += 1
    }

    func export(context: [UInt8], length: Int) throws(HPKE.Error) -> [UInt8] {
        let kdf = LabeledKDF(digest: suite.kdf.digest, suiteID: suite.suiteID)
        var prk = Array(schedule.exporterSecret)
        defer { SecureBytes.cleanse(&prk) }
        return try kdf.labeledExpand(prk: prk, label: "sec", info: context, length: length)
    }
}
