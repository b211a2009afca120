#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import Dispatch
internal import CryptoCore
import MdocCBOR
import Presentment

/// Where the Longfellow library and circuits live: `lib/libzk_cred_longfellow.so` and
/// `circuits/<circuit_hash>` under one directory (what `scripts/zk-setup.sh` installs).
public struct LongfellowInstallation: Sendable, Hashable {
    /// The directory.
    public let directory: String
    /// The SHA-256 digests (lower-case hex) a library file must have to be loaded: the pinned release's
    /// (`LongfellowLibrary.pinnedSHA256`, which `scripts/zk-setup.sh` installs), or, for tests of the
    /// prover's failure paths, a stand-in's.
    package let acceptedLibraryDigests: [String]

    /// The file name of the library inside `lib/`.
    public static let libraryName = "libzk_cred_longfellow.so"
    /// The SHA-256 (lower-case hex) of the one library release loaded by default.
    package static var pinnedLibrarySHA256: String { LongfellowLibrary.pinnedSHA256 }

    /// An installation at `directory` (an absolute path); its library must be the pinned release.
    public init(directory: String) {
        self.directory = directory
        acceptedLibraryDigests = [LongfellowLibrary.pinnedSHA256]
    }

    /// An installation whose library may also be one of `digests` (tests of the prover's failure
    /// paths load stand-in libraries).
    package init(directory: String, acceptingLibraryDigestsForTesting digests: [String]) {
        self.directory = directory
        acceptedLibraryDigests = [LongfellowLibrary.pinnedSHA256] + digests
    }

    /// The default location: `$MDOC_ZK_DIR` when set, else `$XDG_DATA_HOME/mdoc-respond/zk`, else
    /// `~/.local/share/mdoc-respond/zk`; the environment is read once per process (reading it costs
    /// more than opening an engine otherwise does).
    public static var `default`: LongfellowInstallation { processDefault }
    private static let processDefault: LongfellowInstallation = {
        func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        if let dir = env("MDOC_ZK_DIR"), dir.hasPrefix("/") { return LongfellowInstallation(directory: dir) }
        let data =
            env("XDG_DATA_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (env("HOME") ?? getpwuid(geteuid()).map { String(cString: $0.pointee.pw_dir) } ?? "/") + "/.local/share"
        return LongfellowInstallation(directory: data + "/mdoc-respond/zk")
    }()

    var libraryPath: String { directory + "/lib/" + Self.libraryName }
    var circuitDirectory: String { directory + "/circuits" }

    /// Whether the library file is present (it may still fail its checks).
    public var hasLibrary: Bool { access(libraryPath, F_OK) == 0 }

    /// The circuits of the table whose files are present (their digests are checked when loaded).
    public var heldCircuits: [LongfellowCircuit] {
        LongfellowCircuit.table.filter { access(circuitDirectory + "/" + $0.circuitHash, R_OK) == 0 }
    }

    /// The largest library file read (the pinned release is 1.7 MB).
    static let maxLibraryBytes = 64 << 20

    /// Loads and checks the library by what it is, not where it lies: the file is opened once
    /// (`O_NOFOLLOW`), and on that descriptor checked to be a regular file owned by root or this user
    /// and writable by nobody else (its `lib/` directory likewise), read, and its SHA-256 compared with
    /// the pinned one; only then is that same descriptor loaded (`/proc/self/fd/N`), so a library
    /// swapped in after the check is never the one loaded, and an unpinned library's code (its
    /// constructors included) never runs. Its uniffi contract is checked after.
    /// - Throws: `LongfellowRule.libraryMissing`, `.libraryInsecure`, `.libraryDigest`,
    ///   `.libraryUnloadable`, `.libraryContract`.
    func loadLibrary() throws(PresentmentError) -> LongfellowLibrary {
        guard hasLibrary else { throw PresentmentError(LongfellowRule.libraryMissing) }
        var dst = stat()
        guard lstat(directory + "/lib", &dst) == 0, dst.st_mode & S_IFMT == S_IFDIR,
            dst.st_uid == 0 || dst.st_uid == geteuid(), dst.st_mode & 0o022 == 0
        else { throw PresentmentError(LongfellowRule.libraryInsecure) }
        let fd = open(libraryPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            throw PresentmentError(errno == ELOOP ? LongfellowRule.libraryInsecure : LongfellowRule.libraryMissing)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == 0 || st.st_uid == geteuid(),
            st.st_mode & 0o022 == 0
        else { throw PresentmentError(LongfellowRule.libraryInsecure) }
        guard st.st_size > 0, Int(st.st_size) <= Self.maxLibraryBytes else {
            throw PresentmentError(LongfellowRule.libraryDigest)
        }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + off, $0.count - off, off_t(off)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw PresentmentError(LongfellowRule.libraryUnloadable) }
            off += n
        }
        guard acceptedLibraryDigests.contains(hexString(DigestAlgorithm.sha256.hash(bytes))) else {
            throw PresentmentError(LongfellowRule.libraryDigest)
        }
        do { return try LongfellowLibrary(descriptor: fd) } catch {
            switch error {
            case .contractVersion, .checksum, .missingSymbol: throw PresentmentError(LongfellowRule.libraryContract)
            default: throw PresentmentError(LongfellowRule.libraryUnloadable)
            }
        }
    }
}

