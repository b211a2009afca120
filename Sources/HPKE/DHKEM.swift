internal import CryptoCore

/// DHKEM (RFC 9180 §4.1): Encap/Decap and AuthEncap/AuthDecap over one DH group.
struct DHKEM {
    let kem: HPKE.KEM
    let kdf: LabeledKDF

    init(_ kem: HPKE.KEM) {
        self.kem = kem
        self.kdf = LabeledKDF(digest: kem.kdf.digest, suiteID: kem.suiteID)
    }

    private func dh(_ sk: HPKE.PrivateKey, _ pk: HPKE.PublicKey) throws(HPKE.Error) -> [UInt8] {
        do { return try sk.key.sharedSecret(with: pk.key) } catch { throw .invalidPublicKey }
    }

    /// `ExtractAndExpand(dh, kem_context)` with `kem_context` given as parts (enc ‖ pkRm [‖ pkSm]):
    /// eae_prk stays on the stack and is cleansed; only the shared secret is allocated.
    private func extractAndExpand(dh: [UInt8], kemContext: [[UInt8]]) throws(HPKE.Error) -> [UInt8] {
        let nh = kem.kdf.digest.outputSize
        let ns = kem.sharedSecretSize
        var failed = false
        let shared = ByteArrays.make(count: ns) { out in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: nh) { prkBuf in
                let prk = UnsafeMutableRawBufferPointer(prkBuf)
                defer { SecureBytes.cleanse(prk) }
                dh.withUnsafeBytes { d in
                    kdf.labeledExtract(
                        salt: UnsafeRawBufferPointer(start: nil, count: 0), label: "eae_prk", ikm: d, into: prk)
                }
                Self.withParts(kemContext) { parts in
                    do {
                        try kdf.labeledExpand(
                            prk: UnsafeRawBufferPointer(prk), label: "shared_secret", info: parts,
                            into: UnsafeMutableRawBufferPointer(out))
                    } catch { failed = true }
                }
            }
        }
        if failed { throw .invalidLength }
        return shared
    }

    /// The arrays' bytes as a stack-held parts list (at most three here).
    private static func withParts<R>(_ arrays: [[UInt8]], _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>) -> R)
        -> R
    {
        withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: arrays.count) { parts in
            func step(_ k: Int) -> R {
                if k == arrays.count { return body(UnsafeBufferPointer(parts)) }
                return arrays[k].withUnsafeBytes { b in
                    parts[k] = b
                    return step(k + 1)
                }
            }
            return step(0)
        }
    }

    /// `Encap(pkR)` / `AuthEncap(pkR, skS)` with the given ephemeral key (fresh in normal use; fixed
    /// only for known-answer tests).
    func encap(recipient pkR: HPKE.PublicKey, sender skS: HPKE.PrivateKey?, ephemeral skE: HPKE.PrivateKey) throws(HPKE
        .Error) -> (sharedSecret: [UInt8], enc: [UInt8])
    {
        guard pkR.kem == kem, skE.kem == kem, skS.map({ $0.kem == kem }) ?? true else { throw .kemMismatch }
        var dhValue = try dh(skE, pkR)
        defer { SecureBytes.cleanse(&dhValue) }
        let enc = skE.publicKey.serialized
        if let skS {
            var dh2 = try dh(skS, pkR)
            dhValue += dh2
            SecureBytes.cleanse(&dh2)
            return (
                try extractAndExpand(dh: dhValue, kemContext: [enc, pkR.serialized, skS.publicKey.serialized]), enc
            )
        }
        return (try extractAndExpand(dh: dhValue, kemContext: [enc, pkR.serialized]), enc)
    }

    /// `Decap(enc, skR)` / `AuthDecap(enc, skR, pkS)`.
    func decap(enc: [UInt8], recipient skR: HPKE.PrivateKey, sender pkS: HPKE.PublicKey?) throws(HPKE.Error) -> [UInt8]
    {
        guard skR.kem == kem, pkS.map({ $0.kem == kem }) ?? true else { throw .kemMismatch }
        let pkE: HPKE.PublicKey
        do { pkE = try HPKE.PublicKey(serialized: enc, kem: kem) } catch { throw .invalidEncapsulatedKey }
        var dhValue: [UInt8]
        do { dhValue = try dh(skR, pkE) } catch { throw .invalidEncapsulatedKey }
        defer { SecureBytes.cleanse(&dhValue) }
        if let pkS {
            var dh2 = try dh(skR, pkS)
            dhValue += dh2
            SecureBytes.cleanse(&dh2)
            return try extractAndExpand(dh: dhValue, kemContext: [enc, skR.publicKey.serialized, pkS.serialized])
        }
        return try extractAndExpand(dh: dhValue, kemContext: [enc, skR.publicKey.serialized])
    }
}
