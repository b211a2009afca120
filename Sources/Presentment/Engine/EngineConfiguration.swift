#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The settings every protocol shares: the clock, which origins are accepted, the request bounds, the
/// self-check, the reader-trust policy and what refusals disclose. Every field has a safe default, so
/// `EngineConfiguration()` is a valid wallet setup. A wallet backend sets these through
/// `DigitalCredentialsEngine.Configuration` (which adds each protocol's own few settings).
public struct EngineConfiguration: Sendable {
    /// The clock for credential validity (MSO `validFrom`/`validUntil`) and reader certificate checks.
    /// Anything but the system's time is for testing: set `clockFixedForTesting` with it (the consent
    /// model then shows the engine's time; it does so anyway when the clock is more than
    /// `PresentmentRequest.clockTolerance` away from the system's).
    public var clock: @Sendable () -> Date
    /// Whether `clock` is a time fixed for testing (the configuration JSON's `clock`, which needs
    /// `"testing": true`; the CLI's `--clock`): the consent model shows it (`fixedClock`).
    public var clockFixedForTesting = false
    /// Accept `android:apk-key-hash:` app origins (Android native callers); default false.
    public var allowAppOrigins: Bool
    /// The bounds every request is held to before anything is built from it.
    public var limits: RequestLimits
    /// Re-verify every DeviceResponse before it leaves (the released digests against the MSO and the
    /// device signature against the MSO device key: one ECDSA verification per document); a failure is
    /// `selfCheckFailed`. Default false.
    public var selfCheck: Bool
    /// The reader-trust policy (trust anchors, allowed authorities, requirements, signer profile) used
    /// for every protocol; nil (the default) uses the policy stored in the credential context, the
    /// holder's own.
    public var readerTrust: ReaderTrustPolicy?
    /// What a refusal says about the holder's credentials (default `.exact`).
    public var errorDisclosure: ErrorDisclosure
    /// Narrows the policy stored in the context, applied to it as it is at each call (the
    /// configuration JSON's trust members without `replacePolicy`); throws while it would widen it.
    /// Ignored when `readerTrust` is set.
    package var readerTrustOverStore: (@Sendable (ReaderTrustPolicy) throws(PresentmentError) -> ReaderTrustPolicy)?
    /// Zero-knowledge answers: the prover (none by default: a required proof is then refused) and
    /// how many proofs one response may carry.
    public var zeroKnowledge: ZeroKnowledgeSettings

    /// A configuration with safe defaults.
    public init(
        clock: @escaping @Sendable () -> Date = { Date() }, allowAppOrigins: Bool = false,
        limits: RequestLimits = RequestLimits(), selfCheck: Bool = false, readerTrust: ReaderTrustPolicy? = nil,
        errorDisclosure: ErrorDisclosure = .exact, zeroKnowledge: ZeroKnowledgeSettings = ZeroKnowledgeSettings()
    ) {
        self.zeroKnowledge = zeroKnowledge
        self.clock = clock
        self.allowAppOrigins = allowAppOrigins
        self.limits = limits
        self.selfCheck = selfCheck
        self.readerTrust = readerTrust
        self.errorDisclosure = errorDisclosure
    }
}

/// The bounds every protocol holds a request to; a request beyond one is refused with
/// `limitExceeded` before anything is allocated for it. (Each front end adds bounds of its own
/// encoding: Annex C's CBOR depth and item count, for instance.)
public struct RequestLimits: Sendable, Hashable {
    /// The largest raw request accepted, in bytes (default 256 KiB; signed requests carry certificate
    /// chains).
    public var maxRequestBytes: Int
    /// The most documents one request may ask for: DocRequests (Annex C) or credential queries
    /// (OpenID4VP DCQL); default 16.
    public var maxDocuments: Int
    /// The most element references one request may name across its documents: requested elements,
    /// alternative elements (Annex C 1.1) and claims (DCQL); default 1024.
    public var maxRequestedElements: Int

    /// Bounds with the defaults.
    public init(maxRequestBytes: Int = 256 << 10, maxDocuments: Int = 16, maxRequestedElements: Int = 1024) {
        self.maxRequestBytes = maxRequestBytes
        self.maxDocuments = maxDocuments
        self.maxRequestedElements = maxRequestedElements
    }
}

/// What a refusal tells the caller about the holder's credentials. A wallet backend that forwards the
/// engine's codes to the requesting page (directly, or as the OpenID4VP error object) chooses here
/// whether the page may tell "this wallet holds no such credential" from "the holder declined".
public enum ErrorDisclosure: String, Sendable, Hashable, CaseIterable {
    /// Every refusal as the rule that made it (the default): `noMatchingCredential` when no usable
    /// credential of a requested docType is stored, `cannotSatisfyRequest` when the holder's approval
    /// or the request's combination rules leave nothing to answer.
    case exact
    /// Every refusal of selection (`noMatchingCredential`, `cannotSatisfyRequest`) as the one refusal
    /// `cannotSatisfyRequest` (`SelectionRule.notAnswered`), with no underlying error: the code no
    /// longer says whether the holder has a credential of the requested kind. Other refusals are
    /// unchanged.
    case uniform

    /// `error` as this policy discloses it.
    package func disclose(_ error: PresentmentError) -> PresentmentError {
        guard self == .uniform, error.code == .noMatchingCredential || error.code == .cannotSatisfyRequest else {
            return error
        }
        return PresentmentError(SelectionRule.notAnswered)
    }
}

/// How proof requests are answered.
public struct ZeroKnowledgeSettings: Sendable {
    /// The prover; nil: no proofs (a document that requires one is refused `zk.noProver`).
    public var prover: (any ZeroKnowledgeProver)?
    /// The most proofs one response carries (default 1: a proof takes seconds and up to 0.8 GB); more
    /// documents to prove are refused `zk.tooManyProofs`.
    public var maxProofsPerResponse: Int

    /// Settings with the defaults (no prover, one proof per response).
    public init(prover: (any ZeroKnowledgeProver)? = nil, maxProofsPerResponse: Int = 1) {
        self.prover = prover
        self.maxProofsPerResponse = maxProofsPerResponse
    }
}
