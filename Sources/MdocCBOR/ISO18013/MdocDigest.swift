internal import CryptoCore

/// The digests ISO 18013-5 structures use (MSO valueDigests, transcript hashes).
public enum MdocDigest {
    /// SHA-256.
    public static func sha256<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] { DigestAlgorithm.sha256.hash(Array(bytes)) }
    /// SHA-384.
    public static func sha384<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] { DigestAlgorithm.sha384.hash(Array(bytes)) }
    /// SHA-512.
    public static func sha512<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] { DigestAlgorithm.sha512.hash(Array(bytes)) }
}
