import AnnexC
import OpenID4VP
import Longfellow
import Presentment

/// The Digital Credentials API protocols this engine answers, one front end each.
public enum PresentationProtocol: String, Sendable, Hashable, CaseIterable {
    /// ISO/IEC 18013-7 Annex C, `org-iso-mdoc`.
    case annexC
    /// OpenID4VP 1.0 over the Digital Credentials API, `openid4vp-v1-unsigned`, `-signed`, `-multisigned`.
    case openID4VP
}

extension DigitalCredentialsEngine {
    /// Which protocol answers when a page offers several.
    public enum Preference: String, Sendable, Hashable, CaseIterable {
        /// The one that can be answered; Annex C first when both can (the default).
        case answerable
        /// Annex C whenever the request has an `org-iso-mdoc` entry.
        case annexC
        /// OpenID4VP whenever the request has an `openid4vp-v1-*` entry.
        case openID4VP

        /// The protocol considered first (nil: registration order, `.answerable`).
        var preferred: PresentationProtocol? { PresentationProtocol(rawValue: rawValue) }
    }

    /// The engine's one configuration: the settings every protocol shares (`shared`, read and written
    /// directly: `configuration.clock`, `configuration.readerTrust`, `configuration.limits`), which
    /// protocols answer and in which order, and each protocol's own few settings. Every field has a
    /// safe default, so `Configuration()` is a valid wallet setup. The C ABI's configuration JSON, the
    /// CLI's options and the Python binding's `config` map onto it one to one.
    @dynamicMemberLookup
    public struct Configuration: Sendable {
        /// The settings every protocol shares (clock, origins, request bounds, self-check, reader-trust
        /// policy, error disclosure).
        public var shared: EngineConfiguration
        /// The protocols that may answer (default: every one). An entry of another protocol is treated
        /// as absent.
        public var protocols: Set<PresentationProtocol>
        /// Which protocol answers when a page offers several (default `.answerable`).
        public var preference: Preference
        /// Annex C's own settings (legacy identifier, elements not held, CBOR bounds, alternative sets).
        public var annexC: AnnexCSettings
        /// OpenID4VP's own settings (preferred content encryption).
        public var openID4VP: OpenID4VPSettings
        /// Receives counts and timings of every call, never content (`EngineObserver`); nil (the default):
        /// nothing is measured.
        public var observer: (any EngineObserver)?

        /// A configuration; every argument has a safe default. By default zero-knowledge proofs are made
        /// with the Longfellow prover installed at `LongfellowInstallation.default` (`scripts/zk-setup.sh`),
        /// when it is there.
        public init(
            _ shared: EngineConfiguration = EngineConfiguration(zeroKnowledge: .longfellow()),
            protocols: Set<PresentationProtocol> = Set(PresentationProtocol.allCases),
            preference: Preference = .answerable,
            annexC: AnnexCSettings = AnnexCSettings(), openID4VP: OpenID4VPSettings = OpenID4VPSettings()
        ) {
            self.shared = shared
            self.protocols = protocols
            self.preference = preference
            self.annexC = annexC
            self.openID4VP = openID4VP
        }

        /// The reader-trust policy an engine with this configuration holds over `context`: the fixed
        /// replacement, else the stored policy as the configuration narrows it; nil when neither applies
        /// (the stored policy as it is).
        /// - Throws: `context.configurationWidensStore` when the narrowing would widen it.
        package func readerTrustInForce(over context: CredentialContext) throws(PresentmentError) -> ReaderTrustPolicy?
        {
            if let fixed = shared.readerTrust { return fixed }
            guard let narrow = shared.readerTrustOverStore else { return nil }
            return try narrow(context.readerTrust)
        }

        /// A shared setting (`clock`, `allowAppOrigins`, `limits`, `selfCheck`, `readerTrust`,
        /// `errorDisclosure`), read and written as if it were the configuration's own.
        public subscript<T>(dynamicMember key: WritableKeyPath<EngineConfiguration, T>) -> T {
            get { shared[keyPath: key] }
            set { shared[keyPath: key] = newValue }
        }
    }
}

extension ZeroKnowledgeSettings {
    /// Proofs through the Longfellow prover of `installation` (default: `$MDOC_ZK_DIR`, else
    /// `${XDG_DATA_HOME:-~/.local/share}/mdoc-respond/zk`), at most `maxConcurrentProofs` at once, each
    /// within `timeLimit` seconds, through the process's one prover for these values
    /// (`LongfellowProver.shared`: every engine configured alike shares its loaded circuits and its
    /// limit); no prover when the installation has no library (a required proof is
    /// then refused `zk.noProver`, never answered in plain).
    public static func longfellow(
        _ installation: LongfellowInstallation = .default, maxConcurrentProofs: Int = 1, timeLimit: Double = 60,
        maxProofsPerResponse: Int = 1
    ) -> ZeroKnowledgeSettings {
        ZeroKnowledgeSettings(
            prover: installation.hasLibrary
                ? LongfellowProver.shared(
                    installation: installation, maxConcurrentProofs: maxConcurrentProofs, timeLimit: timeLimit)
                : nil,
            maxProofsPerResponse: maxProofsPerResponse)
    }
}
