internal import CryptoCore

/// The key schedule (RFC 9180 §5.1) and the secrets it produces. A class so that exactly one
/// owner holds the buffers and cleanses them on release; the contents never change after init.
final class KeySchedule: @unchecked Sendable {
    private(set) var key: [UInt8]
    private(set) var baseNonce: [UInt8]
    private(set) var exporterSecret: [UInt8]

    init(key: [UInt8], baseNonce: [UInt8], exporterSecret: [UInt8]) {
        self.key = key
        self.baseNonce = baseNonce
        self.exporterSecret = exporterSecret
    }

    deinit {
        SecureBytes.cleanse(&key)
        SecureBytes.cleanse(&baseNonce)
        SecureBytes.cleanse(&exporterSecret)
    }

    /// `VerifyPSKInputs` then `KeySchedule<ROLE>(mode, shared_secret, info, psk, psk_id)`.
    static func derive(suite: HPKE.Ciphersuite, mode: HPKE.Mode, sharedSecret: [UInt8], info: [UInt8],
                       psk: [UInt8], pskID: [UInt8]) throws(HPKE.Error) -> KeySchedule {
        let gotPSK = !psk.isEmpty, gotPSKID = !pskID.isEmpty
        guard gotPSK == gotPSKID else { throw .invalidPSKInputs }
        let pskMode = mode == .psk || mode == .authPSK
        guard gotPSK == pskMode else { throw .invalidPSKInputs }

        let kdf = LabeledKDF(digest: suite.kdf.digest, suiteID: suite.suiteID)
        let pskIDHash = kdf.labeledExtract(salt: [], label: "psk_id_hash", ikm: pskID)
        let infoHash = kdf.labeledExtract(salt: [], label: "info_hash", ikm: info)
        let context = [mode.rawValue] + pskIDHash + infoHash
        var secret = kdf.labeledExtract(salt: sharedSecret, label: "secret", ikm: psk)
        defer { SecureBytes.cleanse(&secret) }
        let key = try kdf.labeledExpand(prk: secret, label: "key", info: context, length: suite.aead.keySize)
        let nonce = try kdf.labeledExpand(prk: secret, label: "base_nonce", info: context, length: suite.aead.nonceSize)
        let exporter = try kdf.labeledExpand(prk: secret, label: "exp", info: context, length: suite.kdf.hashSize)
        return KeySchedule(key: key, baseNonce: nonce, exporterSecret: exporter)
    }
}

/// The shared part of sender and recipient contexts: keys, sequence number, export.
struct ContextCore: Sendable {
    let suite: HPKE.Ciphersuite
    var schedule: KeySchedule
    var sequence: UInt64 = 0

    /// `ComputeNonce(seq) = base_nonce XOR I2OSP(seq, Nn)`.
    func nonce() -> [UInt8] {
        var n = schedule.baseNonce
        var s = sequence
        var i = n.count - 1
        while s != 0 && i >= 0 {
            n[i] ^= UInt8(truncatingIfNeeded: s)
            s >>= 8
            i -= 1
        }
        return n
    }

    /// `IncrementSeq`: refuses to wrap (a wrapped sequence would reuse a nonce).
    mutating func increment() throws(HPKE.Error) {
        guard sequence < UInt64.max else { throw .messageLimitReached }
        sequence += 1
    }

    func export(context: [UInt8], length: Int) throws(HPKE.Error) -> [UInt8] {
        let kdf = LabeledKDF(digest: suite.kdf.digest, suiteID: suite.suiteID)
        return try kdf.labeledExpand(prk: schedule.exporterSecret, label: "sec", info: context, length: length)
    }
}