/// Longfellow proofs (`longfellow-libzk-v1`) through the ISRG library: the engine's
/// `ZeroKnowledgeProver`. The library is loaded on first use and its circuits when first needed (each
/// decompressed and turned into a prover once, then kept). At most `maxConcurrentProofs` proofs run at
/// once (a proof needs up to 0.8 GB); a proof that does not finish within `timeLimit` seconds, or that
/// waits that long for a slot, is refused and its output, if any, discarded.
public final class LongfellowProver: ZeroKnowledgeProver, @unchecked Sendable {
    // @unchecked: the mutable state is behind `state`'s lock; the library objects are thread-safe.
    public let installation: LongfellowInstallation
    public let maxConcurrentProofs: Int
    public let timeLimit: Double
    public var expectedProvingSeconds: Double { 4 }

    private let slots: DispatchSemaphore
    private let state = LockedValue<(library: LongfellowLibrary?, provers: [String: LongfellowLibrary.Object])>(
        (nil, [:]))

    /// A prover over `installation`, running at most `maxConcurrentProofs` proofs at once, each within
    /// `timeLimit` seconds (waiting for a slot included).
    public init(installation: LongfellowInstallation, maxConcurrentProofs: Int = 1, timeLimit: Double = 60) {
        self.installation = installation
        self.maxConcurrentProofs = max(1, maxConcurrentProofs)
        self.timeLimit = max(1, timeLimit)
        slots = DispatchSemaphore(value: self.maxConcurrentProofs)
    }

    /// The one prover of this process for `installation` with these limits: every engine configured
    /// alike shares it, so a circuit is loaded once per process (not once per engine; about 250 ms
    /// and 100 MB each), and `maxConcurrentProofs` bounds the proofs of all of them together.
    public static func shared(
        installation: LongfellowInstallation, maxConcurrentProofs: Int = 1, timeLimit: Double = 60
    ) -> LongfellowProver {
        let key = SharedKey(
            installation: installation, maxConcurrentProofs: max(1, maxConcurrentProofs),
            timeLimit: max(1, timeLimit))
        return sharedProvers.withLock { all in
            if let p = all[key] { return p }
            let p = LongfellowProver(
                installation: installation, maxConcurrentProofs: maxConcurrentProofs, timeLimit: timeLimit)
            all[key] = p
            return p
        }
    }

    private struct SharedKey: Hashable {
        let installation: LongfellowInstallation
        let maxConcurrentProofs: Int
        let timeLimit: Double
    }
    private static let sharedProvers = LockedValue<[SharedKey: LongfellowProver]>([:])

    /// The library, loaded once.
    private func library() throws(PresentmentError) -> LongfellowLibrary {
        if let l = state.withLock({ $0.library }) { return l }
        let loaded = try installation.loadLibrary()
        return state.withLock { s in
            if let l = s.library { return l }
            s.library = loaded
            return loaded
        }
    }

    /// `longfellow-libzk-v1`.
    public var systems: [String] { [LongfellowCircuit.system] }

    public func circuit(for specs: [ZkSystemSpec], claims: Int) -> ZkSystemSpec? {
        let held = installation.heldCircuits
        // The reader's specs whose circuit is held, preferring the newest version, then the reader's order.
        let matching = specs.enumerated().compactMap { (i, spec) -> (Int, Int, ZkSystemSpec)? in
            guard spec.attributeCount == claims, let c = held.first(where: { $0.matches(spec) }) else { return nil }
            return (c.version, i, spec)
        }
        return matching.sorted { $0.0 != $1.0 ? $0.0 > $1.0 : $0.1 < $1.1 }.first?.2
    }

    public func prove(_ input: ZkProofInput) throws(PresentmentError) -> [UInt8] {
        guard let circuit = LongfellowCircuit.table.first(where: { $0.matches(input.spec) }) else {
            throw PresentmentError(ZeroKnowledgeRule.noCircuit)
        }
        let deadline = DispatchTime.now() + timeLimit
        guard slots.wait(timeout: deadline) == .success else { throw PresentmentError(LongfellowRule.busy) }
        // The proof runs on its own thread so a proof that overruns the budget can be abandoned; it
        // keeps its slot until it ends, so abandoned proofs still count against the limit.
        let result = LockedValue<Result<[UInt8], PresentmentError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { [self] in
            defer {
                slots.signal()
                done.signal()
            }
            let r = Result { () throws(PresentmentError) -> [UInt8] in try proveNow(input, circuit) }
            result.withLock { $0 = r }
        }
        guard done.wait(timeout: deadline) == .success, let outcome = result.withLock({ $0 }) else {
            throw PresentmentError(LongfellowRule.timeLimit)
        }
        return try outcome.get()
    }

