@_spi(FrontEnd) import Presentment

/// One call of an engine (`accept`, `parse` or `respond`) as an observer sees it: what was called, in
/// which protocol, how it ended (the refusal's code and rule) and how long it took. Never request
/// content, element values, origins, credential identifiers, certificate subjects or keys: a wallet
/// backend's counters and timings, nothing it would have to protect.
public struct EngineEvent: Sendable, Hashable {
    /// Which call.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        case accept, parse, respond
    }

    /// The reader verdict's kind (no subject, no reason text).
    public enum ReaderStatus: String, Sendable, Hashable, CaseIterable {
        case notAuthenticated, trusted, signedNotTrusted

        init(_ v: ReaderVerdict) {
            switch v {
            case .notAuthenticated: self = .notAuthenticated
            case .trusted: self = .trusted
            case .signedNotTrusted: self = .signedNotTrusted
            }
        }
    }

    /// Which call.
    public let operation: Operation
    /// The protocol of the entry answered or parsed; nil when the call was refused before one was chosen.
    public let presentationProtocol: PresentationProtocol?
    /// The refusal's code and rule; nil when the call succeeded.
    public let code: PresentmentError.Code?
    public let rule: PresentmentError.Rule?
    /// The reader verdict's kind (parse and respond; nil for accept and for a call refused before it).
    public let readerStatus: ReaderStatus?
    /// The call's duration in seconds (monotonic clock).
    public let seconds: Double
    /// The seconds each stage that ran took (`EngineStage` order: read, check, plan, build, seal; a
    /// refused call lists the stages it finished). Their sum is `seconds` less the call's bookkeeping.
    public let stages: [StageDuration]

    /// One stage's duration.
    public struct StageDuration: Sendable, Hashable {
        public let stage: EngineStage
        public let seconds: Double
    }

    init(
        operation: Operation, presentationProtocol: PresentationProtocol?, code: PresentmentError.Code?,
        rule: PresentmentError.Rule?, readerStatus: ReaderStatus?, clock: StageClock
    ) {
        self.operation = operation
        self.presentationProtocol = presentationProtocol
        self.code = code
        self.rule = rule
        self.readerStatus = readerStatus
        stages = clock.stages.map { StageDuration(stage: $0.0, seconds: $0.1) }
        seconds = StageClock.now() - clock.start
    }

    /// The event as one JSON object (the C ABI's observer callback and Python's receive this):
    /// `{"operation", "protocol", "code", "rule", "readerVerdict", "seconds", "stages"}`, nulls where
    /// unknown; `stages` an object of the stages that ran, each stage's name to its seconds.
    public var json: String {
        func text(_ s: String?) -> String { s.map { "\"\($0)\"" } ?? "null" }
        // Every string here is a fixed name of this library's (no input text), so no escaping is needed.
        return "{\"operation\":\"\(operation.rawValue)\",\"protocol\":\(text(presentationProtocol?.rawValue)),"
            + "\"code\":\(text(code?.rawValue)),\"rule\":\(text(rule?.description)),"
            + "\"readerVerdict\":\(text(readerStatus?.rawValue)),\"seconds\":\(seconds),\"stages\":{"
            + stages.map { "\"\($0.stage.rawValue)\":\($0.seconds)" }.joined(separator: ",") + "}}"
    }
}

/// Receives an `EngineEvent` after every call of an engine configured with it
/// (`Configuration.observer`), on the calling thread, before the call returns. Keep it quick: the
/// caller waits. With no observer configured the engine measures nothing.
public protocol EngineObserver: Sendable {
    func observe(_ event: EngineEvent)
}
