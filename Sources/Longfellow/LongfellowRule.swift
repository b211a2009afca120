import Presentment

/// The rules of the Longfellow prover: its library, its circuits and its limits.
public enum LongfellowRule: String, RefusalRule {
    case libraryMissing
    case libraryInsecure
    case libraryUnloadable
    case libraryDigest
    case libraryContract
    case circuitMissing
    case circuitDigest
    case circuitCorrupt
    case proverFailed
    case proverPanicked
    case busy
    case timeLimit

    /// The domain of these rules.
    public static let domain = "longfellow"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .libraryMissing: (.zkUnsupported, "no Longfellow prover library in the zero-knowledge directory")
        case .libraryInsecure:
            (.zkUnsupported, "the prover library or its directory is writable by group or others, or another user's")
        case .libraryUnloadable: (.zkUnsupported, "the prover library cannot be loaded")
        case .libraryDigest:
            (.zkUnsupported, "the prover library file's SHA-256 is not the pinned release's (zk-setup.sh installs it)")
        case .libraryContract:
            (.zkUnsupported, "the prover library's uniffi contract version or API checksums are not the pinned ones")
        case .circuitMissing: (.zkUnsupported, "the circuit file is missing or unreadable")
        case .circuitDigest: (.zkUnsupported, "the circuit file's SHA-256 is not the pinned one")
        case .circuitCorrupt: (.zkUnsupported, "the circuit file does not decompress to a circuit")
        case .proverFailed: (.zkUnsupported, "the prover refused the credential or failed")
        case .proverPanicked: (.zkUnsupported, "the prover library panicked")
        case .busy: (.limitExceeded, "every proof slot stayed busy for the whole time budget")
        case .timeLimit: (.limitExceeded, "the proof took longer than the configured time budget")
        }
    }
}
