/// The rules the engine holds its own DeviceResponse to before it leaves: the reader's size limit and,
/// when configured, the self-check.
public enum ResponseRule: String, RefusalRule {
    case tooLarge
    case selfCheckUnparseable
    case selfCheckDocumentCount
    case selfCheckDigest
    case selfCheckSignatureMissing
    case selfCheckSignature

    /// The domain of these rules.
    public static let domain = "response"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .tooLarge: (.responseTooLarge, "the DeviceResponse exceeds the reader's maximumResponseSize")
        case .selfCheckUnparseable: (.selfCheckFailed, "the built DeviceResponse does not parse")
        case .selfCheckDocumentCount: (.selfCheckFailed, "document count differs")
        case .selfCheckDigest: (.selfCheckFailed, "a released item does not match its MSO digest")
        case .selfCheckSignatureMissing: (.selfCheckFailed, "device signature missing")
        case .selfCheckSignature: (.selfCheckFailed, "device signature does not verify with the MSO device key")
        }
    }
}
