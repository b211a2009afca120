import Presentment

/// The rules of the Digital Credentials API framings a request arrives in: the JSON envelope read
/// once (`{"digital": {"requests": [...]}}`, `{"requests": [...]}`, `{"protocol", "data"}` or a bare
/// `data` object) and each entry's `data` member.
public enum FramingRule: String, RefusalRule {
    case tooLarge
    case json
    case notObject
    case digitalNotObject
    case requestsNotArray
    case noFraming
    case noEntry
    case dataMissing
    case dataNotJSON
    case dataNotObject

    /// The domain of these rules.
    public static let domain = "framing"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .tooLarge: (.limitExceeded, "request larger than the configured maximum")
        case .json: (.malformedRequest, "the request is not strict JSON within the envelope's bounds")
        case .notObject: (.malformedRequest, "request is not a JSON object")
        case .digitalNotObject: (.malformedRequest, "digital is not an object")
        case .requestsNotArray: (.malformedRequest, "requests is not an array")
        case .noFraming: (.malformedRequest, "no recognised request framing")
        case .noEntry: (.unsupportedProtocol, "no entry of a protocol this engine answers")
        case .dataMissing: (.malformedRequest, "the entry lacks data")
        case .dataNotJSON: (.malformedRequest, "data string is not JSON")
        case .dataNotObject: (.malformedRequest, "data is not a JSON object")
        }
    }
}
