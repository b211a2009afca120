/// The rules a requesting origin is read by (WHATWG URL serialization, `Origin.init`).
public enum OriginRule: String, RefusalRule {
    /// Origin is empty.
    case empty
    /// Origin longer than 2048 bytes.
    case tooLong
    /// Origin contains whitespace, control or non-ASCII characters.
    case characters
    /// App origins are not enabled.
    case appOriginsDisabled
    /// App origin hash is not base64.
    case appHashNotBase64
    /// Origin scheme is not http or https.
    case scheme
    /// Origin has no http or https scheme.
    case noScheme
    /// Origin has a query.
    case query
    /// Origin has a fragment.
    case fragment
    /// Origin has a path.
    case path
    /// Origin has no host.
    case noHost
    /// Origin has userinfo.
    case userinfo
    /// Origin has a backslash.
    case backslash
    /// Unterminated IPv6 host.
    case ipv6Unterminated
    /// Invalid IPv6 host.
    case ipv6Invalid
    /// Junk after IPv6 host.
    case ipv6Trailing
    /// Origin host has characters outside [a-z0-9-._].
    case hostCharacters
    /// Origin host has an empty label.
    case hostEmptyLabel
    /// Origin host is empty or too long.
    case hostLength
    /// Origin host ends in a number but is not an IPv4 address.
    case hostNumberNotIPv4
    /// Origin port is not a number 0-65535.
    case port

    /// The domain of these rules.
    public static let domain = "origin"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .empty: .missingOrigin
        case .tooLong, .characters, .appOriginsDisabled, .appHashNotBase64, .scheme, .noScheme, .query, .fragment,
            .path, .noHost, .userinfo, .backslash, .ipv6Unterminated, .ipv6Invalid, .ipv6Trailing, .hostCharacters,
            .hostEmptyLabel, .hostLength, .hostNumberNotIPv4, .port:
            .invalidOrigin
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .empty: "origin is empty"
        case .tooLong: "origin longer than 2048 bytes"
        case .characters: "origin contains whitespace, control or non-ASCII characters"
        case .appOriginsDisabled: "app origins are not enabled"
        case .appHashNotBase64: "app origin hash is not base64"
        case .scheme: "origin scheme is not http or https"
        case .noScheme: "origin has no http or https scheme"
        case .query: "origin has a query"
        case .fragment: "origin has a fragment"
        case .path: "origin has a path"
        case .noHost: "origin has no host"
        case .userinfo: "origin has userinfo"
        case .backslash: "origin has a backslash"
        case .ipv6Unterminated: "unterminated IPv6 host"
        case .ipv6Invalid: "invalid IPv6 host"
        case .ipv6Trailing: "junk after IPv6 host"
        case .hostCharacters: "origin host has characters outside [a-z0-9-._]"
        case .hostEmptyLabel: "origin host has an empty label"
        case .hostLength: "origin host is empty or too long"
        case .hostNumberNotIPv4: "origin host ends in a number but is not an IPv4 address"
        case .port: "origin port is not a number 0-65535"
        }
    }
}
