#if canImport(Glibc)
    import Glibc
#endif

/// The stages of one engine call, in the order they run.
public enum EngineStage: String, Sendable, Hashable, CaseIterable {
    /// Reading the Digital Credentials API framing and the origin (the facade).
    case read
    /// The front end's checks: the protocol's structures and bounds, every signature, the trust policy.
    case check
    /// Selecting credentials and planning the answer (`parse`: building the consent model).
    case plan
    /// Building the DeviceResponses: copying the issuer's items, the device signature, any proof.
    case build
    /// Encrypting and framing the answer (HPKE, JWE).
    case seal
}

/// Stage durations of one call, measured only when an observer is installed (nil: not measured).
/// One call, one thread: not shared.
@_spi(FrontEnd) public final class StageClock {
    /// When the clock started (monotonic seconds).
    public let start: Double
    @usableFromInline var last: Double
    /// Seconds per stage, in `EngineStage` order; nil for a stage that did not run.
    @usableFromInline var durations: (Double?, Double?, Double?, Double?, Double?) = (nil, nil, nil, nil, nil)

    /// A clock started now.
    public init() {
        start = StageClock.now()
        last = start
    }

    /// Ends `stage` now: the time since the previous mark (or the start) is added to it.
    @inlinable public func mark(_ stage: EngineStage) {
        let t = StageClock.now()
        let d = t - last
        switch stage {
        case .read: durations.0 = (durations.0 ?? 0) + d
        case .check: durations.1 = (durations.1 ?? 0) + d
        case .plan: durations.2 = (durations.2 ?? 0) + d
        case .build: durations.3 = (durations.3 ?? 0) + d
        case .seal: durations.4 = (durations.4 ?? 0) + d
        }
        last = t
    }

    /// The seconds each stage that ran took, in stage order.
    public var stages: [(EngineStage, Double)] {
        let (r, c, p, b, s) = durations
        return [(EngineStage.read, r), (.check, c), (.plan, p), (.build, b), (.seal, s)].compactMap { stage, d in
            d.map { (stage, $0) }
        }
    }

    /// The monotonic clock, in seconds.
    public static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
