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
        _ = out.withUnsafeMutableBufferPointer { EC_POINT_point2oct(c.group, g, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, $0.count, nil) }
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

/// Owner of one `EVP_PKEY`. The key is immutable after creation, so it may be shared between threads;
/// the contexts that sign or verify with it are kept in a small locked pool and lent to one caller at a
/// time, so a key that signs request after request (a device key, a cached reader certificate's key)
/// does not build and initialise a context per signature.
final class PKeyBox: @unchecked Sendable {
    let pkey: OpaquePointer
    /// Idle `EVP_PKEY_CTX`s initialised for signing and for verifying with `pkey`.
    private let idle = LockedValue<(sign: [OpaquePointer], verify: [OpaquePointer])>(([], []))
    /// Idle contexts kept per operation (more concurrent callers make and free their own).
    private static let poolLimit = 4

    init(_ pkey: OpaquePointer) { self.pkey = pkey }

    deinit {
        idle.withLock { pool in for c in pool.sign + pool.verify { EVP_PKEY_CTX_free(c) } }
        EVP_PKEY_free(pkey)
    }

    /// Lends `body` a context initialised for signing (`verify` false) or verifying with the key; nil
    /// when OpenSSL cannot make one. `body` returns whether the context is still fit for reuse.
    func withContext<R>(verify: Bool, _ body: (OpaquePointer) -> (result: R, reusable: Bool)) -> R? {
        var ctx = idle.withLock { pool in verify ? pool.verify.popLast() : pool.sign.popLast() }
        if ctx == nil {
            guard let c = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { ERR_clear_error(); return nil }
            guard (verify ? EVP_PKEY_verify_init(c) : EVP_PKEY_sign_init(c)) == 1 else { EVP_PKEY_CTX_free(c); ERR_clear_error(); return nil }
            ctx = c
        }
        let c = ctx!
        let (result, reusable) = body(c)
        let kept = reusable && idle.withLock { pool in
            if verify {
                guard pool.verify.count < Self.poolLimit else { return false }
                pool.verify.append(c)
            } else {
                guard pool.sign.count < Self.poolLimit else { return false }
                pool.sign.append(c)
            }
            return true
        }
        if !kept { EVP_PKEY_CTX_free(c) }
        return result
    }
}

/// A validated point on a NIST curve (never the point at infinity) as an OpenSSL `EC_POINT`, with its
/// uncompressed encoding. The form ECDH needs: importing one costs an on-curve check and a few
/// allocations, where an `EVP_PKEY` costs its key-management objects (about 65 allocations).
/// Immutable after creation, so it may be shared between threads.
final class ECPointBox: @unchecked Sendable {
    let curve: Curve
    let point: OpaquePointer
    /// `04 ‖ x ‖ y`.
    let encoded: [UInt8]

    /// Decodes and validates `04 ‖ x ‖ y`: exact length, uncompressed form, coordinates below the
    /// field prime and on the curve (checked by EC_POINT_oct2point, and again explicitly).
    init?(curve: Curve, uncompressed buf: UnsafeRawBufferPointer) {
        guard buf.count == curve.uncompressedPointSize, buf[0] == 4, let p = EC_POINT_new(curve.group) else { return nil }
        let group = curve.group
        // One BN_CTX for both steps (each would otherwise make its own).
        let bn = BN_CTX_new()
        defer { BN_CTX_free(bn) }
        guard EC_POINT_oct2point(group, p, buf.baseAddress!.assumingMemoryBound(to: UInt8.self), buf.count, bn) == 1,
              EC_POINT_is_at_infinity(group, p) == 0, EC_POINT_is_on_curve(group, p, bn) == 1 else {
            EC_POINT_free(p)
            ERR_clear_error()
            return nil
        }
        self.curve = curve
        self.point = p
        self.encoded = [UInt8](buf)
    }

    /// Adopts a point OpenSSL computed (d·G), encoding it.
    init?(curve: Curve, adopting p: OpaquePointer, context bn: OpaquePointer? = nil) {
        var out = ByteArrays.zeros(count: curve.uncompressedPointSize)
        let n = out.withUnsafeMutableBufferPointer { EC_POINT_point2oct(curve.group, p, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, $0.count, bn) }
        guard n == out.count else { EC_POINT_free(p); return nil }
        self.curve = curve
        self.point = p
        self.encoded = out
    }

    deinit { EC_POINT_free(point) }
}

/// An EC private scalar d (1 ≤ d < n) as a constant-time `BIGNUM`, cleansed when freed. Immutable
/// after creation, so it may be shared between threads.
final class ECScalarBox: @unchecked Sendable {
    let curve: Curve
    let d: OpaquePointer
    init(curve: Curve, adopting d: OpaquePointer) {
        BN_set_flags(d, BN_FLG_CONSTTIME)
        self.curve = curve
        self.d = d
    }
    deinit { BN_clear_free(d) }
}

/// A key held either as an `EVP_PKEY` or in a bare form of its own (an EC point, an EC scalar):
/// exactly one of the two is set. Two optionals rather than an enum: an enum with two class payloads
/// keeps its case in the reference's spare bits, and LeakSanitizer then cannot see the reference (a
/// long-lived key held that way is reported as leaked).
struct KeyStorage<Bare: AnyObject & Sendable>: Sendable {
    let evpBox: PKeyBox?
    let bareBox: Bare?
    static func evp(_ b: PKeyBox) -> Self { Self(evpBox: b, bareBox: nil) }
    static func bare(_ b: Bare) -> Self { Self(evpBox: nil, bareBox: b) }
}

