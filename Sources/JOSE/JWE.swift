import CryptoCore
import WebEncoding

/// The content encryption algorithms (RFC 7518 §5.3): AES-GCM with a 96-bit IV and a 128-bit tag.
package enum JWEEncryption: String, Sendable, Hashable, CaseIterable {
    case a128gcm = "A128GCM"
    case a256gcm = "A256GCM"

    /// The AEAD.
    var aead: AEADAlgorithm { self == .a128gcm ? .aes128gcm : .aes256gcm }
    /// The content-encryption key length in bytes.
    package var keySize: Int { aead.keySize }
}

/// JWE in the compact serialization (RFC 7516) with `alg` `ECDH-ES` (direct key agreement, RFC 7518
/// §4.6) to an EC key: the content-encryption key is the Concat KDF of the ECDH secret, the encrypted
/// key is empty, the IV is 96 random bits and the AAD is the ASCII of the encoded protected header.
package enum JWE {
    /// The Concat KDF of RFC 7518 §4.6.2 (NIST SP 800-56A §5.8.1) with SHA-256: rounds of
    /// `SHA-256(counter ‖ Z ‖ OtherInfo)`, `OtherInfo = AlgorithmID ‖ PartyUInfo ‖ PartyVInfo ‖
    /// SuppPubInfo`, each of the first three a 32-bit big-endian length and its bytes, SuppPubInfo the
    /// key length in bits (32-bit big-endian).
    package static func concatKDF(
        sharedSecret z: [UInt8], keyLength: Int, algorithmID: String, partyUInfo: [UInt8], partyVInfo: [UInt8]
    ) -> [UInt8] {
        var key = [UInt8](repeating: 0, count: max(keyLength, 0))
        z.withUnsafeBytes { z in
            key.withUnsafeMutableBytes {
                concatKDF(
                    sharedSecret: z, algorithmID: algorithmID, partyUInfo: partyUInfo, partyVInfo: partyVInfo, into: $0)
            }
        }
        return key
    }

    /// The Concat KDF as above, writing `key.count` bytes of key into `key`. A round's input,
    /// `counter ‖ Z ‖ OtherInfo`, is built once in a scratch buffer (on the stack for the usual sizes)
    /// and rewritten by its counter; each round hashes straight into the key, the last partial one
    /// through a 32-byte scratch block. Both scratch buffers are cleansed.
    package static func concatKDF(
        sharedSecret z: UnsafeRawBufferPointer, algorithmID: String, partyUInfo: [UInt8], partyVInfo: [UInt8],
        into key: UnsafeMutableRawBufferPointer
    ) {
        var algorithm = algorithmID
        algorithm.withUTF8 { algorithm in
            let count = 4 + z.count + 4 + algorithm.count + 4 + partyUInfo.count + 4 + partyVInfo.count + 4
            withUnsafeTemporaryAllocation(byteCount: count + 32, alignment: 1) { scratch in
                let round = UnsafeMutableRawBufferPointer(rebasing: scratch[..<count])
                let block = UnsafeMutableRawBufferPointer(rebasing: scratch[count...])
                // Each write returns the offset after it (no offset variable captured by the writers:
                // a captured one is checked for exclusive access at run time on every write).
                func put32(_ n: Int, at o: Int) -> Int {
                    round.storeBytes(of: UInt32(truncatingIfNeeded: n).bigEndian, toByteOffset: o, as: UInt32.self)
                    return o + 4
                }
                func put(_ bytes: UnsafeRawBufferPointer, at o: Int) -> Int {
                    if !bytes.isEmpty {
                        (round.baseAddress! + o).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                    }
                    return o + bytes.count
                }
                let afterZ = put(z, at: 4)
                let afterAlgorithm = put(UnsafeRawBufferPointer(algorithm), at: put32(algorithm.count, at: afterZ))
                let afterU = partyUInfo.withUnsafeBytes { put($0, at: put32(partyUInfo.count, at: afterAlgorithm)) }
                let afterV = partyVInfo.withUnsafeBytes { put($0, at: put32(partyVInfo.count, at: afterU)) }
                _ = put32(key.count * 8, at: afterV)
                var done = 0
                var counter = 1
                while done < key.count {
                    round.storeBytes(
                        of: UInt32(truncatingIfNeeded: counter).bigEndian, toByteOffset: 0, as: UInt32.self)
                    let input = UnsafeRawBufferPointer(round)
                    if key.count - done >= 32 {
                        DigestAlgorithm.sha256.hash(
                            input, into: UnsafeMutableRawBufferPointer(rebasing: key[done..<(done + 32)]))
                        done += 32
                    } else {
                        DigestAlgorithm.sha256.hash(input, into: block)
                        (key.baseAddress! + done).copyMemory(from: block.baseAddress!, byteCount: key.count - done)
                        done = key.count
                    }
                    counter += 1
                }
                SecureBytes.cleanse(scratch)
            }
        }
    }

    /// Encrypts `plaintext` to `recipient` (an EC key on P-256, P-384 or P-521).
    /// - Parameters:
    ///   - encryption: A128GCM or A256GCM.
    ///   - keyID: written as `kid` when given (the recipient JWK's `kid`).
    ///   - partyUInfo / partyVInfo: `apu` / `apv`, written and used in the KDF when non-empty.
    ///   - ephemeralKey / iv: fixed values for known-answer tests; fresh ones otherwise.
    /// - Returns: the compact serialization; the protected header's members are `alg`, `enc`, `kid`
    ///   (when given), `epk`, then `apu` / `apv` (when given), in that order.
    package static func encrypt(
        _ plaintext: [UInt8], to recipient: JWK, encryption: JWEEncryption, keyID: String? = nil,
        partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = [], ephemeralKey: PrivateKey? = nil, iv fixedIV: [UInt8]? = nil
    ) throws(JOSEError) -> String {
        var out = [UInt8]()
        let result: Result<Void, JOSEError> = plaintext.withUnsafeBytes { pt in
            Result { () throws(JOSEError) in
                try encrypt(
                    pt, to: recipient, encryption: encryption, keyID: keyID, partyUInfo: partyUInfo,
                    partyVInfo: partyVInfo, ephemeralKey: ephemeralKey, iv: fixedIV, appendingTo: &out)
            }
        }
        try result.get()
        return String(decoding: out, as: UTF8.self)
    }

    /// `encrypt(_:to:…)` appending the compact serialization to `output`.
    package static func encrypt(
        _ plaintext: UnsafeRawBufferPointer, to recipient: JWK, encryption: JWEEncryption, keyID: String? = nil,
        partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = [], ephemeralKey: PrivateKey? = nil, iv fixedIV: [UInt8]? = nil,
        appendingTo output: inout [UInt8]
    ) throws(JOSEError) {
        let sealer = try JWESealer(
            to: recipient, encryption: encryption, keyID: keyID, partyUInfo: partyUInfo, partyVInfo: partyVInfo,
            ephemeralKey: ephemeralKey, iv: fixedIV)
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: sealer.compactLength(plaintextCount: plaintext.count)))
        let result: Result<Void, JOSEError> = output.withUnsafeMutableBytes { out in
            Result { () throws(JOSEError) in
                try sealer.seal(plaintext, into: UnsafeMutableRawBufferPointer(rebasing: out[start...]))
            }
        }
        if case .failure(let error) = result {
            output.removeSubrange(start...)
            throw error
        }
    }

    /// Decrypts a compact JWE made with `ECDH-ES` and A128GCM / A256GCM to `key`.
    /// - Returns: the protected header and the plaintext.
    /// - Throws: `malformed` for a wrong shape (five segments, an empty encrypted key, a 96-bit IV, a
    ///   128-bit tag, a JSON header with `epk`), `unsupportedAlgorithm` for another `alg`/`enc` or a
    ///   `zip`, `unsupportedCritical` for `crit`, `invalidKey` for an `epk` not on the key's curve,
    ///   `decryptionFailed` when the tag does not verify.
    package static func decrypt(_ compact: String, with key: PrivateKey, limits: JOSELimits = JOSELimits())
        throws(JOSEError) -> (header: JSONValue, plaintext: [UInt8])
    {
        try decrypt(compact, limits: limits) { (epk) throws(JOSEError) -> [UInt8] in
            guard case .ec(let c) = key.kind, c == epk.curve.curve else {
                throw JOSEError(.invalidKey, "JWE epk is not on the recipient key's curve")
            }
            do { return try key.sharedSecret(with: epk.publicKey) } catch {
                throw JOSEError(.invalidKey, "key agreement failed")
            }
        }
    }

    /// `decrypt(_:with:)` with the ECDH secret computed by `agreement` from the header's `epk` (a
    /// sender that kept its ephemeral key can read back what it encrypted: tests, the fuzzer).
    package static func decrypt(
        _ compact: String, limits: JOSELimits = JOSELimits(), agreement: (JWK) throws(JOSEError) -> [UInt8]
    ) throws(JOSEError) -> (header: JSONValue, plaintext: [UInt8]) {
        guard compact.utf8.count <= limits.maxBytes else { throw JOSEError(.malformed, "JWE larger than the limit") }
        let parts = compact.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard parts.count == 5 else { throw JOSEError(.malformed, "JWE is not five segments") }
        guard parts[1].isEmpty else { throw JOSEError(.malformed, "JWE encrypted key is not empty (ECDH-ES)") }
        guard let headerBytes = Base64URL.decode(parts[0]), let iv = Base64URL.decode(parts[2]),
            let ct = Base64URL.decode(parts[3]), let tag = Base64URL.decode(parts[4])
        else { throw JOSEError(.malformed, "JWE segment is not base64url") }
        guard iv.count == 12, tag.count == 16 else { throw JOSEError(.malformed, "JWE IV or tag of the wrong size") }
        let header: JSONValue
        do {
            header = try JSONValue.parse(
                headerBytes,
                limits: .init(
                    maxBytes: limits.maxBytes, maxDepth: limits.headerDepth, maxMembers: limits.headerMembers,
                    maxStringBytes: limits.maxBytes))
        } catch { throw JOSEError(.malformed, "JWE header: \(error.what)") }
        guard case .object = header else { throw JOSEError(.malformed, "JWE header is not a JSON object") }
        guard header["alg"]?.string == "ECDH-ES" else {
            throw JOSEError(.unsupportedAlgorithm, "JWE alg is not ECDH-ES")
        }
        guard let encName = header["enc"]?.string, let enc = JWEEncryption(rawValue: encName) else {
            throw JOSEError(.unsupportedAlgorithm, "JWE enc is not A128GCM or A256GCM")
        }
        guard header["zip"] == nil else { throw JOSEError(.unsupportedAlgorithm, "JWE zip is not supported") }
        guard header["crit"] == nil else {
            throw JOSEError(.unsupportedCritical, "JWE crit names a parameter not understood")
        }
        guard let epkJSON = header["epk"] else { throw JOSEError(.malformed, "JWE epk missing") }
        let epk = try JWK(epkJSON)
        func party(_ name: String) throws(JOSEError) -> [UInt8] {
            guard let v = header[name] else { return [] }
            guard let s = v.string, let b = Base64URL.decode(s) else {
                throw JOSEError(.malformed, "JWE \(name) is not base64url")
            }
            return b
        }
        let apu = try party("apu")
        let apv = try party("apv")
        var z = try agreement(epk)
        defer { SecureBytes.cleanse(&z) }
        var cek = concatKDF(
            sharedSecret: z, keyLength: enc.keySize, algorithmID: enc.rawValue, partyUInfo: apu, partyVInfo: apv)
        defer { SecureBytes.cleanse(&cek) }
        do {
            let plaintext = try enc.aead.open(key: cek, nonce: iv, ciphertext: ct + tag, aad: Array(parts[0].utf8))
            return (header, plaintext)
        } catch { throw JOSEError(.decryptionFailed, "JWE does not decrypt") }
    }
}

