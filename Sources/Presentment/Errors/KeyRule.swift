/// The rules of device keys: resolving a credential's key reference, checking it against the MSO,
/// and signing DeviceAuthentication with it.
public enum KeyRule: String, RefusalRule {
    /// Device key reference must be a relative path inside the context directory.
    case referenceNotRelative
    /// Device key file name must be 1-64 characters of [A-Za-z0-9_-].
    case fileName
    /// Device key file not found.
    case fileMissing
    /// Device key file is a symbolic link.
    case fileIsLink
    /// Device key path is not a regular file.
    case notRegularFile
    /// Device key file is not owned by this user.
    case fileNotOwned
    /// Device key file is readable by group or others.
    case fileNotPrivate
    /// Device key file unreadable or too large.
    case fileUnreadable
    /// Device key file is not a PKCS#8 P-256/P-384/P-521/Ed25519 key.
    case notPKCS8
    /// No device key for this reference.
    case unknownReference
    /// Device key in a token cannot be used.
    case token
    /// A `pkcs11:` reference needs a token resolver (`ContextKeyResolver`), not a file resolver.
    case tokenNeedsResolver
    /// Device key does not match the MSO deviceKey.
    case keyMismatch
    /// The device key cannot be reached.
    case unreachable
    /// The device key could not sign DeviceAuthentication.
    case signingFailed

    /// The domain of these rules.
    public static let domain = "key"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .referenceNotRelative, .fileName, .fileMissing, .fileIsLink, .notRegularFile, .fileNotOwned,
            .fileNotPrivate, .fileUnreadable, .notPKCS8, .unknownReference, .token, .tokenNeedsResolver, .keyMismatch,
            .unreachable:
            .keyUnavailable
        case .signingFailed: .signingFailed
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .referenceNotRelative: "device key reference must be a relative path inside the context directory"
        case .fileName: "device key file name must be 1-64 characters of [A-Za-z0-9_-]"
        case .fileMissing: "device key file not found"
        case .fileIsLink: "device key file is a symbolic link"
        case .notRegularFile: "device key path is not a regular file"
        case .fileNotOwned: "device key file is not owned by this user"
        case .fileNotPrivate: "device key file is readable by group or others"
        case .fileUnreadable: "device key file unreadable or too large"
        case .notPKCS8: "device key file is not a PKCS#8 P-256/P-384/P-521/Ed25519 key"
        case .unknownReference: "no device key for this reference"
        case .token: "device key in a token cannot be used"
        case .tokenNeedsResolver: "a pkcs11: reference needs a token resolver (ContextKeyResolver), not a file resolver"
        case .keyMismatch: "device key does not match the MSO deviceKey"
        case .unreachable: "the device key cannot be reached"
        case .signingFailed: "the device key could not sign DeviceAuthentication"
        }
    }
}
