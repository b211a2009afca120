internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
            guard let c = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else {
                ERR_clear_error()
                return nil
            }
            guard (verify ? EVP_PKEY_verify_init(c) : EVP_PKEY_sign_init(c)) == 1 else {
                EVP_PKEY_CTX_free(c)
                ERR_clear_error()
                return nil
            }
            ctx = c
        }
        let c = ctx!
        let (result, reusable) = body(c)
        let kept =
            reusable
            && idle.withLock { pool in
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
        guard buf.count == curve.uncompressedPointSize, buf[0] == 4, let p = EC_POINT_new(curve.group) else {
            return nil
        }
        let group = curve.group
        // OpenSSL (since 1.1.1) refuses a point off the curve here: decoding an uncompressed point
        // sets its affine coordinates, which checks the curve equation (EC_R_POINT_IS_NOT_ON_CURVE),
        // so a second check would only repeat it. The off-curve tests of every key reader fence this.
        guard EC_POINT_oct2point(group, p, buf.baseAddress!.assumingMemoryBound(to: UInt8.self), buf.count, nil) == 1,
            EC_POINT_is_at_infinity(group, p) == 0
        else {
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
        let n = out.withUnsafeMutableBufferPointer {
            EC_POINT_point2oct(curve.group, p, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, $0.count, bn)
        }
        guard n == out.count else {
            EC_POINT_free(p)
            return nil
        }
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
