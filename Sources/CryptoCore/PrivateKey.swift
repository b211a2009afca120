internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        guard let k = Self.keyPair(curve: s.curve, d: s.d, publicPoint: publicKey.rawRepresentation) else {
            throw .invalidPrivateKey
        }
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
        let bn = BN_CTX_secure_new()  // one context for the three steps; its scratch values are cleared on free
        defer { BN_CTX_free(bn) }
        repeat {
            guard BN_priv_rand_range_ex(d, EC_GROUP_get0_order(group), 0, bn) == 1 else {
                ERR_clear_error()
                throw .operationFailed(operation: "keygen")
            }
        } while BN_is_zero(d) != 0
        guard let q = EC_POINT_new(group) else { throw .operationFailed(operation: "keygen") }
        guard EC_POINT_mul(group, q, d, nil, nil, bn) == 1 else {
            EC_POINT_free(q)
            ERR_clear_error()
            throw .operationFailed(operation: "keygen")
        }
        guard let point = ECPointBox(curve: curve, adopting: q, context: bn) else {
            ERR_clear_error()
            throw .operationFailed(operation: "keygen")
        }
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
        if case .ec(let curve) = kind {
            made = EVP_PKEY_CTX_new_from_pkey(nil, Templates.key(curve).pkey, nil)
        } else {
            made = EVP_PKEY_CTX_new_from_name(nil, name, nil)
        }
        guard let ctx = made else { throw .operationFailed(operation: "keygen") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1 else { throw .operationFailed(operation: "keygen") }
        var pkey: OpaquePointer? = nil
        guard EVP_PKEY_generate(ctx, &pkey) == 1, let pkey else { throw .operationFailed(operation: "keygen") }
        return try PrivateKey(adopting: pkey, kind: kind)
    }

    /// Imports an EC private scalar (big-endian, exactly the curve's size). The public key is d·G,
    /// since OpenSSL 3.0 does not derive it on import, kept as that point with its encoding (reading
    /// it back from the `EVP_PKEY` would convert it to affine coordinates again). With `publicPoint`
    /// (`04 ‖ x ‖ y`, as a PKCS#8 file may carry it), that point is validated (on the curve) and must
    /// equal d·G, compared in projective coordinates, which spares the conversion.
    /// `publicPointChecked` (with a `publicPoint`) says the caller holds a record that exactly these
    /// bytes passed that comparison before (a key file's digest, kept with the credential it signs for):
    /// the point is still validated, d·G is not computed again, and the `EVP_PKEY` holds the scalar
    /// alone (all ECDSA signing reads; OpenSSL would decode and check the point a second time):
    /// `publicKey` is the validated point, and `pkcs8DER` adds it back.
    /// - Throws: `invalidPrivateKey` for 0, a value ≥ the order, a wrong size, or a `publicPoint`
    ///   that is not a valid point or (unless `publicPointChecked`) not d·G.
    package init<D: ContiguousBytes>(
        curve: Curve, scalar: D, publicPoint: [UInt8]? = nil, publicPointChecked: Bool = false
    ) throws(CryptoError) {
        var given: ECPointBox?
        if let publicPoint {
            given = publicPoint.withUnsafeBytes { ECPointBox(curve: curve, uncompressed: $0) }
            if given == nil { throw .invalidPrivateKey }
        }
        let made: (pkey: OpaquePointer, point: ECPointBox)? = scalar.withUnsafeBytes { buf in
            guard buf.count == curve.coordinateSize else { return nil }
            guard let d = BN_secure_new() else { return nil }
            defer { BN_clear_free(d) }
            guard BN_bin2bn(buf.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(buf.count), d) != nil else {
                return nil
            }
            let group = curve.group
            guard BN_is_zero(d) == 0, BN_cmp(d, EC_GROUP_get0_order(group)) < 0 else { return nil }
            if publicPointChecked, let given {
                // The recorded key signs with the scalar alone; its point, validated above, is kept here.
                guard let pkey = Self.keyPair(curve: curve, d: d, publicPoint: nil) else { return nil }
                return (pkey, given)
            }
            guard let q = EC_POINT_new(group) else { return nil }
            guard EC_POINT_mul(group, q, d, nil, nil, nil) == 1 else {
                EC_POINT_free(q)
                return nil
            }
            let point: ECPointBox
            if let given {
                defer { EC_POINT_free(q) }
                guard EC_POINT_cmp(group, q, given.point, nil) == 0 else { return nil }
                point = given
            } else {
                // Owns q from here (and frees it if the encoding fails).
                guard let computed = ECPointBox(curve: curve, adopting: q) else { return nil }
                point = computed
            }
            guard let pkey = Self.keyPair(curve: curve, d: d, publicPoint: point.encoded) else { return nil }
            return (pkey, point)
        }
        ERR_clear_error()
        guard let made else { throw .invalidPrivateKey }
        self.storage = .evp(PKeyBox(made.pkey))
        self.kind = .ec(curve)
        self.publicKey = PublicKey(point: made.point)
    }

    /// An EC key pair `EVP_PKEY` from the scalar and its public point (EVP_PKEY_fromdata). Without
    /// `pub` the key holds the scalar alone, which is all ECDSA signing reads (OpenSSL would decode and
    /// check a given point a second time; the caller keeps the point it validated).
    static func keyPair(curve: Curve, d: OpaquePointer, publicPoint pub: [UInt8]?) -> OpaquePointer? {
        defer { ERR_clear_error() }
        guard let bld = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(bld) }
        return (pub ?? []).withUnsafeBufferPointer { pubBuf -> OpaquePointer? in
            guard OSSL_PARAM_BLD_push_utf8_string(bld, mdoc_PARAM_GROUP_NAME, curve.groupNamePointer, 0) == 1,
                OSSL_PARAM_BLD_push_BN(bld, mdoc_PARAM_PRIV_KEY, d) == 1,
                pub == nil
                    || OSSL_PARAM_BLD_push_octet_string(bld, mdoc_PARAM_PUB_KEY, pubBuf.baseAddress, pubBuf.count) == 1,
                let params = OSSL_PARAM_BLD_to_param(bld)
            else { return nil }
            defer { OSSL_PARAM_free(params) }
            guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
            defer { EVP_PKEY_CTX_free(ctx) }
            guard EVP_PKEY_fromdata_init(ctx) == 1 else { return nil }
            var out: OpaquePointer? = nil
            guard EVP_PKEY_fromdata(ctx, &out, mdoc_EVP_PKEY_KEYPAIR, params) == 1 else { return nil }
            return out
        }
    }

    /// Whether an EC `EVP_PKEY` carries its public point (false for a recorded key's scalar-only one).
    private static func hasPublicPoint(_ pkey: OpaquePointer) -> Bool {
        var length = 0
        defer { ERR_clear_error() }
        return EVP_PKEY_get_octet_string_param(pkey, mdoc_PARAM_PUB_KEY, nil, 0, &length) == 1 && length > 0
    }

    /// Imports a raw X25519, X448 or Ed25519 private key (the public key is computed by OpenSSL).
    package init<R: ContiguousBytes>(kind: KeyKind, raw: R) throws(CryptoError) {
        if case .ec = kind { throw .unsupportedAlgorithm }
        let pkey: OpaquePointer? = raw.withUnsafeBytes { buf in
            guard buf.count == kind.rawSize else { return nil }
            return EVP_PKEY_new_raw_private_key(
                kind.evpType, nil, buf.baseAddress!.assumingMemoryBound(to: UInt8.self), buf.count)
        }
        ERR_clear_error()
        guard let pkey else { throw .invalidPrivateKey }
        try self.init(adopting: pkey, kind: kind)
    }

    /// Loads a private key from PKCS#8 (or SEC1) DER or from PEM text. EC keys on P-256/P-384/P-521
    /// and Ed25519 are accepted. `publicPointChecked`: these exact bytes were loaded before and their
    /// embedded public point found to be d·G (the caller's record says so), so that is not computed
    /// again (`init(curve:scalar:publicPoint:publicPointChecked:)`).
    package init<B: ContiguousBytes>(encoded: B, publicPointChecked: Bool = false) throws(CryptoError) {
        var bytes = encoded.withUnsafeBytes { [UInt8]($0) }
        defer { SecureBytes.cleanse(&bytes) }
        // Fast path for the usual device key, an unencrypted PKCS#8 EC key: OpenSSL 3.0's generic
        // decoder (OSSL_DECODER) costs millions of instructions per key; the scalar import does not.
        // The embedded public key, when present, must match the one computed from the scalar.
        if var parsed = ECPKCS8.parse(bytes) {
            defer { SecureBytes.cleanse(&parsed.scalar) }
            self = try PrivateKey(
                curve: parsed.curve, scalar: parsed.scalar, publicPoint: parsed.publicPoint,
                publicPointChecked: publicPointChecked)
            return
        }
        let isPEM =
            bytes.starts(with: Array("-----BEGIN".utf8))
            || String(decoding: bytes.prefix(64), as: UTF8.self).contains("-----BEGIN")
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
                guard p == base + buf.count else {
                    EVP_PKEY_free(k)
                    return nil
                }
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
            guard
                out.withUnsafeMutableBufferPointer({ EVP_PKEY_get_raw_private_key(box.pkey, $0.baseAddress, &len) })
                    == 1
            else {
                throw .operationFailed(operation: "export raw key")
            }
            return out
        }
    }

    /// PKCS#8 DER encoding of the key (with its public key: a recorded key whose `EVP_PKEY` holds the
    /// scalar alone is exported through a full key pair made for the call).
    package func pkcs8DER() throws(CryptoError) -> [UInt8] {
        var box = try evp()
        if case .ec(let curve) = kind, !Self.hasPublicPoint(box.pkey) {
            let pair = try withScalar { (d) throws(CryptoError) -> OpaquePointer in
                guard let k = Self.keyPair(curve: curve, d: d, publicPoint: publicKey.rawRepresentation) else {
                    throw .operationFailed(operation: "pkcs8")
                }
                return k
            }
            box = PKeyBox(pair)
        }
        guard let p8 = EVP_PKEY2PKCS8(box.pkey) else { throw .operationFailed(operation: "pkcs8") }
        defer { PKCS8_PRIV_KEY_INFO_free(p8) }
        var ptr: UnsafeMutablePointer<UInt8>? = nil
        let len = i2d_PKCS8_PRIV_KEY_INFO(p8, &ptr)
        guard len > 0, let ptr else { throw .operationFailed(operation: "pkcs8") }
        defer {
            OPENSSL_cleanse(ptr, Int(len))
            mdoc_OPENSSL_free(ptr)
        }
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
                let rc = out.withUnsafeMutableBufferPointer {
                    EVP_PKEY_sign(ctx, $0.baseAddress, &len, dgst.baseAddress, dgst.count)
                }
                guard rc == 1 else {
                    ERR_clear_error()
                    return (nil, false)
                }
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
        guard EVP_DigestSignInit(mdctx, nil, nil, nil, box.pkey) == 1 else {
            ERR_clear_error()
            throw .operationFailed(operation: "sign init")
        }
        var out = ByteArrays.zeros(count: 64)
        var len = out.count
        let rc = withNonNullBytes(message) { mp, mn in
            out.withUnsafeMutableBufferPointer {
                EVP_DigestSign(mdctx, $0.baseAddress, &len, mp.assumingMemoryBound(to: UInt8.self), mn)
            }
        }
        guard rc == 1 else {
            ERR_clear_error()
            throw .operationFailed(operation: "sign")
        }
        out.removeSubrange(len...)
        return out
    }

    /// The private scalar as a constant-time `BIGNUM`, for the duration of `body` (EC keys only).
    private func withScalar<R>(_ body: (OpaquePointer) throws(CryptoError) -> R) throws(CryptoError) -> R {
        if let s = storage.bareBox { return try body(s.d) }
        let box = storage.evpBox!
        var bn: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(box.pkey, mdoc_PARAM_PRIV_KEY, &bn) == 1, let bn else {
            ERR_clear_error()
            throw .operationFailed(operation: "export scalar")
        }
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
                let bn = BN_CTX_secure_new()  // shared by both steps; cleared on free
                defer { BN_CTX_free(bn) }
                guard EC_POINT_mul(group, r, nil, q.point, d, bn) == 1, EC_POINT_is_at_infinity(group, r) == 0,
                    EC_POINT_get_affine_coordinates(group, r, x, nil, bn) == 1
                else {
                    ERR_clear_error()
                    throw .invalidPublicKey
                }
                var out = ByteArrays.zeros(count: curve.coordinateSize)
                let n = out.withUnsafeMutableBufferPointer { BN_bn2binpad(x, $0.baseAddress, Int32($0.count)) }
                guard n == curve.coordinateSize else { throw .operationFailed(operation: "derive") }
                return out
            }
        }
        let box = try evp()
        let peerBox = try peer.evp()
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, box.pkey, nil) else {
            throw .operationFailed(operation: "derive")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) == 1 else {
            ERR_clear_error()
            throw .operationFailed(operation: "derive init")
        }
        guard EVP_PKEY_derive_set_peer_ex(ctx, peerBox.pkey, 0) == 1 else {
            ERR_clear_error()
            throw .invalidPublicKey
        }
        var len = 0
        guard EVP_PKEY_derive(ctx, nil, &len) == 1, len > 0, len <= 132 else {
            ERR_clear_error()
            throw .operationFailed(operation: "derive")
        }
        var out = ByteArrays.zeros(count: len)
        let rc = out.withUnsafeMutableBufferPointer { EVP_PKEY_derive(ctx, $0.baseAddress, &len) }
        guard rc == 1 else {
            ERR_clear_error()
            throw .invalidPublicKey
        }
        out.removeSubrange(len...)
        if out.allSatisfy({ $0 == 0 }) { throw .invalidPublicKey }
        return out
    }
}
