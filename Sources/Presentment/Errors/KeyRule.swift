/// The rules of device keys: resolving a credential's key reference, checking it against the MSO,
/// and signing DeviceAuthentication with it.
public enum KeyRule: String, RefusalRule {
    case referenceNotRelative
    case fileName
    case fileMissing
    case fileIsLink
    case notRegularFile
    case fileNotOwned
    case fileNotPrivate
    case fileUnreadable
    case notPKCS8
    case unknownReference
    case token
    case tokenNeedsResolver
    case keyMismatch
    case unreachable
    case signingFailed

    /// The domain of these rules.
    public static let domain = "key"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .referenceNotRelative:
            (.keyUnavailable, "device key reference must be a relative path inside the context directory")
        case .fileName: (.keyUnavailable, "device key file name must be 1-64 characters of [A-Za-z0-9_-]")
        case .fileMissing: (.keyUnavailable, "device key file not found")
        case .fileIsLink: (.keyUnavailable, "device key file is a symbolic link")
        case .notRegularFile: (.keyUnavailable, "device key path is not a regular file")
        case .fileNotOwned: (.keyUnavailable, "device key file is not owned by this user")
        case .fileNotPrivate: (.keyUnavailable, "device key file is readable by group or others")
        case .fileUnreadable: (.keyUnavailable, "device key file unreadable or too large")
        case .notPKCS8: (.keyUnavailable, "device key file is not a PKCS#8 P-256/P-384/P-521/Ed25519 key")
        case .unknownReference: (.keyUnavailable, "no device key for this reference")
        case .token: (.keyUnavailable, "device key in a token cannot be used")
        case .tokenNeedsResolver:
            (.keyUnavailable, "a pkcs11: reference needs a token resolver (ContextKeyResolver), not a file resolver")
        case .keyMismatch: (.keyUnavailable, "device key does not match the MSO deviceKey")
        case .unreachable: (.keyUnavailable, "the device key cannot be reached")
        case .signingFailed: (.signingFailed, "the device key could not sign DeviceAuthentication")
        }
    }
}