/// A validated public key.
package struct PublicKey: Sendable {
    /// An `EVP_PKEY` (certificates, generated and imported key pairs, OKP keys), or a bare EC point
    /// (EC keys imported from their coordinates: the ECDH path never builds key-management objects).
    let storage: KeyStorage<ECPointBox>
    /// The key's kind (curve or OKP type).
    package let kind: KeyKind

    /// The `EVP_PKEY` when the key is held as one (no conversion).
    var evpIfBuilt: PKeyBox? { storage.evpBox }

    /// The key as an `EVP_PKEY`, for signature verification and certificate issuance. A key held as a
    /// point is converted for the call (not cached: the hot paths never verify with such a key).
    func evp() throws(CryptoError) -> PKeyBox {
        if let b = storage.evpBox { return b }
        let p = storage.bareBox!
        guard let k = p.encoded.withUnsafeBytes({ Self.templateImport(curve: p.curve, $0) }) else { throw .invalidPublicKey }
        return PKeyBox(k)
    }

    /// The key as a validated EC point, for ECDH.
    func ecPoint() throws(CryptoError) -> ECPointBox {
        if let p = storage.bareBox { return p }
        guard case .ec(let curve) = kind else { throw .unsupportedAlgorithm }
        guard let p = rawRepresentation.withUnsafeBytes({ ECPointBox(curve: curve, uncompressed: $0) }) else { throw .invalidPublicKey }
        return p
    }

    /// Imports an EC public key from affine coordinates; rejects wrong lengths and points that are
    /// not on the curve.
    package init<X: ContiguousBytes, Y: ContiguousBytes>(curve: Curve, x: X, y: Y) throws(CryptoError) {
        let n = curve.coordinateSize
        // 04 ‖ x ‖ y assembled on the stack (no heap buffer), then imported.
        let key: Result<PublicKey, CryptoError> = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1 + 2 * n) { point in
            point[0] = 4
            let okX: Bool = x.withUnsafeBytes { b in
                guard b.count == n else { return false }
                UnsafeMutableRawPointer(point.baseAddress! + 1).copyMemory(from: b.baseAddress!, byteCount: n)
                return true
            }
            let okY: Bool = y.withUnsafeBytes { b in
                guard b.count == n else { return false }
                UnsafeMutableRawPointer(point.baseAddress! + 1 + n).copyMemory(from: b.baseAddress!, byteCount: n)
                return true
            }
            guard okX, okY else { return .failure(.invalidPublicKey) }
            return Result { () throws(CryptoError) in try PublicKey(curve: curve, uncompressedPoint: UnsafeRawBufferPointer(point)) }
        }
        self = try key.get()
    }

    /// Imports an EC public key from its uncompressed SEC1 encoding `04 ‖ x ‖ y`. Compressed points,
    /// the point at infinity, wrong lengths, coordinates not below the field prime and off-curve
    /// points are rejected. The key is held as an `EC_POINT` (see `ECPointBox`); an `EVP_PKEY` is
    /// built only if the key is used to verify a signature.
    package init<P: ContiguousBytes>(curve: Curve, uncompressedPoint: P) throws(CryptoError) {
        guard let p = uncompressedPoint.withUnsafeBytes({ ECPointBox(curve: curve, uncompressed: $0) }) else { throw .invalidPublicKey }
        self.storage = .bare(p)
        self.kind = .ec(curve)
    }

    /// The EVP_PKEY_fromdata import, used to build the templates.
    init<P: ContiguousBytes>(curve: Curve, uncompressedPointFromData uncompressedPoint: P) throws(CryptoError) {
        let pkey: OpaquePointer? = uncompressedPoint.withUnsafeBytes { buf -> OpaquePointer? in
            guard buf.count == curve.uncompressedPointSize, buf[0] == 4 else { return nil }
            guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
            defer { EVP_PKEY_CTX_free(ctx) }
            guard EVP_PKEY_fromdata_init(ctx) == 1 else { return nil }
            var params: [OSSL_PARAM] = [
                OSSL_PARAM_construct_utf8_string(mdoc_PARAM_GROUP_NAME, UnsafeMutablePointer(mutating: curve.groupNamePointer), 0),
                OSSL_PARAM_construct_octet_string(mdoc_PARAM_PUB_KEY, UnsafeMutableRawPointer(mutating: buf.baseAddress!), buf.count),
                OSSL_PARAM_construct_end(),
            ]
            var out: OpaquePointer? = nil
            let rc = params.withUnsafeMutableBufferPointer { EVP_PKEY_fromdata(ctx, &out, mdoc_EVP_PKEY_PUBLIC_KEY, $0.baseAddress) }
            guard rc == 1, let out else { return nil }
            return out
        }
        ERR_clear_error()
        guard let pkey else { throw .invalidPublicKey }
        self.storage = .evp(PKeyBox(pkey))
        self.kind = .ec(curve)
    }

    /// An `EVP_PKEY` for `04 ‖ x ‖ y`: duplicates the per-curve template key and sets the point
    /// (EC_POINT_oct2point checks curve membership), which avoids building a new EC_GROUP per import
    /// (about 3× faster than EVP_PKEY_fromdata).
    static func templateImport(curve: Curve, _ buf: UnsafeRawBufferPointer) -> OpaquePointer? {
        defer { ERR_clear_error() }
        guard buf.count == curve.uncompressedPointSize, buf[0] == 4 else { return nil }
        guard let k = EVP_PKEY_dup(Templates.key(curve).pkey) else { return nil }
        guard EVP_PKEY_set1_encoded_public_key(k, buf.baseAddress!.assumingMemoryBound(to: UInt8.self), buf.count) == 1 else { EVP_PKEY_free(k); return nil }
        return k
    }

    /// Imports a raw Ed25519, X25519 or X448 public key.
    package init<R: ContiguousBytes>(kind: KeyKind, raw: R) throws(CryptoError) {
        if case .ec = kind { throw .unsupportedAlgorithm }
        let pkey: OpaquePointer? = raw.withUnsafeBytes { buf in
            guard buf.count == kind.rawSize else { return nil }
            return EVP_PKEY_new_raw_public_key(kind.evpType, nil, buf.baseAddress!.assumingMemoryBound(to: UInt8.self), buf.count)
        }
        ERR_clear_error()
        guard let pkey else { throw .invalidPublicKey }
        self.storage = .evp(PKeyBox(pkey))
        self.kind = kind
    }

    init(box: PKeyBox, kind: KeyKind) {
        self.storage = .evp(box)
        self.kind = kind
    }

    init(point: ECPointBox) {
        self.storage = .bare(point)
        self.kind = .ec(point.curve)
    }

    /// The uncompressed SEC1 point `04 ‖ x ‖ y` (EC keys), or the raw key (OKP keys).
    package var rawRepresentation: [UInt8] {
        if let p = storage.bareBox { return p.encoded }
        let box = storage.evpBox!
        switch kind {
        case .ec(let curve):
            var out = ByteArrays.zeros(count: curve.uncompressedPointSize)
            var len = 0
            let rc = out.withUnsafeMutableBufferPointer {
                EVP_PKEY_get_octet_string_param(box.pkey, mdoc_PARAM_ENCODED_PUBLIC_KEY, $0.baseAddress, $0.count, &len)
            }
            precondition(rc == 1 && len == out.count, "public key export failed")
            return out
        default:
            var out = ByteArrays.zeros(count: kind.rawSize)
            var len = out.count
            let rc = out.withUnsafeMutableBufferPointer { EVP_PKEY_get_raw_public_key(box.pkey, $0.baseAddress, &len) }
            precondition(rc == 1 && len == out.count, "public key export failed")
            return out
        }
    }

    /// The affine x and y coordinates (EC keys only).
    package var coordinates: (x: [UInt8], y: [UInt8])? {
        guard case .ec(let curve) = kind else { return nil }
        let raw = rawRepresentation
        let n = curve.coordinateSize
        return (Array(raw[1..<(1 + n)]), Array(raw[(1 + n)...]))
    }

    /// Verifies a raw `r ‖ s` ECDSA signature (RFC 9053 §2.1) over `message` hashed with `digest`.
    /// Returns false for a well-formed but wrong signature; throws when the signature has the wrong
    /// length or the key is not an EC key.
    package func verifyECDSA<S: ContiguousBytes, M: ContiguousBytes>(signature: S, message: M, digest: DigestAlgorithm) throws(CryptoError) -> Bool {
        guard case .ec(let curve) = kind else { throw .unsupportedAlgorithm }
        let der: [UInt8]? = signature.withUnsafeBytes { sig in
            guard sig.count == 2 * curve.coordinateSize else { return nil }
            return ECDSASignatureDER.encode(raw: sig, coordinateSize: curve.coordinateSize)
        }
        guard let der else { throw .invalidSignatureEncoding }
        let box: PKeyBox
        do { box = try evp() } catch { return false }
        // Hash here, then verify the digest with a pooled context (EVP_PKEY_verify).
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: digest.outputSize) { dgst in
            digest.hash(message, into: UnsafeMutableRawBufferPointer(dgst))
            return box.withContext(verify: true) { ctx in
                let rc = der.withUnsafeBufferPointer { EVP_PKEY_verify(ctx, $0.baseAddress, $0.count, dgst.baseAddress, dgst.count) }
                ERR_clear_error()
                // 0 is a wrong signature (the context stays usable); below 0 an error.
                return (rc == 1, rc >= 0)
            } ?? false
        }
    }

    /// Verifies an Ed25519 signature (RFC 8032).
    package func verifyEd25519<S: ContiguousBytes, M: ContiguousBytes>(signature: S, message: M) throws(CryptoError) -> Bool {
        guard kind == .ed25519 else { throw .unsupportedAlgorithm }
        let sig = signature.withUnsafeBytes { [UInt8]($0) }
        guard sig.count == 64 else { throw .invalidSignatureEncoding }
        // EdDSA hashes inside the one-shot EVP_DigestVerify (no digest is named).
        guard let box = try? evp(), let mdctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(mdctx); ERR_clear_error() }
        guard EVP_DigestVerifyInit(mdctx, nil, nil, nil, box.pkey) == 1 else { return false }
        let rc = withNonNullBytes(message) { mp, mn in
            sig.withUnsafeBufferPointer { EVP_DigestVerify(mdctx, $0.baseAddress, $0.count, mp.assumingMemoryBound(to: UInt8.self), mn) }
        }
        return rc == 1
    }
}

