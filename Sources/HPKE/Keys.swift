package import CryptoCore

extension HPKE {
    /// A KEM public key (a recipient's, or a sender's in the auth modes).
    public struct PublicKey: Sendable, Hashable {
        /// The KEM the key belongs to.
        public let kem: KEM
        let key: CryptoCore.PublicKey
        /// `SerializePublicKey`: uncompressed SEC1 point (NIST curves) or the raw key (X25519/X448).
        public let serialized: [UInt8]

        /// `DeserializePublicKey`: validates the length, the uncompressed form and curve membership.
        public init(serialized: [UInt8], kem: KEM) throws(HPKE.Error) {
            guard serialized.count == kem.encapsulatedKeySize else { throw .invalidPublicKey }
            do {
                switch kem.keyKind {
                case .ec(let curve): key = try CryptoCore.PublicKey(curve: curve, uncompressedPoint: serialized)
                default: key = try CryptoCore.PublicKey(kind: kem.keyKind, raw: serialized)
                }
            } catch {
                throw .invalidPublicKey
            }
            self.kem = kem
            self.serialized = serialized
        }

        /// Wraps an already validated key (package-internal: avoids a second import). Pass
        /// `serialized` when the encoding is at hand, to skip converting the point back.
        package init(key: CryptoCore.PublicKey, kem: KEM, serialized: [UInt8]? = nil) {
            self.key = key
            self.kem = kem
            self.serialized = serialized ?? key.rawRepresentation
        }

        /// Keys are equal when their KEM and serialization are.
        public static func == (a: PublicKey, b: PublicKey) -> Bool { a.kem == b.kem && a.serialized == b.serialized }
        /// Hashes the KEM and serialization.
        public func hash(into h: inout Hasher) {
            h.combine(kem)
            h.combine(serialized)
        }
    }

    /// A KEM private key. The secret stays inside OpenSSL, which cleanses it when the key is freed.
    public struct PrivateKey: Sendable {
        /// The KEM the key belongs to.
        public let kem: KEM
        let key: CryptoCore.PrivateKey
        /// The matching public key (derived at construction; serialize it for the sender).
        public let publicKey: PublicKey

        /// Generates a fresh key pair.
        public static func generate(kem: KEM) throws(HPKE.Error) -> PrivateKey {
            do {
                return PrivateKey(key: try CryptoCore.PrivateKey.generateForAgreement(kem.keyKind), kem: kem)
            } catch {
                throw .invalidPrivateKey
            }
        }

        /// `DeserializePrivateKey`: a big-endian scalar of Nsk bytes (NIST curves; 0 and values ≥ the
        /// order are rejected) or the raw X25519/X448 key.
        public init(serialized: [UInt8], kem: KEM) throws(HPKE.Error) {
            guard serialized.count == kem.privateKeySize else { throw .invalidPrivateKey }
            do {
                switch kem.keyKind {
                case .ec(let curve): key = try CryptoCore.PrivateKey(curve: curve, scalar: serialized)
                default: key = try CryptoCore.PrivateKey(kind: kem.keyKind, raw: serialized)
                }
            } catch {
                throw .invalidPrivateKey
            }
            self.kem = kem
            self.publicKey = PublicKey(key: key.publicKey, kem: kem)
        }

        init(key: CryptoCore.PrivateKey, kem: KEM) {
            self.key = key
            self.kem = kem
            self.publicKey = PublicKey(key: key.publicKey, kem: kem)
        }

        /// `SerializePrivateKey`. The caller owns the returned secret.
        public func serialized() throws(HPKE.Error) -> [UInt8] {
            do { return try key.exportSecret() } catch { throw .invalidPrivateKey }
        }

        /// `DeriveKeyPair(ikm)` (RFC 9180 §7.1.3), with the NIST-curve rejection sampling and bitmask.
        /// `ikm` should carry at least Nsk bytes of entropy.
        public static func derive(kem: KEM, ikm: [UInt8]) throws(HPKE.Error) -> PrivateKey {
            let kdf = LabeledKDF(digest: kem.kdf.digest, suiteID: kem.suiteID)
            var dkpPRK = kdf.labeledExtract(salt: [], label: "dkp_prk", ikm: ikm)
            defer { SecureBytes.cleanse(&dkpPRK) }
            let nsk = kem.privateKeySize
            switch kem.keyKind {
            case .ec(let curve):
                let mask: UInt8 = curve == .p521 ? 0x01 : 0xFF
                for counter in 0...255 {
                    var bytes = try kdf.labeledExpand(
                        prk: dkpPRK, label: "candidate", info: [UInt8(counter)], length: nsk)
                    defer { SecureBytes.cleanse(&bytes) }
                    bytes[0] &= mask
                    // Scalars of 0 or ≥ the order are refused by the import; try the next counter.
                    if let key = try? CryptoCore.PrivateKey(curve: curve, scalar: bytes) {
                        return PrivateKey(key: key, kem: kem)
                    }
                }
                throw .deriveKeyPairFailed
            default:
                var sk = try kdf.labeledExpand(prk: dkpPRK, label: "sk", info: [], length: nsk)
                defer { SecureBytes.cleanse(&sk) }
                return try PrivateKey(serialized: sk, kem: kem)
            }
        }
    }
}
