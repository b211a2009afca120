internal import CryptoCore

extension HPKE {
    /// Key encapsulation mechanisms (RFC 9180 §7.1).
    public enum KEM: UInt16, Sendable, Hashable, CaseIterable {
        /// DHKEM(P-256, HKDF-SHA256).
        case p256HKDFSHA256 = 0x0010
        /// DHKEM(P-384, HKDF-SHA384).
        case p384HKDFSHA384 = 0x0011
        /// DHKEM(P-521, HKDF-SHA512).
        case p521HKDFSHA512 = 0x0012
        /// DHKEM(X25519, HKDF-SHA256).
        case x25519HKDFSHA256 = 0x0020
        /// DHKEM(X448, HKDF-SHA512).
        case x448HKDFSHA512 = 0x0021

        /// Length of the KEM shared secret (Nsecret).
        public var sharedSecretSize: Int { kdf.digest.outputSize }
        /// Length of an encapsulated key (Nenc) and of a serialized public key (Npk).
        public var encapsulatedKeySize: Int {
            switch self {
            case .p256HKDFSHA256: 65
            case .p384HKDFSHA384: 97
            case .p521HKDFSHA512: 133
            case .x25519HKDFSHA256: 32
            case .x448HKDFSHA512: 56
            }
        }
        /// Length of a serialized private key (Nsk).
        public var privateKeySize: Int { keyKind.rawSize }

        /// The KDF the DHKEM uses internally.
        var kdf: KDF {
            switch self {
            case .p256HKDFSHA256, .x25519HKDFSHA256: .hkdfSHA256
            case .p384HKDFSHA384: .hkdfSHA384
            case .p521HKDFSHA512, .x448HKDFSHA512: .hkdfSHA512
            }
        }

        var keyKind: KeyKind {
            switch self {
            case .p256HKDFSHA256: .ec(.p256)
            case .p384HKDFSHA384: .ec(.p384)
            case .p521HKDFSHA512: .ec(.p521)
            case .x25519HKDFSHA256: .x25519
            case .x448HKDFSHA512: .x448
            }
        }

        /// `suite_id = "KEM" ‖ I2OSP(kem_id, 2)`.
        var suiteID: SuiteID { SuiteID(kem: rawValue) }
    }

    /// Key derivation functions (RFC 9180 §7.2).
    public enum KDF: UInt16, Sendable, Hashable, CaseIterable {
        /// HKDF-SHA256.
        case hkdfSHA256 = 0x0001
        /// HKDF-SHA384.
        case hkdfSHA384 = 0x0002
        /// HKDF-SHA512.
        case hkdfSHA512 = 0x0003

        /// Output size of the hash (Nh).
        public var hashSize: Int { digest.outputSize }

        var digest: DigestAlgorithm {
            switch self {
            case .hkdfSHA256: .sha256
            case .hkdfSHA384: .sha384
            case .hkdfSHA512: .sha512
            }
        }
    }

    /// AEADs (RFC 9180 §7.3).
    public enum AEAD: UInt16, Sendable, Hashable, CaseIterable {
        /// AES-128-GCM.
        case aes128GCM = 0x0001
        /// AES-256-GCM.
        case aes256GCM = 0x0002
        /// ChaCha20-Poly1305.
        case chaCha20Poly1305 = 0x0003
        /// Export-only: no seal/open, only secret export.
        case exportOnly = 0xFFFF

        /// Key length (Nk); 0 for export-only.
        public var keySize: Int { algorithm?.keySize ?? 0 }
        /// Nonce length (Nn); 0 for export-only.
        public var nonceSize: Int { algorithm?.nonceSize ?? 0 }
        /// Tag length (Nt); 0 for export-only.
        public var tagSize: Int { algorithm?.tagSize ?? 0 }

        var algorithm: AEADAlgorithm? {
            switch self {
            case .aes128GCM: .aes128gcm
            case .aes256GCM: .aes256gcm
            case .chaCha20Poly1305: .chacha20poly1305
            case .exportOnly: nil
            }
        }
    }

    /// A complete suite: KEM, KDF and AEAD.
    public struct Ciphersuite: Sendable, Hashable {
        /// The KEM.
        public let kem: KEM
        /// The KDF of the key schedule.
        public let kdf: KDF
        /// The AEAD.
        public let aead: AEAD

        /// Creates a suite.
        public init(kem: KEM, kdf: KDF, aead: AEAD) {
            self.kem = kem
            self.kdf = kdf
            self.aead = aead
        }

        /// ISO/IEC 18013-7 Annex C: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM.
        public static let annexC = Ciphersuite(kem: .p256HKDFSHA256, kdf: .hkdfSHA256, aead: .aes128GCM)

        /// `suite_id = "HPKE" ‖ I2OSP(kem_id, 2) ‖ I2OSP(kdf_id, 2) ‖ I2OSP(aead_id, 2)`.
        var suiteID: SuiteID {
            SuiteID(kem: kem.rawValue, kdf: kdf.rawValue, aead: aead.rawValue)
        }
    }
}