/// A private key held by OpenSSL. Freed (and its scalar cleansed) when the last copy goes.
package struct PrivateKey: Sendable {
    /// An `EVP_PKEY` (signing keys, imported keys, OKP keys) or, for key-agreement keys made by
    /// `generateForAgreement`, the bare scalar.
    let storage: KeyStorage<ECScalarBox>
    /// The key's kind.
    package let kind: KeyKind
    /// The matching public key.
    package let publicKey: PublicKey

    /// The key as an `EVP_PKEY`. A bare scalar is converted for the call (signing with an ephemeral
    /// key-agreement key is not a hot path).
    func evp() throws(CryptoError) -> PKeyBox {
        if let b = storage.evpBox { return b }
        let s = storage.bareBox!
        guard let k = Self.keyPair(curve: s.curve, d: s.d, publicPoint: publicKey.rawRepresentation) else { throw .invalidPrivateKey }
        return PKeyBox(k)
    }

    /// Generates a key pair for ECDH only: on NIST curves a scalar drawn uniformly from [1, n) by
    /// OpenSSL's private DRBG and its public point d·G, with no `EVP_PKEY` (whose key-management
    /// objects cost about 80 allocations per key); other kinds as `generate`.
    package static func generateForAgreement(_ kind: KeyKind) throws(CryptoError) -> PrivateKey {
        guard case .ec(let curve) = kind else { return try generate(kind) }
        let group = curve.group
        guard let d = BN_secure_new() else { throw .operationFailed(operation: "keygen") }
        let scalar = ECScalarBox(curve: curve, adopting: d)
        let bn = BN_CTX_secure_new()   // one context for the three steps; its scratch values are cleared on free
        defer { BN_CTX_free(bn) }
        repeat {
            guard BN_priv_rand_range_ex(d, EC_GROUP_get0_order(group), 0, bn) == 1 else { ERR_clear_error(); throw .operationFailed(operation: "keygen") }
        } while BN_is_zero(d) != 0
        guard let q = EC_POINT_new(group) else { throw .operationFailed(operation: "keygen") }
        guard EC_POINT_mul(group, q, d, nil, nil, bn) == 1 else { EC_POINT_free(q); ERR_clear_error(); throw .operationFailed(operation: "keygen") }
        guard let point = ECPointBox(curve: curve, adopting: q, context: bn) else { ERR_clear_error(); throw .operationFailed(operation: "keygen") }
        return PrivateKey(storage: .bare(scalar), kind: kind, publicKey: PublicKey(point: point))
    }

    private init(storage: KeyStorage<ECScalarBox>, kind: KeyKind, publicKey: PublicKey) {
        self.storage = storage
        self.kind = kind
        self.publicKey = publicKey
    }

    /// Generates a fresh key pair.
    package static func generate(_ kind: KeyKind) throws(CryptoError) -> PrivateKey {
        let name: String
        switch kind {
        case .ec: name = "EC"
        case .ed25519: name = "ED25519"
        case .x25519: name = "X25519"
        case .x448: name = "X448"
        }
        // EC keys are generated from a per-curve template key, so the group and key management are
        // not looked up again for every key.
        let made: OpaquePointer?
        if case .ec(let curve) = kind { made = EVP_PKEY_CTX_new_from_pkey(nil, Templates.key(curve).pkey, nil) } else { made = EVP_PKEY_CTX_new_from_name(nil, name, nil) }
        guard let ctx = made else { throw .operationFailed(operation: "keygen") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1 else { throw .operationFailed(operation: "keygen") }
        var pkey: OpaquePointer? = nil
        guard EVP_PKEY_generate(ctx, &pkey) == 1, let pkey else { throw .operationFailed(operation: "keygen") }
        return try PrivateKey(adopting: pkey, kind: kind)
    }

    /// Imports an EC private scalar (big-endian, exactly the curve's size). The public key is computed
    /// as d·G, since OpenSSL 3.0 does not derive it on import. Rejects 0 and values ≥ the order.
    package init<D: ContiguousBytes>(curve: Curve, scalar: D) throws(CryptoError) {
        let pkey: OpaquePointer? = scalar.withUnsafeBytes { buf -> OpaquePointer? in
            guard buf.count == curve.coordinateSize else { return nil }
            guard let d = BN_secure_new() else { return nil }
            defer { BN_clear_free(d) }
            guard BN_bin2bn(buf.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(buf.count), d) != nil else { return nil }
            let group = curve.group
            guard BN_is_zero(d) == 0, BN_cmp(d, EC_GROUP_get0_order(group)) < 0 else { return nil }
            guard let point = EC_POINT_new(group) else { return nil }
            defer { EC_POINT_free(point) }
            guard EC_POINT_mul(group, point, d, nil, nil, nil) == 1 else { return nil }
            var pub = ByteArrays.zeros(count: curve.uncompressedPointSize)
            let plen = pub.withUnsafeMutableBufferPointer {
                EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, $0.count, nil)
            }
            guard plen == pub.count else { return nil }
            return Self.keyPair(curve: curve, d: d, publicPoint: pub)
        }
        ERR_clear_error()
        guard let pkey else { throw .invalidPrivateKey }
        try self.init(adopting: pkey, kind: .ec(curve))
    }

    /// An EC key pair `EVP_PKEY` from the scalar and its public point (EVP_PKEY_fromdata).
    static func keyPair(curve: Curve, d: OpaquePointer, publicPoint pub: [UInt8]) -> OpaquePointer? {
        defer { ERR_clear_error() }
        guard let bld = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(bld) }
        return pub.withUnsafeBufferPointer { pubBuf -> OpaquePointer? in
            guard OSSL_PARAM_BLD_push_utf8_string(bld, mdoc_PARAM_GROUP_NAME, curve.groupNamePointer, 0) == 1,
                  OSSL_PARAM_BLD_push_BN(bld, mdoc_PARAM_PRIV_KEY, d) == 1,
                  OSSL_PARAM_BLD_push_octet_string(bld, mdoc_PARAM_PUB_KEY, pubBuf.baseAddress, pubBuf.count) == 1,
                  let params = OSSL_PARAM_BLD_to_param(bld) else { return nil }
            defer { OSSL_PARAM_free(params) }
            guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
            defer { EVP_PKEY_CTX_free(ctx) }
            guard EVP_PKEY_fromdata_init(ctx) == 1 else { return nil }
            var out: OpaquePointer? = nil
            guard EVP_PKEY_fromdata(ctx, &out, mdoc_EVP_PKEY_KEYPAIR, params) == 1 else { return nil }
            return out
        }
    }

    /// Imports a raw X25519, X448 or Ed25519 private key (the public key is computed by OpenSSL).
    package init<R: ContiguousBytes>(kind: KeyKind, raw: R) throws(CryptoError) {
        if case .ec = kind { throw .unsupportedAlgorithm }
        let pkey: OpaquePointer? = raw.withUnsafeBytes { buf in
            guard buf.count == kind.rawSize else { return nil }
            return EVP_PKEY_new_raw_private_key(kind.evpType, nil, buf.baseAddress!.assumingMemoryBound(to: UInt8.self), buf.count)
        }
        ERR_clear_error()
        guard let pkey else { throw .invalidPrivateKey }
        try self.init(adopting: pkey, kind: kind)
    }

    /// Loads a private key from PKCS#8 (or SEC1) DER or from PEM text. EC keys on P-256/P-384/P-521
    /// and Ed25519 are accepted.
    package init<B: ContiguousBytes>(encoded: B) throws(CryptoError) {
        var bytes = encoded.withUnsafeBytes { [UInt8]($0) }
        defer { SecureBytes.cleanse(&bytes) }
        // Fast path for the usual device key, an unencrypted PKCS#8 EC key: OpenSSL 3.0's generic
        // decoder (OSSL_DECODER) costs millions of instructions per key; the scalar import does not.
        // The embedded public key, when present, must match the one computed from the scalar.
        if var parsed = ECPKCS8.parse(bytes) {
            defer { SecureBytes.cleanse(&parsed.scalar) }
            let key = try PrivateKey(curve: parsed.curve, scalar: parsed.scalar)
            if let embedded = parsed.publicPoint {
                guard SecureBytes.constantTimeEqual(embedded, key.publicKey.rawRepresentation) else { throw .invalidPrivateKey }
            }
            self = key
            return
        }
        let isPEM = bytes.starts(with: Array("-----BEGIN".utf8)) || String(decoding: bytes.prefix(64), as: UTF8.self).contains("-----BEGIN")
        var pkey: OpaquePointer? = nil
        if isPEM {
            pkey = bytes.withUnsafeBufferPointer { buf -> OpaquePointer? in
                guard let bio = BIO_new_mem_buf(buf.baseAddress, Int32(buf.count)) else { return nil }
                defer { BIO_free(bio) }
                return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
            }
        } else {
            pkey = bytes.withUnsafeBufferPointer { buf -> OpaquePointer? in
                guard let base = buf.baseAddress, buf.count > 0 else { return nil }
                var p: UnsafePointer<UInt8>? = base
                guard let k = d2i_AutoPrivateKey(nil, &p, buf.count) else { return nil }
                guard p == base + buf.count else { EVP_PKEY_free(k); return nil }
                return k
            }
        }
        ERR_clear_error()
        guard let pkey else { throw .invalidPrivateKey }
        let base = EVP_PKEY_get_base_id(pkey)
        let kind: KeyKind
        if base == EVP_PKEY_EC, let curve = Curve(bits: EVP_PKEY_get_bits(pkey)) {
            kind = .ec(curve)
        } else if base == EVP_PKEY_ED25519 {
            kind = .ed25519
        } else if base == EVP_PKEY_X25519 {
            kind = .x25519
        } else if base == EVP_PKEY_X448 {
            kind = .x448
        } else {
            EVP_PKEY_free(pkey)
            throw .invalidPrivateKey
        }
        try self.init(adopting: pkey, kind: kind)
    }

    private init(adopting pkey: OpaquePointer, kind: KeyKind) throws(CryptoError) {
        let box = PKeyBox(pkey)
        self.storage = .evp(box)
        self.kind = kind
        // The same EVP_PKEY serves as the public key: no second import (and no second on-curve check
        // of a point OpenSSL computed itself).
        self.publicKey = PublicKey(box: box, kind: kind)
    }

    /// The private scalar (EC, big-endian, padded to the curve size) or raw private key (OKP).
    /// The caller owns the secret and should cleanse it.
    package func exportSecret() throws(CryptoError) -> [UInt8] {
        switch kind {
        case .ec(let curve):
            return try withScalar { (d) throws(CryptoError) -> [UInt8] in
                var out = ByteArrays.zeros(count: curve.coordinateSize)
                let n = out.withUnsafeMutableBufferPointer { BN_bn2binpad(d, $0.baseAddress, Int32($0.count)) }
                guard n == curve.coordinateSize else { throw .operationFailed(operation: "export scalar") }
                return out
            }
        default:
            let box = try evp()
            var out = ByteArrays.zeros(count: kind.rawSize)
            var len = out.count
            guard out.withUnsafeMutableBufferPointer({ EVP_PKEY_get_raw_private_key(box.pkey, $0.baseAddress, &len) }) == 1 else {
                throw .operationFailed(operation: "export raw key")
            }
            return out
        }
    }

    /// PKCS#8 DER encoding of the key.
    package func pkcs8DER() throws(CryptoError) -> [UInt8] {
        let box = try evp()
        guard let p8 = EVP_PKEY2PKCS8(box.pkey) else { throw .operationFailed(operation: "pkcs8") }
        defer { PKCS8_PRIV_KEY_INFO_free(p8) }
        var ptr: UnsafeMutablePointer<UInt8>? = nil
        let len = i2d_PKCS8_PRIV_KEY_INFO(p8, &ptr)
        guard len > 0, let ptr else { throw .operationFailed(operation: "pkcs8") }
        defer { OPENSSL_cleanse(ptr, Int(len)); mdoc_OPENSSL_free(ptr) }
        return Array(UnsafeBufferPointer(start: ptr, count: Int(len)))
    }

    /// PKCS#8 PEM text (`-----BEGIN PRIVATE KEY-----`).
    package func pkcs8PEM() throws(CryptoError) -> String {
        let b64 = Data(try pkcs8DER()).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN PRIVATE KEY-----\n\(b64)\n-----END PRIVATE KEY-----\n"
    }

    /// ECDSA signature over `message` (hashed with `digest`), returned as raw `r ‖ s` of the curve's size.
    package func signECDSA<M: ContiguousBytes>(message: M, digest: DigestAlgorithm) throws(CryptoError) -> [UInt8] {
        guard case .ec(let curve) = kind else { throw .unsupportedAlgorithm }
        let box = try evp()
        // Hash here, then sign the digest with a pooled context (EVP_PKEY_sign draws a fresh nonce
        // on every call).
        let signed: [UInt8]? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: digest.outputSize) { dgst in
            digest.hash(message, into: UnsafeMutableRawBufferPointer(dgst))
            return box.withContext(verify: false) { ctx in
                var out = ByteArrays.zeros(count: 16 + 2 * (curve.coordinateSize + 3))
                var len = out.count
                let rc = out.withUnsafeMutableBufferPointer { EVP_PKEY_sign(ctx, $0.baseAddress, &len, dgst.baseAddress, dgst.count) }
                guard rc == 1 else { ERR_clear_error(); return (nil, false) }
                out.removeSubrange(len...)
                return (out, true)
            } ?? nil
        }
        guard let der = signed else { throw .operationFailed(operation: "sign") }
        guard let raw = ECDSASignatureDER.decode(der: der, coordinateSize: curve.coordinateSize) else {
            throw .operationFailed(operation: "ECDSA signature decode")
        }
        return raw
    }

    /// Ed25519 signature (RFC 8032), 64 bytes.
    package func signEd25519<M: ContiguousBytes>(message: M) throws(CryptoError) -> [UInt8] {
        guard kind == .ed25519 else { throw .unsupportedAlgorithm }
        // EdDSA hashes inside the one-shot EVP_DigestSign (no digest is named).
        let box = try evp()
        guard let mdctx = EVP_MD_CTX_new() else { throw .operationFailed(operation: "sign") }
        defer { EVP_MD_CTX_free(mdctx) }
        guard EVP_DigestSignInit(mdctx, nil, nil, nil, box.pkey) == 1 else { ERR_clear_error(); throw .operationFailed(operation: "sign init") }
        var out = ByteArrays.zeros(count: 64)
        var len = out.count
        let rc = withNonNullBytes(message) { mp, mn in
            out.withUnsafeMutableBufferPointer { EVP_DigestSign(mdctx, $0.baseAddress, &len, mp.assumingMemoryBound(to: UInt8.self), mn) }
        }
        guard rc == 1 else { ERR_clear_error(); throw .operationFailed(operation: "sign") }
        out.removeSubrange(len...)
        return out
    }

    /// The private scalar as a constant-time `BIGNUM`, for the duration of `body` (EC keys only).
    private func withScalar<R>(_ body: (OpaquePointer) throws(CryptoError) -> R) throws(CryptoError) -> R {
        if let s = storage.bareBox { return try body(s.d) }
        let box = storage.evpBox!
        var bn: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(box.pkey, mdoc_PARAM_PRIV_KEY, &bn) == 1, let bn else { ERR_clear_error(); throw .operationFailed(operation: "export scalar") }
        defer { BN_clear_free(bn) }
        BN_set_flags(bn, BN_FLG_CONSTTIME)
        return try body(bn)
    }

    /// Diffie-Hellman shared secret with `peer` (ECDH x-coordinate, or X25519/X448 output). Every
    /// `PublicKey` was validated when it was created (EC points are checked to be on the curve on
    /// import, and P-256/384/521 have cofactor 1), so no second check is made. On NIST curves the
    /// shared point is d·Q by `EC_POINT_mul` — the constant-time multiplication OpenSSL's own ECDH
    /// uses — without the EVP derive context around it. An all-zero result (low-order X25519/X448
    /// point) is rejected.
    package func sharedSecret(with peer: PublicKey) throws(CryptoError) -> [UInt8] {
        guard peer.kind == kind, kind != .ed25519 else { throw .invalidPublicKey }
        if case .ec(let curve) = kind {
            let q = try peer.ecPoint()
            return try withScalar { (d) throws(CryptoError) -> [UInt8] in
                let group = curve.group
                guard let r = EC_POINT_new(group) else { throw .operationFailed(operation: "derive") }
                defer { EC_POINT_clear_free(r) }
                guard let x = BN_new() else { throw .operationFailed(operation: "derive") }
                defer { BN_clear_free(x) }
                let bn = BN_CTX_secure_new()   // shared by both steps; cleared on free
                defer { BN_CTX_free(bn) }
                guard EC_POINT_mul(group, r, nil, q.point, d, bn) == 1, EC_POINT_is_at_infinity(group, r) == 0,
                      EC_POINT_get_affine_coordinates(group, r, x, nil, bn) == 1 else { ERR_clear_error(); throw .invalidPublicKey }
                var out = ByteArrays.zeros(count: curve.coordinateSize)
                let n = out.withUnsafeMutableBufferPointer { BN_bn2binpad(x, $0.baseAddress, Int32($0.count)) }
                guard n == curve.coordinateSize else { throw .operationFailed(operation: "derive") }
                return out
            }
        }
        let box = try evp(), peerBox = try peer.evp()
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, box.pkey, nil) else { throw .operationFailed(operation: "derive") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) == 1 else { ERR_clear_error(); throw .operationFailed(operation: "derive init") }
        guard EVP_PKEY_derive_set_peer_ex(ctx, peerBox.pkey, 0) == 1 else { ERR_clear_error(); throw .invalidPublicKey }
        var len = 0
        guard EVP_PKEY_derive(ctx, nil, &len) == 1, len > 0, len <= 132 else { ERR_clear_error(); throw .operationFailed(operation: "derive") }
        var out = ByteArrays.zeros(count: len)
        let rc = out.withUnsafeMutableBufferPointer { EVP_PKEY_derive(ctx, $0.baseAddress, &len) }
        guard rc == 1 else { ERR_clear_error(); throw .invalidPublicKey }
        out.removeSubrange(len...)
        if out.allSatisfy({ $0 == 0 }) { throw .invalidPublicKey }
        return out
    }
}

