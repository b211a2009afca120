internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        guard let k = p.encoded.withUnsafeBytes({ Self.templateImport(curve: p.curve, $0) }) else {
            throw .invalidPublicKey
        }
        return PKeyBox(k)
    }

    /// The key as a validated EC point, for ECDH.
    func ecPoint() throws(CryptoError) -> ECPointBox {
        if let p = storage.bareBox { return p }
        guard case .ec(let curve) = kind else { throw .unsupportedAlgorithm }
        guard let p = rawRepresentation.withUnsafeBytes({ ECPointBox(curve: curve, uncompressed: $0) }) else {
            throw .invalidPublicKey
        }
        return p
    }

    /// Imports an EC public key from affine coordinates; rejects wrong lengths and points that are
    /// not on the curve.
    package init<X: ContiguousBytes, Y: ContiguousBytes>(curve: Curve, x: X, y: Y) throws(CryptoError) {
        let n = curve.coordinateSize
        // 04 ‖ x ‖ y assembled on the stack (no heap buffer), then imported.
        let key: Result<PublicKey, CryptoError> = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1 + 2 * n) {
            point in
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
            return Result { () throws(CryptoError) in
                try PublicKey(curve: curve, uncompressedPoint: UnsafeRawBufferPointer(point))
            }
        }
        self = try key.get()
    }

    /// Imports an EC public key from its uncompressed SEC1 encoding `04 ‖ x ‖ y`. Compressed points,
    /// the point at infinity, wrong lengths, coordinates not below the field prime and off-curve
    /// points are rejected. The key is held as an `EC_POINT` (see `ECPointBox`); an `EVP_PKEY` is
    /// built only if the key is used to verify a signature.
    package init<P: ContiguousBytes>(curve: Curve, uncompressedPoint: P) throws(CryptoError) {
        guard let p = uncompressedPoint.withUnsafeBytes({ ECPointBox(curve: curve, uncompressed: $0) }) else {
            throw .invalidPublicKey
        }
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
                OSSL_PARAM_construct_utf8_string(
                    mdoc_PARAM_GROUP_NAME, UnsafeMutablePointer(mutating: curve.groupNamePointer), 0),
                OSSL_PARAM_construct_octet_string(
                    mdoc_PARAM_PUB_KEY, UnsafeMutableRawPointer(mutating: buf.baseAddress!), buf.count),
                OSSL_PARAM_construct_end(),
            ]
            var out: OpaquePointer? = nil
            let rc = params.withUnsafeMutableBufferPointer {
                EVP_PKEY_fromdata(ctx, &out, mdoc_EVP_PKEY_PUBLIC_KEY, $0.baseAddress)
            }
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
        guard EVP_PKEY_set1_encoded_public_key(k, buf.baseAddress!.assumingMemoryBound(to: UInt8.self), buf.count) == 1
        else {
            EVP_PKEY_free(k)
            return nil
        }
        return k
    }

    /// Imports a raw Ed25519, X25519 or X448 public key.
    package init<R: ContiguousBytes>(kind: KeyKind, raw: R) throws(CryptoError) {
        if case .ec = kind { throw .unsupportedAlgorithm }
        let pkey: OpaquePointer? = raw.withUnsafeBytes { buf in
            guard buf.count == kind.rawSize else { return nil }
            return EVP_PKEY_new_raw_public_key(
                kind.evpType, nil, buf.baseAddress!.assumingMemoryBound(to: UInt8.self), buf.count)
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

    /// The key as a DER SubjectPublicKeyInfo (`i2d_PUBKEY`).
    package func subjectPublicKeyInfo() throws(CryptoError) -> [UInt8] {
        let box = try evp()
        var ptr: UnsafeMutablePointer<UInt8>? = nil
        let len = i2d_PUBKEY(box.pkey, &ptr)
        guard len > 0, let ptr else { throw .operationFailed(operation: "i2d_PUBKEY") }
        defer { mdoc_OPENSSL_free(ptr) }
        return Array(UnsafeBufferPointer(start: ptr, count: Int(len)))
    }

    /// The key as PEM text (`-----BEGIN PUBLIC KEY-----`), for handing a public key to an issuer.
    package func pem() throws(CryptoError) -> String {
        let b64 = Data(try subjectPublicKeyInfo()).base64EncodedString(
            options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN PUBLIC KEY-----\n\(b64)\n-----END PUBLIC KEY-----\n"
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
    package func verifyECDSA<S: ContiguousBytes, M: ContiguousBytes>(signature: S, message: M, digest: DigestAlgorithm)
        throws(CryptoError) -> Bool
    {
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
                let rc = der.withUnsafeBufferPointer {
                    EVP_PKEY_verify(ctx, $0.baseAddress, $0.count, dgst.baseAddress, dgst.count)
                }
                ERR_clear_error()
                // 0 is a wrong signature (the context stays usable); below 0 an error.
                return (rc == 1, rc >= 0)
            } ?? false
        }
    }

    /// Verifies an Ed25519 signature (RFC 8032).
    package func verifyEd25519<S: ContiguousBytes, M: ContiguousBytes>(signature: S, message: M) throws(CryptoError)
        -> Bool
    {
        guard kind == .ed25519 else { throw .unsupportedAlgorithm }
        let sig = signature.withUnsafeBytes { [UInt8]($0) }
        guard sig.count == 64 else { throw .invalidSignatureEncoding }
        // EdDSA hashes inside the one-shot EVP_DigestVerify (no digest is named).
        guard let box = try? evp(), let mdctx = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(mdctx)
            ERR_clear_error()
        }
        guard EVP_DigestVerifyInit(mdctx, nil, nil, nil, box.pkey) == 1 else { return false }
        let rc = withNonNullBytes(message) { mp, mn in
            sig.withUnsafeBufferPointer {
                EVP_DigestVerify(mdctx, $0.baseAddress, $0.count, mp.assumingMemoryBound(to: UInt8.self), mn)
            }
        }
        return rc == 1
    }
}