/// One JWE (`ECDH-ES`, compact serialization) prepared for its plaintext: the key agreed, the content
/// key derived, the protected header written and the IV drawn. The serialization's length is known
/// before anything is encrypted (`compactLength(plaintextCount:)`), so a caller writes it straight into
/// the buffer it returns. The content key is cleansed when the sealer goes away.
package struct JWESealer: ~Copyable {
    /// The protected header's JSON; its base64url encoding is the first segment and the AAD, written
    /// straight into the output (no encoded copy kept).
    private let header: [UInt8]
    /// The length of the first segment.
    private var encodedHeaderCount: Int { Base64URL.encodedLength(header.count) }
    private let iv: [UInt8]
    private let aead: AEADAlgorithm
    /// The content-encryption key, in a buffer of its own so that `deinit` can cleanse it.
    private let cek: UnsafeMutableRawBufferPointer

    /// Agrees a key with `recipient` (an EC key on P-256, P-384 or P-521) and writes the header.
    /// - Parameters:
    ///   - encryption: A128GCM or A256GCM.
    ///   - keyID: written as `kid` when given (the recipient JWK's `kid`).
    ///   - partyUInfo / partyVInfo: `apu` / `apv`, written and used in the KDF when non-empty.
    ///   - ephemeralKey / iv: fixed values for known-answer tests; fresh ones otherwise.
    /// - Throws: `JOSEError.invalidKey` when the agreement or the random IV fails, `malformed` for a
    ///   fixed IV that is not 96 bits. The header's members are `alg`, `enc`, `kid` (when given), `epk`,
    ///   then `apu` / `apv` (when given), in that order.
    package init(
        to recipient: JWK, encryption: JWEEncryption, keyID: String? = nil, partyUInfo: [UInt8] = [],
        partyVInfo: [UInt8] = [], ephemeralKey: PrivateKey? = nil, iv fixedIV: [UInt8]? = nil
    ) throws(JOSEError) {
        let curve = recipient.curve.curve
        let epk: PrivateKey
        var z: [UInt8]
        do {
            epk = try ephemeralKey ?? PrivateKey.generateForAgreement(.ec(curve))
            z = try epk.sharedSecret(with: recipient.publicKey)
        } catch { throw JOSEError(.invalidKey, "key agreement failed") }
        defer { SecureBytes.cleanse(&z) }
        guard case .ec(let c) = epk.kind, c == curve else { throw JOSEError(.invalidKey, "ephemeral key curve") }
        // {"alg":"ECDH-ES","enc":…,"kid":…,"epk":{"kty":"EC","crv":…,"x":…,"y":…},"apu":…,"apv":…}
        var header = JSONWriter(capacity: 512)
        switch encryption {
        case .a128gcm: header.writeRaw("{\"alg\":\"ECDH-ES\",\"enc\":\"A128GCM\"")
        case .a256gcm: header.writeRaw("{\"alg\":\"ECDH-ES\",\"enc\":\"A256GCM\"")
        }
        if let keyID {
            header.writeRaw(",\"kid\":")
            header.writeString(keyID)
        }
        header.writeRaw(",\"epk\":")
        try JWK.writePublicMembers(of: epk.publicKey, into: &header)
        if !partyUInfo.isEmpty {
            header.writeRaw(",\"apu\":")
            header.writeBase64URLString(partyUInfo)
        }
        if !partyVInfo.isEmpty {
            header.writeRaw(",\"apv\":")
            header.writeBase64URLString(partyVInfo)
        }
        header.writeRaw("}")
        let iv: [UInt8]
        do { iv = try fixedIV ?? SecureBytes.random(count: 12) } catch {
            throw JOSEError(.invalidKey, "random IV failed")
        }
        guard iv.count == 12 else { throw JOSEError(.malformed, "IV is not 96 bits") }
        // The content key derived straight into the buffer the sealer keeps (and cleanses).
        let cek = UnsafeMutableRawBufferPointer.allocate(byteCount: encryption.keySize, alignment: 1)
        z.withUnsafeBytes {
            JWE.concatKDF(
                sharedSecret: $0, algorithmID: encryption.rawValue, partyUInfo: partyUInfo, partyVInfo: partyVInfo,
                into: cek)
        }
        self.header = header.bytes
        self.iv = iv
        self.aead = encryption.aead
        self.cek = cek
    }

    deinit {
        SecureBytes.cleanse(cek)
        cek.deallocate()
    }

    /// The length in bytes of the compact serialization of a `plaintextCount`-byte plaintext:
    /// header "." "" "." IV "." ciphertext "." tag, each segment base64url without padding.
    package func compactLength(plaintextCount: Int) -> Int {
        encodedHeaderCount + 2 + Base64URL.encodedLength(12) + 1 + Base64URL.encodedLength(plaintextCount) + 1
            + Base64URL.encodedLength(aead.tagSize)
    }

    /// Encrypts `plaintext` and writes the compact serialization into `output`, which must hold exactly
    /// `compactLength(plaintextCount: plaintext.count)` bytes (the caller owns the buffer).
    /// - Throws: `JOSEError.invalidKey` when the cipher fails (nothing usable is left in `output`).
    package func seal(_ plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)
        throws(JOSEError)
    {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: plaintext.count, alignment: 1)
        defer { scratch.deallocate() }
        if !plaintext.isEmpty { scratch.copyMemory(from: plaintext) }
        try seal(inPlace: scratch, into: output)
    }

    /// `seal(_:into:)` for a plaintext in a buffer the caller gives up: it is encrypted where it is
    /// (its bytes are the ciphertext afterwards), so no second buffer of its size is made.
    package func seal(inPlace plaintext: UnsafeMutableRawBufferPointer, into output: UnsafeMutableRawBufferPointer)
        throws(JOSEError)
    {
        precondition(output.count == compactLength(plaintextCount: plaintext.count), "JWE output length")
        let o = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var k = encodedHeaderCount
        header.withUnsafeBytes { Base64URL.encode($0, into: o) }
        o[k] = UInt8(ascii: ".")
        o[k + 1] = UInt8(ascii: ".")
        k += 2
        iv.withUnsafeBytes { Base64URL.encode($0, into: o + k) }
        k += Base64URL.encodedLength(iv.count)
        o[k] = UInt8(ascii: ".")
        k += 1
        let tagAt = k + Base64URL.encodedLength(plaintext.count) + 1
        try withUnsafeTemporaryAllocation(byteCount: aead.tagSize, alignment: 1) { (tag) throws(JOSEError) in
            // The AAD is the protected header's ASCII, already at the start of the output.
            do {
                try aead.seal(
                    key: UnsafeRawBufferPointer(cek), nonce: iv, inPlace: plaintext,
                    aad: UnsafeRawBufferPointer(rebasing: output[..<encodedHeaderCount]), tag: tag)
            } catch {
                throw JOSEError(.invalidKey, "content encryption failed")
            }
            Base64URL.encode(UnsafeRawBufferPointer(tag), into: o + tagAt)
        }
        Base64URL.encode(UnsafeRawBufferPointer(plaintext), into: o + k)
        o[tagAt - 1] = UInt8(ascii: ".")
    }
}