/// Conversion between COSE's raw `r ‖ s` and DER `ECDSA-Sig-Value` (done in Swift: no BIGNUMs).
enum ECDSASignatureDER {
    static func encode(raw: UnsafeRawBufferPointer, coordinateSize n: Int) -> [UInt8] {
        func integer(_ bytes: UnsafeRawBufferPointer.SubSequence) -> [UInt8] {
            var start = bytes.startIndex
            while start < bytes.endIndex - 1, bytes[start] == 0 { start += 1 }
            var body = [UInt8](bytes[start...])
            if body[0] & 0x80 != 0 { body.insert(0, at: 0) }
            return [0x02] + derLength(body.count) + body
        }
        let r = integer(raw[0..<n])
        let s = integer(raw[n..<(2 * n)])
        return [0x30] + derLength(r.count + s.count) + r + s
    }

    static func derLength(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        if n < 0x100 { return [0x81, UInt8(n)] }
        return [0x82, UInt8(n >> 8), UInt8(n & 0xff)]
    }

    /// DER `SEQUENCE { INTEGER r, INTEGER s }` → raw `r ‖ s`, written straight into one output buffer.
    static func decode(der: [UInt8], coordinateSize n: Int) -> [UInt8]? {
        var i = 0
        func readLength() -> Int? {
            guard i < der.count else { return nil }
            let b = der[i]; i += 1
            if b < 0x80 { return Int(b) }
            let count = Int(b & 0x7f)
            guard count >= 1, count <= 2, i + count <= der.count else { return nil }
            var len = 0
            for _ in 0..<count { len = len << 8 | Int(der[i]); i += 1 }
            return len
        }
        guard der.first == 0x30 else { return nil }
        i = 1
        guard let total = readLength(), i + total == der.count else { return nil }
        var out = ByteArrays.zeros(count: 2 * n)
        for half in 0..<2 {
            guard i < der.count, der[i] == 0x02 else { return nil }
            i += 1
            guard let len = readLength(), len > 0, i + len <= der.count else { return nil }
            var start = i
            while start < i + len - 1, der[start] == 0 { start += 1 }   // drop sign-padding zeros
            let significant = i + len - start
            guard significant <= n else { return nil }
            for k in 0..<significant { out[half * n + n - significant + k] = der[start + k] }
            i += len
        }
        return i == der.count ? out : nil
    }
}