    /// Loads the library and `spec`'s circuit now (decompressed, checked and turned into a prover
    /// object) rather than at the first proof: a server warms up with it.
    /// - Throws: a `LongfellowRule` refusal, or `zk.noCircuit` for a spec naming no pinned circuit.
    public func prepare(_ spec: ZkSystemSpec) throws(PresentmentError) {
        guard let circuit = LongfellowCircuit.table.first(where: { $0.matches(spec) }) else {
            throw PresentmentError(ZeroKnowledgeRule.noCircuit)
        }
        _ = try prover(circuit, try library())
    }

    private func proveNow(_ input: ZkProofInput, _ circuit: LongfellowCircuit) throws(PresentmentError) -> [UInt8] {
        let lib = try library()
        let prover = try self.prover(circuit, lib)
        do {
            return try lib.prove(
                prover, deviceResponse: input.deviceResponse, nameSpace: input.nameSpace, claims: input.claims,
                sessionTranscript: input.sessionTranscript, time: input.time)
        } catch {
            throw PresentmentError(error == .panicked ? LongfellowRule.proverPanicked : .proverFailed)
        }
    }

    /// The prover object of `circuit`, made once.
    private func prover(_ circuit: LongfellowCircuit, _ lib: LongfellowLibrary) throws(PresentmentError)
        -> LongfellowLibrary.Object
    {
        if let p = state.withLock({ $0.provers[circuit.circuitHash] }) { return p }
        let bytes = try circuit.load(from: installation.circuitDirectory)
        let made: LongfellowLibrary.Object
        do { made = try lib.prover(circuit: bytes, version: circuit.version, attributes: circuit.attributes) } catch {
            throw PresentmentError(LongfellowRule.circuitCorrupt)
        }
        return state.withLock { s in
            if let p = s.provers[circuit.circuitHash] { return p }
            s.provers[circuit.circuitHash] = made
            return made
        }
    }
}

/// Verifies Longfellow proofs through the ISRG library: the verifier side (tests, the CLI's reader
/// commands, the demo), never used to answer.
public final class LongfellowVerifier: @unchecked Sendable {
    // @unchecked: the mutable state is behind its lock.
    public let installation: LongfellowInstallation
    private let state = LockedValue<(library: LongfellowLibrary?, verifiers: [String: LongfellowLibrary.Object])>(
        (nil, [:]))

    public init(installation: LongfellowInstallation) { self.installation = installation }

    /// Checks `proof` for `claims` (identifier, CBOR value) of `docType`, made with `circuitHash`'s
    /// circuit over `sessionTranscript` at `time`, by the holder of a credential the key
    /// `issuerPublicKey` (SEC1 uncompressed) signed; the device signed empty DeviceNameSpaces.
    /// - Throws: a `LongfellowRule` refusal (`proverFailed` when the proof does not verify).
    public func verify(
        proof: [UInt8], circuitHash: String, issuerPublicKey: [UInt8], docType: String,
        claims: [(identifier: String, value: [UInt8])], sessionTranscript: [UInt8], time: String
    ) throws(PresentmentError) {
        guard let circuit = LongfellowCircuit.table.first(where: { $0.circuitHash == circuitHash }) else {
            throw PresentmentError(ZeroKnowledgeRule.noCircuit)
        }
        let lib: LongfellowLibrary
        if let l = state.withLock({ $0.library }) {
            lib = l
        } else {
            lib = try installation.loadLibrary()
            state.withLock { $0.library = lib }
        }
        let verifier: LongfellowLibrary.Object
        if let v = state.withLock({ $0.verifiers[circuitHash] }) {
            verifier = v
        } else {
            let bytes = try circuit.load(from: installation.circuitDirectory)
            do {
                verifier = try lib.verifier(circuit: bytes, version: circuit.version, attributes: circuit.attributes)
            } catch { throw PresentmentError(LongfellowRule.circuitCorrupt) }
            state.withLock { $0.verifiers[circuitHash] = verifier }
        }
        do {
            try lib.verify(
                verifier, issuerPublicKey: issuerPublicKey, claims: claims, docType: docType,
                deviceNameSpacesBytes: [0xa0], sessionTranscript: sessionTranscript, time: time, proof: proof)
        } catch {
            throw PresentmentError(error == .panicked ? LongfellowRule.proverPanicked : .proverFailed)
        }
    }
}
