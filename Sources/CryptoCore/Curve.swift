internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// NIST prime curves used by COSE, mdoc and HPKE.
package enum Curve: Sendable, Hashable, CaseIterable {
    case p256, p384, p521

    /// Size of one coordinate or of the private scalar, in bytes (Nsk / Ndh in RFC 9180 terms).
    package var coordinateSize: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        }
    }

    /// Length of the uncompressed SEC1 point `04 ‖ x ‖ y`.
    package var uncompressedPointSize: Int { 1 + 2 * coordinateSize }

    /// The hash that pairs with the curve for ECDSA (ES256/ES384/ES512).
    package var digest: DigestAlgorithm {
        switch self {
        case .p256: .sha256
        case .p384: .sha384
        case .p521: .sha512
        }
    }

    var groupNamePointer: UnsafePointer<CChar> {
        switch self {
        case .p256: mdoc_GROUP_P256
        case .p384: mdoc_GROUP_P384
        case .p521: mdoc_GROUP_P521
        }
    }

    var group: OpaquePointer {
        switch self {
        case .p256: Groups.p256.pointer
        case .p384: Groups.p384.pointer
        case .p521: Groups.p521.pointer
        }
    }

    init?(bits: Int32) {
        switch bits {
        case 256: self = .p256
        case 384: self = .p384
        case 521: self = .p521
        default: return nil
        }
    }
}

/// One public key per curve (the generator), used as a template for fast imports.
enum Templates {
    static let p256 = try! PublicKey(curve: .p256, uncompressedPointFromData: generator(.p256))
    static let p384 = try! PublicKey(curve: .p384, uncompressedPointFromData: generator(.p384))
    static let p521 = try! PublicKey(curve: .p521, uncompressedPointFromData: generator(.p521))
    static func key(_ c: Curve) -> PKeyBox {
        switch c {
        case .p256: p256.evpIfBuilt!
        case .p384: p384.evpIfBuilt!
        case .p521: p521.evpIfBuilt!
        }
    }
    static func generator(_ c: Curve) -> [UInt8] {
        let g = EC_GROUP_get0_generator(c.group)
        var out = ByteArrays.zeros(count: c.uncompressedPointSize)
        _ = out.withUnsafeMutableBufferPointer {
            EC_POINT_point2oct(c.group, g, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, $0.count, nil)
        }
        return out
    }
}

enum Groups {
    static let p256 = Fetched(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
    static let p384 = Fetched(EC_GROUP_new_by_curve_name(NID_secp384r1))
    static let p521 = Fetched(EC_GROUP_new_by_curve_name(NID_secp521r1))
}

/// What kind of key an OpenSSL key object holds.
package enum KeyKind: Sendable, Hashable {
    /// ECDSA / ECDH on a NIST curve.
    case ec(Curve)
    /// EdDSA over edwards25519.
    case ed25519
    /// X25519 key agreement.
    case x25519
    /// X448 key agreement.
    case x448

    /// Raw key length for the Montgomery/Edwards kinds; coordinate size for EC.
    package var rawSize: Int {
        switch self {
        case .ec(let c): c.coordinateSize
        case .ed25519, .x25519: 32
        case .x448: 56
        }
    }

    var evpType: Int32 {
        switch self {
        case .ec: EVP_PKEY_EC
        case .ed25519: EVP_PKEY_ED25519
        case .x25519: EVP_PKEY_X25519
        case .x448: EVP_PKEY_X448
        }
    }
}