/// A minimal reader for unencrypted PKCS#8 `PrivateKeyInfo` holding an `ECPrivateKey` on P-256,
/// P-384 or P-521 (RFC 5208, RFC 5915), in DER or in PEM ("PRIVATE KEY"). Anything else returns nil
/// and is left to OpenSSL's general decoder.
enum ECPKCS8 {
    struct Parsed {
        let curve: Curve
        var scalar: [UInt8]
        let publicPoint: [UInt8]?
    }

    private static let ecPublicKey: [UInt8] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]
    private static let curves: [([UInt8], Curve)] = [
        ([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07], .p256),
        ([0x2b, 0x81, 0x04, 0x00, 0x22], .p384),
        ([0x2b, 0x81, 0x04, 0x00, 0x23], .p521),
    ]

    static func parse(_ input: [UInt8]) -> Parsed? {
        if var der = pem(input) {
            // The only reference to the decoded key: cleansed in place when done.
            defer { SecureBytes.cleanse(&der) }
            return der.withUnsafeBufferPointer { parseDER($0) }
        }
        guard input.first == 0x30 else { return nil }
        return input.withUnsafeBufferPointer { parseDER($0) }
    }

    private static func parseDER(_ d: UnsafeBufferPointer<UInt8>) -> Parsed? {
        var r = Reader(d: d, at: 0, end: d.count)
        guard var info = r.enter(0x30), r.at == r.end else { return nil }
        guard let version = info.read(0x02), version.count == 1, d[version.lowerBound] == 0 else { return nil }
        guard var alg = info.enter(0x30), let oid = alg.read(0x06), Array(d[oid]) == ecPublicKey,
              let curveOID = alg.read(0x06), alg.at == alg.end,
              let curve = curves.first(where: { $0.0 == Array(d[curveOID]) })?.1 else { return nil }
        guard let inner = info.read(0x04) else { return nil }   // attributes, if any, may follow
        var ecOuter = Reader(d: d, at: inner.lowerBound, end: inner.upperBound)
        guard var ec = ecOuter.enter(0x30), ecOuter.at == ecOuter.end else { return nil }
        guard let v1 = ec.read(0x02), v1.count == 1, d[v1.lowerBound] == 1 else { return nil }
        guard let scalar = ec.read(0x04), scalar.count == curve.coordinateSize else { return nil }
        var point: [UInt8]? = nil
        if ec.peek == 0xa0 {
            guard var params = ec.enter(0xa0), let o = params.read(0x06), Array(d[o]) == curves.first(where: { $0.1 == curve })!.0 else { return nil }
        }
        if ec.peek == 0xa1 {
            guard var wrapper = ec.enter(0xa1), let bits = wrapper.read(0x03), bits.count == curve.uncompressedPointSize + 1,
                  d[bits.lowerBound] == 0 else { return nil }
            point = Array(d[(bits.lowerBound + 1)..<bits.upperBound])
        }
        guard ec.at == ec.end else { return nil }
        return Parsed(curve: curve, scalar: Array(d[scalar]), publicPoint: point)
    }

    /// A DER cursor: `read(tag)` returns the content range of the next element when it has that tag.
    private struct Reader {
        let d: UnsafeBufferPointer<UInt8>
        var at: Int
        let end: Int
        var peek: UInt8? { at < end ? d[at] : nil }

        init(d: UnsafeBufferPointer<UInt8>, at: Int, end: Int) { self.d = d; self.at = at; self.end = end }

        /// Enters one constructed element with `tag`: a reader over its content.
        mutating func enter(_ tag: UInt8) -> Reader? {
            guard let r = read(tag) else { return nil }
            return Reader(d: d, at: r.lowerBound, end: r.upperBound)
        }

        /// Reads one element with `tag`: its content range.
        mutating func read(_ tag: UInt8) -> Range<Int>? {
            guard at + 2 <= end, d[at] == tag else { return nil }
            var i = at + 1
            var len = Int(d[i]); i += 1
            if len & 0x80 != 0 {
                let n = len & 0x7f
                guard n >= 1, n <= 3, i + n <= end else { return nil }
                len = 0
                for _ in 0..<n { len = len << 8 | Int(d[i]); i += 1 }
                guard len >= 0x80 else { return nil }   // DER: the short form where it fits
            }
            guard len <= end - i else { return nil }
            at = i + len
            return i..<(i + len)
        }
    }

    /// The DER inside a PEM "PRIVATE KEY" block, or nil.
    private static func pem(_ input: [UInt8]) -> [UInt8]? {
        let begin = Array("-----BEGIN PRIVATE KEY-----".utf8), endMarker = Array("-----END PRIVATE KEY-----".utf8)
        guard input.count < 1 << 16, let b = find(begin, in: input, from: 0) else { return nil }
        let start = b + begin.count
        guard let e = find(endMarker, in: input, from: start) else { return nil }
        var text = [UInt8]()
        defer { SecureBytes.cleanse(&text) }
        text.reserveCapacity(e - start)
        for c in input[start..<e] where c != 0x0a && c != 0x0d && c != 0x20 && c != 0x09 { text.append(c) }
        guard !text.isEmpty, text.count % 4 == 0 else { return nil }
        var out = ByteArrays.zeros(count: text.count / 4 * 3)
        let n = text.withUnsafeBufferPointer { t in out.withUnsafeMutableBufferPointer { EVP_DecodeBlock($0.baseAddress, t.baseAddress, Int32(t.count)) } }
        guard n >= 0 else { SecureBytes.cleanse(&out); return nil }
        let pad = text.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard pad <= 2 else { SecureBytes.cleanse(&out); return nil }
        out.removeLast(pad)
        return out
    }

    private static func find(_ needle: [UInt8], in hay: [UInt8], from: Int) -> Int? {
        guard hay.count >= needle.count, from <= hay.count - needle.count else { return nil }
        for i in from...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle { return i }
        return nil
    }
}
