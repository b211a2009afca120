/// The rules the engine holds its own DeviceResponse to before it leaves: the reader's size limit and,
/// when configured, the self-check.
public enum ResponseRule: String, RefusalRule {
    /// The DeviceResponse exceeds the reader's maximumResponseSize.
    case tooLarge
    /// The built DeviceResponse does not parse.
    case selfCheckUnparseable
    /// Document count differs.
    case selfCheckDocumentCount
    /// A released item does not match its MSO digest.
    case selfCheckDigest
    /// Device signature missing.
    case selfCheckSignatureMissing
    /// Device signature does not verify with the MSO device key.
    case selfCheckSignature

    /// The domain of these rules.
    public static let domain = "response"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .tooLarge: .responseTooLarge
        case .selfCheckUnparseable, .selfCheckDocumentCount, .selfCheckDigest, .selfCheckSignatureMissing,
            .selfCheckSignature:
            .selfCheckFailed
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .tooLarge: "the DeviceResponse exceeds the reader's maximumResponseSize"
        case .selfCheckUnparseable: "the built DeviceResponse does not parse"
        case .selfCheckDocumentCount: "document count differs"
        case .selfCheckDigest: "a released item does not match its MSO digest"
        case .selfCheckSignatureMissing: "device signature missing"
        case .selfCheckSignature: "device signature does not verify with the MSO device key"
        }
    }
}
