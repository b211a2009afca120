internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// AEAD ciphers with a 12-byte nonce and a 16-byte tag appended to the ciphertext.
package enum AEADAlgorithm: Sendable, Hashable {
    case aes128gcm, aes256gcm, chacha20poly1305

    /// Key length in bytes (Nk).
    package var keySize: Int {
        switch self {
        case .aes128gcm: 16
        case .aes256gcm, .chacha20poly1305: 32
        }
    }

    /// Nonce length in bytes (Nn).
    package var nonceSize: Int { 12 }

    /// Tag length in bytes (Nt).
    package var tagSize: Int { 16 }

    var cipher: OpaquePointer {
        switch self {
        case .aes128gcm: Algorithms.aes128gcm.pointer
        case .aes256gcm: Algorithms.aes256gcm.pointer
        case .chacha20poly1305: Algorithms.chacha20poly1305.pointer
        }
    }

    /// Encrypts `plaintext`, returning `ciphertext ‖ tag`.
    package func seal<K: ContiguousBytes, N: ContiguousBytes, P: ContiguousBytes, A: ContiguousBytes>(
        key: K, nonce: N, plaintext: P, aad: A
    ) throws(CryptoError) -> [UInt8] {
        var out = [UInt8]()
        try seal(key: key, nonce: nonce, plaintext: plaintext, aad: aad, appendingTo: &out)
        return out
    }

    /// Encrypts `plaintext`, appending `ciphertext ‖ tag` to `output` (one buffer, no intermediate copy).
    package func seal<K: ContiguousBytes, N: ContiguousBytes, P: ContiguousBytes, A: ContiguousBytes>(
        key: K, nonce: N, plaintext: P, aad: A, appendingTo output: inout [UInt8]
    ) throws(CryptoError) {
        let ptLen = plaintext.withUnsafeBytes { $0.count }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: ptLen + tagSize))
        let result: Result<Void, CryptoError> = output.withUnsafeMutableBytes { out in
            plaintext.withUnsafeBytes { pt in
                Result { () throws(CryptoError) in
                    try seal(
                        key: key, nonce: nonce, plaintext: pt, aad: aad,
                        into: UnsafeMutableRawBufferPointer(rebasing: out[start...]))
                }
            }
        }
        if case .failure(let error) = result {
            output.removeSubrange(start...)
            throw error
        }
    }

    /// Encrypts `plaintext`, writing `ciphertext ‖ tag` to the start of `output`, which must hold at
    /// least `plaintext.count + tagSize` bytes (the caller owns the buffer: no allocation here).
    package func seal<K: ContiguousBytes, N: ContiguousBytes, A: ContiguousBytes>(
        key: K, nonce: N, plaintext pt: UnsafeRawBufferPointer, aad: A, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) {
        try seal(key: key, nonce: nonce, count: pt.count, aad: aad, into: output) { $0(pt) }
    }

    /// Encrypts a plaintext of `count` bytes that `pieces` hands over in order, one buffer per call of
    /// its argument (a message assembled from parts is encrypted without first being copied into one
    /// buffer), writing `ciphertext ‖ tag` to the start of `output`, which must hold at least
    /// `count + tagSize` bytes. Throws `invalidLength` when the pieces do not add up to `count`.
    package func seal<K: ContiguousBytes, N: ContiguousBytes, A: ContiguousBytes>(
        key: K, nonce: N, count: Int, aad: A, into output: UnsafeMutableRawBufferPointer,
        pieces: ((UnsafeRawBufferPointer) -> Void) -> Void
    ) throws(CryptoError) {
        guard count >= 0, output.count >= count + tagSize, count <= Int(Int32.max) else { throw .invalidLength }
        let dst = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
        try seal(key: key, nonce: nonce, count: count, aad: aad, ciphertext: dst, tag: dst + count, pieces: pieces)
    }

    /// Encrypts `buffer` in place (its ciphertext replaces the plaintext, byte for byte) and writes the
    /// tag into `tag`, which must hold exactly `tagSize` bytes: a message already in a buffer of its
    /// own is encrypted without a second one.
    package func seal<K: ContiguousBytes, N: ContiguousBytes, A: ContiguousBytes>(
        key: K, nonce: N, inPlace buffer: UnsafeMutableRawBufferPointer, aad: A, tag: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) {
        guard buffer.count <= Int(Int32.max), tag.count == tagSize else { throw .invalidLength }
        try seal(
            key: key, nonce: nonce, count: buffer.count, aad: aad,
            ciphertext: buffer.baseAddress?.assumingMemoryBound(to: UInt8.self),
            tag: tag.baseAddress!.assumingMemoryBound(to: UInt8.self)
        ) { $0(UnsafeRawBufferPointer(buffer)) }
    }

    /// The cipher: `count` plaintext bytes from `pieces` encrypted to `ciphertext` (which may be where
    /// the pieces are: GCM and ChaCha20-Poly1305 allow exact overlap; nil only for an empty plaintext,
    /// whose pieces are all empty), the tag to `tag`.
    private func seal<K: ContiguousBytes, N: ContiguousBytes, A: ContiguousBytes>(
        key: K, nonce: N, count: Int, aad: A, ciphertext dst: UnsafeMutablePointer<UInt8>?,
        tag: UnsafeMutablePointer<UInt8>, pieces: ((UnsafeRawBufferPointer) -> Void) -> Void
    ) throws(CryptoError) {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .operationFailed(operation: "cipher ctx") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        try initialize(ctx, key: key, nonce: nonce, encrypt: true)
        try feedAAD(ctx, aad: aad)
        var written = 0
        var failed = false
        var tooLong = false
        pieces { piece in
            guard !failed, !tooLong, piece.count > 0 else { return }
            guard piece.count <= count - written else {
                tooLong = true
                return
            }
            var outl: Int32 = 0
            guard
                EVP_EncryptUpdate(
                    ctx, dst! + written, &outl, piece.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    Int32(piece.count)) == 1
            else {
                failed = true
                return
            }
            written += Int(outl)
        }
        // GCM and ChaCha20-Poly1305 are stream modes: every byte fed is written at once.
        if failed {
            ERR_clear_error()
            throw .operationFailed(operation: "seal")
        }
        guard !tooLong, written == count else { throw .invalidLength }
        var finl: Int32 = 0
        guard EVP_EncryptFinal_ex(ctx, tag, &finl) == 1, finl == 0,
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, Int32(tagSize), tag) == 1
        else {
            throw .operationFailed(operation: "seal")
        }
    }

    /// Decrypts `ciphertext ‖ tag`. Any failure (short input, wrong key, tampering) is the single
    /// opaque `authenticationFailed`; no plaintext is released unless the tag verifies.
    package func open<K: ContiguousBytes, N: ContiguousBytes, C: ContiguousBytes, A: ContiguousBytes>(
        key: K, nonce: N, ciphertext: C, aad: A
    ) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .operationFailed(operation: "cipher ctx") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        do {
            try initialize(ctx, key: key, nonce: nonce, encrypt: false)
            try feedAAD(ctx, aad: aad)
        } catch { throw .authenticationFailed }
        var out = [UInt8]()
        let ok: Bool = ciphertext.withUnsafeBytes { ct in
            guard ct.count >= tagSize else { return false }
            let bodyLen = ct.count - tagSize
            out = ByteArrays.zeros(count: bodyLen)
            return out.withUnsafeMutableBufferPointer { outBuf in
                var outl: Int32 = 0
                if bodyLen > 0 {
                    guard
                        EVP_DecryptUpdate(
                            ctx, outBuf.baseAddress, &outl, ct.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            Int32(bodyLen)) == 1
                    else { return false }
                }
                let tag = UnsafeMutableRawPointer(mutating: ct.baseAddress! + bodyLen)
                guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(tagSize), tag) == 1 else { return false }
                var finl: Int32 = 0
                var scratch = ByteArrays.zeros(count: 32)
                return EVP_DecryptFinal_ex(ctx, &scratch, &finl) == 1
            }
        }
        ERR_clear_error()
        guard ok else {
            SecureBytes.cleanse(&out)
            throw .authenticationFailed
        }
        return out
    }

    private func initialize<K: ContiguousBytes, N: ContiguousBytes>(
        _ ctx: OpaquePointer, key: K, nonce: N, encrypt: Bool
    ) throws(CryptoError) {
        let ok: Bool = key.withUnsafeBytes { k in
            nonce.withUnsafeBytes { n in
                guard k.count == keySize, n.count == nonceSize else { return false }
                let kp = k.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let np = n.baseAddress!.assumingMemoryBound(to: UInt8.self)
                return encrypt
                    ? EVP_EncryptInit_ex2(ctx, cipher, kp, np, nil) == 1
                    : EVP_DecryptInit_ex2(ctx, cipher, kp, np, nil) == 1
            }
        }
        guard ok else {
            ERR_clear_error()
            throw .invalidLength
        }
    }

    private func feedAAD<A: ContiguousBytes>(_ ctx: OpaquePointer, aad: A) throws(CryptoError) {
        let ok: Bool = aad.withUnsafeBytes { a in
            guard a.count > 0 else { return true }
            var outl: Int32 = 0
            return EVP_CipherUpdate(ctx, nil, &outl, a.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(a.count))
                == 1
        }
        guard ok else { throw .operationFailed(operation: "aad") }
    }
}
