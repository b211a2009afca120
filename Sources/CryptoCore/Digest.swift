internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Fetched OpenSSL algorithm object, fetched once per process and shared read-only between threads.
final class Fetched: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer?) {
        guard let pointer else { fatalError("OpenSSL algorithm fetch failed: the library is unusable") }
        self.pointer = pointer
    }
}

enum Algorithms {
    static let sha256 = Fetched(EVP_MD_fetch(nil, "SHA256", nil))
    static let sha384 = Fetched(EVP_MD_fetch(nil, "SHA384", nil))
    static let sha512 = Fetched(EVP_MD_fetch(nil, "SHA512", nil))
    static let aes128gcm = Fetched(EVP_CIPHER_fetch(nil, "AES-128-GCM", nil))
    static let aes256gcm = Fetched(EVP_CIPHER_fetch(nil, "AES-256-GCM", nil))
    static let chacha20poly1305 = Fetched(EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil))
}

/// SHA-2 digest algorithms.
package enum DigestAlgorithm: Sendable, Hashable {
    case sha256, sha384, sha512

    /// Output length in bytes.
    package var outputSize: Int {
        switch self {
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    var md: OpaquePointer {
        switch self {
        case .sha256: Algorithms.sha256.pointer
        case .sha384: Algorithms.sha384.pointer
        case .sha512: Algorithms.sha512.pointer
        }
    }

    /// One-shot digest of `data`.
    package func hash<D: ContiguousBytes>(_ data: D) -> [UInt8] {
        var out = ByteArrays.zeros(count: outputSize)
        var len: UInt32 = 0
        let ok = withNonNullBytes(data) { p, n in
            out.withUnsafeMutableBufferPointer { EVP_Digest(p, n, $0.baseAddress, &len, md, nil) }
        }
        precondition(ok == 1 && Int(len) == outputSize, "EVP_Digest failed")
        return out
    }

    /// One-shot digest of `data` written into `out` (exactly `outputSize` bytes); no allocation.
    package func hash<D: ContiguousBytes>(_ data: D, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count == outputSize)
        var len: UInt32 = 0
        let ok = withNonNullBytes(data) { p, n in
            EVP_Digest(p, n, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &len, md, nil)
        }
        precondition(ok == 1 && Int(len) == outputSize, "EVP_Digest failed")
    }

    /// Block size of the hash in bytes (HMAC padding).
    package var blockSize: Int { self == .sha256 ? 64 : 128 }

    /// HMAC of `data` under `key` (RFC 2104), built on the pre-fetched digest so no algorithm is
    /// fetched per call (OpenSSL 3.0's one-shot `HMAC()` fetches every time).
    package func hmac<K: ContiguousBytes, D: ContiguousBytes>(key: K, data: D) -> [UInt8] {
        ByteArrays.make(count: outputSize) { out in
            key.withUnsafeBytes { k in
                data.withUnsafeBytes { d in
                    Self.withOnePart(d) { hmac(key: k, parts: $0, into: UnsafeMutableRawBufferPointer(out)) }
                }
            }
        }
    }

    /// A one-element parts list on the stack.
    private static func withOnePart<R>(
        _ part: UnsafeRawBufferPointer, _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>) -> R
    ) -> R {
        withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 1) { parts in
            parts[0] = part
            return body(UnsafeBufferPointer(parts))
        }
    }

    /// HMAC over the concatenation of `parts`, written into `out` (exactly `outputSize` bytes). The
    /// allocation-free core: pads on the stack, one digest context for both passes.
    package func hmac(
        key k: UnsafeRawBufferPointer, parts: UnsafeBufferPointer<UnsafeRawBufferPointer>,
        into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(out.count == outputSize)
        let bs = blockSize
        // K0: the key padded (or hashed, when longer than a block) to the block size; then ipad/opad.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * bs) { pads in
            pads.initialize(repeating: 0)
            defer { OPENSSL_cleanse(pads.baseAddress!, pads.count) }
            if k.count > bs {
                var len: UInt32 = 0
                let ok = EVP_Digest(k.baseAddress!, k.count, pads.baseAddress!, &len, md, nil)
                precondition(ok == 1 && Int(len) == outputSize, "EVP_Digest failed")
            } else if k.count > 0 {
                UnsafeMutableRawPointer(pads.baseAddress!).copyMemory(from: k.baseAddress!, byteCount: k.count)
            }
            for i in 0..<bs {
                let b = pads[i]
                pads[i] = b ^ 0x36
                pads[bs + i] = b ^ 0x5c
            }
            guard let ctx = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed") }
            defer { EVP_MD_CTX_free(ctx) }
            var len: UInt32 = 0
            let o = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            // Each pass hashes one buffer: the pad and what follows it joined on the stack (and cleansed:
            // they hold key material), as one update costs the digest less than one per piece. Messages
            // longer than `joinedLimit` stream piece by piece after the pad.
            let total = parts.reduce(0) { $0 + $1.count }
            // Calls with effects stay outside `precondition`, whose condition -Ounchecked never evaluates.
            var ok = EVP_DigestInit_ex2(ctx, md, nil)
            if total <= Self.joinedLimit {
                ok &= withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bs + total) { joined in
                    let j = joined.baseAddress!
                    j.update(from: pads.baseAddress!, count: bs)
                    var n = bs
                    for p in parts where p.count > 0 {
                        UnsafeMutableRawPointer(j + n).copyMemory(from: p.baseAddress!, byteCount: p.count)
                        n += p.count
                    }
                    defer { OPENSSL_cleanse(j, n) }
                    return EVP_DigestUpdate(ctx, j, n)
                }
            } else {
                ok &= EVP_DigestUpdate(ctx, pads.baseAddress!, bs)
                for p in parts where p.count > 0 { ok &= EVP_DigestUpdate(ctx, p.baseAddress!, p.count) }
            }
            ok &= EVP_DigestFinal_ex(ctx, o, &len)
            ok &= EVP_DigestInit_ex2(ctx, md, nil)
            ok &= withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bs + outputSize) { joined in
                let j = joined.baseAddress!
                j.update(from: pads.baseAddress! + bs, count: bs)
                (j + bs).update(from: o, count: outputSize)
                defer { OPENSSL_cleanse(j, bs + outputSize) }
                return EVP_DigestUpdate(ctx, j, bs + outputSize)
            }
            ok &= EVP_DigestFinal_ex(ctx, o, &len)
            precondition(ok == 1 && Int(len) == outputSize, "HMAC digest failed")
        }
    }

    /// The longest message `hmac` joins to its pad in one stack buffer (HPKE's labeled inputs, HKDF's
    /// blocks are far shorter).
    static let joinedLimit = 512

    /// HKDF-Extract (RFC 5869 §2.2). An empty salt is HashLen zeros, which HMAC pads identically.
    package func hkdfExtract<S: ContiguousBytes, I: ContiguousBytes>(salt: S, ikm: I) -> [UInt8] {
        ByteArrays.make(count: outputSize) { out in
            salt.withUnsafeBytes { s in
                ikm.withUnsafeBytes { i in
                    Self.withOnePart(i) { hkdfExtract(salt: s, ikmParts: $0, into: UnsafeMutableRawBufferPointer(out)) }
                }
            }
        }
    }

    /// HKDF-Extract into `out` (exactly `outputSize` bytes); no allocation.
    package func hkdfExtract(
        salt: UnsafeRawBufferPointer, ikmParts: UnsafeBufferPointer<UnsafeRawBufferPointer>,
        into out: UnsafeMutableRawBufferPointer
    ) {
        hmac(key: salt, parts: ikmParts, into: out)
    }

    /// HKDF-Expand (RFC 5869 §2.3). `length` must be at most 255 × the digest size.
    package func hkdfExpand<P: ContiguousBytes, I: ContiguousBytes>(prk: P, info: I, length: Int) throws(CryptoError)
        -> [UInt8]
    {
        guard length >= 0, length <= 255 * outputSize else { throw .invalidLength }
        return ByteArrays.make(count: length) { out in
            prk.withUnsafeBytes { p in
                info.withUnsafeBytes { i in
                    Self.withOnePart(i) {
                        try? hkdfExpand(prk: p, infoParts: $0, into: UnsafeMutableRawBufferPointer(out))
                    }
                }
            }
        }
    }

    /// HKDF-Expand into `out` (its count is L, at most 255 × the digest size). Each block is
    /// `T(i) = HMAC(prk, T(i-1) ‖ info ‖ i)` computed from the pieces; no allocation.
    package func hkdfExpand(
        prk: UnsafeRawBufferPointer, infoParts: UnsafeBufferPointer<UnsafeRawBufferPointer>,
        into out: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) {
        let length = out.count
        guard length <= 255 * outputSize else { throw .invalidLength }
        let h = outputSize
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: h) { t in
            withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: infoParts.count + 2) { parts in
                var produced = 0
                var counter: UInt8 = 1
                while produced < length {
                    withUnsafeBytes(of: counter) { c in
                        var n = 0
                        if produced > 0 {
                            parts[n] = UnsafeRawBufferPointer(t)
                            n += 1
                        }
                        for p in infoParts {
                            parts[n] = p
                            n += 1
                        }
                        parts[n] = c
                        n += 1
                        hmac(
                            key: prk, parts: UnsafeBufferPointer(rebasing: parts[0..<n]),
                            into: UnsafeMutableRawBufferPointer(t))
                    }
                    let take = min(h, length - produced)
                    (out.baseAddress! + produced).copyMemory(from: t.baseAddress!, byteCount: take)
                    produced += take
                    counter &+= 1
                }
            }
            OPENSSL_cleanse(t.baseAddress!, h)
        }
    }

    /// HKDF (RFC 5869): extract then expand.
    package func hkdf<S: ContiguousBytes, I: ContiguousBytes, N: ContiguousBytes>(salt: S, ikm: I, info: N, length: Int)
        throws(CryptoError) -> [UInt8]
    {
        var prk = hkdfExtract(salt: salt, ikm: ikm)
        defer { SecureBytes.cleanse(&prk) }
        return try hkdfExpand(prk: prk, info: info, length: length)
    }
}
