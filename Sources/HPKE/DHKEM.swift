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

    private func extractAndExpand(dh: [UInt8], kemContext: [UInt8]) throws(HPKE.Error) -> [UInt8] {
        var eaePRK = kdf.labeledExtract(salt: [], label: "eae_prk", ikm: dh)
        defer { SecureBytes.cleanse(&eaePRK) }
        return try kdf.labeledExpand(prk: eaePRK, label: "shared_secret", info: kemContext, length: kem.sharedSecretSize)
    }

    /// `Encap(pkR)` / `AuthEncap(pkR, skS)` with the given ephemeral key (fresh in normal use; fixed
    /// only for known-answer tests).
    func encap(recipient pkR: HPKE.PublicKey, sender skS: HPKE.PrivateKey?, ephemeral skE: HPKE.PrivateKey) throws(HPKE.Error) -> (sharedSecret: [UInt8], enc: [UInt8]) {
        guard pkR.kem == kem, skE.kem == kem, skS.map({ $0.kem == kem }) ?? true else { throw .kemMismatch }
        var dhValue = try dh(skE, pkR)
        defer { SecureBytes.cleanse(&dhValue) }
        let enc = skE.publicKey.serialized
        var kemContext = enc + pkR.serialized
        if let skS {
            var dh2 = try dh(skS, pkR)
            dhValue += dh2
            SecureBytes.cleanse(&dh2)
            kemContext += skS.publicKey.serialized
        }
        return (try extractAndExpand(dh: dhValue, kemContext: kemContext), enc)
    }

    /// `Decap(enc, skR)` / `AuthDecap(enc, skR, pkS)`.
    func decap(enc: [UInt8], recipient skR: HPKE.PrivateKey, sender pkS: HPKE.PublicKey?) throws(HPKE.Error) -> [UInt8] {
        guard skR.kem == kem, pkS.map({ $0.kem == kem }) ?? true else { throw .kemMismatch }
        let pkE: HPKE.PublicKey
        do { pkE = try HPKE.PublicKey(serialized: enc, kem: kem) } catch { throw .invalidEncapsulatedKey }
        var dhValue: [UInt8]
        do { dhValue = try dh(skR, pkE) } catch { throw .invalidEncapsulatedKey }
        defer { SecureBytes.cleanse(&dhValue) }
        var kemContext = enc + skR.publicKey.serialized
        if let pkS {
            var dh2 = try dh(skR, pkS)
            dhValue += dh2
            SecureBytes.cleanse(&dh2)
            kemContext += pkS.serialized
        }
        return try extractAndExpand(dh: dhValue, kemContext: kemContext)
    }
}
