internal import CryptoCore

/// The digests ISO 18013-5 structures use (MSO valueDigests, transcript hashes).
public enum MdocDigest {
    /// SHA-256.
    public static func sha256<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] {
        bytes.withContiguousStorageIfAvailable { DigestAlgorithm.sha256.hash(UnsafeRawBufferPointer($0)) }
            ?? DigestAlgorithm.sha256.hash(Array(bytes))
    }
    /// SHA-256 written into `out` (exactly 32 bytes); no allocation.
    public static func sha256(_ bytes: [UInt8], into out: UnsafeMutableRawBufferPointer) {
        DigestAlgorithm.sha256.hash(bytes, into: out)
    }
    /// SHA-384.
    public static func sha384<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] { DigestAlgorithm.sha384.hash(Array(bytes)) }
    /// SHA-512.
    public static func sha512<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] { DigestAlgorithm.sha512.hash(Array(bytes)) }
}
