/// The rules a requesting origin is read by (WHATWG URL serialization, `Origin.init`).
public enum OriginRule: String, RefusalRule {
    case empty
    case tooLong
    case characters
    case appOriginsDisabled
    case appHashNotBase64
    case scheme
    case noScheme
    case query
    case fragment
    case path
    case noHost
    case userinfo
    case backslash
    case ipv6Unterminated
    case ipv6Invalid
    case ipv6Trailing
    case hostCharacters
    case hostEmptyLabel
    case hostLength
    case hostNumberNotIPv4
    case port

    /// The domain of these rules.
    public static let domain = "origin"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .empty: (.missingOrigin, "origin is empty")
        case .tooLong: (.invalidOrigin, "origin longer than 2048 bytes")
        case .characters: (.invalidOrigin, "origin contains whitespace, control or non-ASCII characters")
        case .appOriginsDisabled: (.invalidOrigin, "app origins are not enabled")
        case .appHashNotBase64: (.invalidOrigin, "app origin hash is not base64")
        case .scheme: (.invalidOrigin, "origin scheme is not http or https")
        case .noScheme: (.invalidOrigin, "origin has no http or https scheme")
        case .query: (.invalidOrigin, "origin has a query")
        case .fragment: (.invalidOrigin, "origin has a fragment")
        case .path: (.invalidOrigin, "origin has a path")
        case .noHost: (.invalidOrigin, "origin has no host")
        case .userinfo: (.invalidOrigin, "origin has userinfo")
        case .backslash: (.invalidOrigin, "origin has a backslash")
        case .ipv6Unterminated: (.invalidOrigin, "unterminated IPv6 host")
        case .ipv6Invalid: (.invalidOrigin, "invalid IPv6 host")
        case .ipv6Trailing: (.invalidOrigin, "junk after IPv6 host")
        case .hostCharacters: (.invalidOrigin, "origin host has characters outside [a-z0-9-._]")
        case .hostEmptyLabel: (.invalidOrigin, "origin host has an empty label")
        case .hostLength: (.invalidOrigin, "origin host is empty or too long")
        case .hostNumberNotIPv4: (.invalidOrigin, "origin host ends in a number but is not an IPv4 address")
        case .port: (.invalidOrigin, "origin port is not a number 0-65535")
        }
    }
}
