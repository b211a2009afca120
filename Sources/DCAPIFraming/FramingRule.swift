import Presentment

/// The rules of the Digital Credentials API framings a request arrives in: the JSON envelope read
/// once (`{"digital": {"requests": [...]}}`, `{"requests": [...]}`, `{"protocol", "data"}` or a bare
/// `data` object) and each entry's `data` member.
public enum FramingRule: String, RefusalRule {
    /// Request larger than the configured maximum.
    case tooLarge
    /// The request is not strict JSON within the envelope's bounds.
    case json
    /// Request is not a JSON object.
    case notObject
    /// Digital is not an object.
    case digitalNotObject
    /// Requests is not an array.
    case requestsNotArray
    /// No recognised request framing.
    case noFraming
    /// No entry of a protocol this engine answers.
    case noEntry
    /// The entry lacks data.
    case dataMissing
    /// Data string is not JSON.
    case dataNotJSON
    /// Data is not a JSON object.
    case dataNotObject

    /// The domain of these rules.
    public static let domain = "framing"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .tooLarge: .limitExceeded
        case .json, .notObject, .digitalNotObject, .requestsNotArray, .noFraming, .dataMissing, .dataNotJSON,
            .dataNotObject:
            .malformedRequest
        case .noEntry: .unsupportedProtocol
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .tooLarge: "request larger than the configured maximum"
        case .json: "the request is not strict JSON within the envelope's bounds"
        case .notObject: "request is not a JSON object"
        case .digitalNotObject: "digital is not an object"
        case .requestsNotArray: "requests is not an array"
        case .noFraming: "no recognised request framing"
        case .noEntry: "no entry of a protocol this engine answers"
        case .dataMissing: "the entry lacks data"
        case .dataNotJSON: "data string is not JSON"
        case .dataNotObject: "data is not a JSON object"
        }
    }
}
