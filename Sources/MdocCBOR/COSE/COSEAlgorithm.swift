internal import CryptoCore

/// COSE algorithm identifiers (IANA "COSE Algorithms"), the subset mdoc and its peers use.
public enum COSEAlgorithm: Int64, Sendable, Hashable, CaseIterable {
    /// ECDSA w/ SHA-256 (RFC 9053). Not fully specified: any curve, but we pair it with P-256.
    case es256 = -7
    /// ECDSA w/ SHA-384.
    case es384 = -35
    /// ECDSA w/ SHA-512.
    case es512 = -36
    /// ECDSA using P-256 and SHA-256, fully specified (RFC 9864).
    case esp256 = -9
    /// ECDSA using P-384 and SHA-384, fully specified.
    case esp384 = -51
    /// ECDSA using P-521 and SHA-512, fully specified.
    case esp512 = -52
    /// EdDSA (verification with Ed25519 keys).
    case edDSA = -8
    /// HMAC w/ SHA-256 truncated to 64 bits.
    case hmac256_64 = 4
    /// HMAC w/ SHA-256 (the ISO 18013-5 deviceMac algorithm).
    case hmac256 = 5
    /// HMAC w/ SHA-384.
    case hmac384 = 6
    /// HMAC w/ SHA-512.
    case hmac512 = 7

    /// The algorithm's name in the IANA COSE Algorithms registry (`ES256`, `ESP256`, `HMAC 256/64`).
    public var name: String {
        switch self {
        case .es256: "ES256"
        case .es384: "ES384"
        case .es512: "ES512"
        case .esp256: "ESP256"
        case .esp384: "ESP384"
        case .esp512: "ESP512"
        case .edDSA: "EdDSA"
        case .hmac256_64: "HMAC 256/64"
        case .hmac256: "HMAC 256/256"
        case .hmac384: "HMAC 384/384"
        case .hmac512: "HMAC 512/512"
        }
    }

    /// True for the ECDSA algorithms.
    public var isECDSA: Bool {
        switch self {
        case .es256, .es384, .es512, .esp256, .esp384, .esp512: true
        default: false
        }
    }

    /// True for the HMAC algorithms.
    public var isMAC: Bool { rawValue >= 4 && rawValue <= 7 }

    /// The COSE curve an ECDSA algorithm signs with (ES* paired with their customary curve).
    public var curve: COSEKey.Curve? {
        switch self {
        case .es256, .esp256: .p256
        case .es384, .esp384: .p384
        case .es512, .esp512: .p521
        case .edDSA: .ed25519
        default: nil
        }
    }

    var digest: DigestAlgorithm? {
        switch self {
        case .es256, .esp256, .hmac256, .hmac256_64: .sha256
        case .es384, .esp384, .hmac384: .sha384
        case .es512, .esp512, .hmac512: .sha512
        default: nil
        }
    }

    /// Tag length for the MAC algorithms.
    var macLength: Int? {
        switch self {
        case .hmac256_64: 8
        case .hmac256: 32
        case .hmac384: 48
        case .hmac512: 64
        default: nil
        }
    }
}
