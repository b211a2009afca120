#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
import PKCS11
import Presentment

// The resolvers of keys in a PKCS#11 token. They live above the protocol-neutral core (which keeps
// the resolver protocol and key files) because only they load Cryptoki modules.

/// The context's default resolver: a `pkcs11:` reference (RFC 7512) names a key in a token
/// (`PKCS11KeyResolver`), anything else a key file inside the context directory (`FileKeyResolver`).
public struct ContextKeyResolver: KeyRecordingResolver {
    /// Resolves key files.
    public let files: FileKeyResolver
    /// Resolves token keys.
    public let tokens: PKCS11KeyResolver

    /// Creates a resolver for the context in `directory`; token keys' modules load only from
    /// `moduleDirectories`.
    public init(
        directory: URL, requirePrivateFiles: Bool = true, moduleDirectories: [String] = PKCS11ModuleDirectories.system
    ) {
        files = FileKeyResolver(directory: directory, requirePrivateFiles: requirePrivateFiles)
        tokens = PKCS11KeyResolver(moduleDirectories: moduleDirectories)
    }

    /// The signer for a file path or a `pkcs11:` URI.
    public func signer(for reference: String) throws(PresentmentError) -> any COSESigner {
        PKCS11URI.isPKCS11(reference) ? try tokens.signer(for: reference) : try files.signer(for: reference)
    }

    /// A key file's signer with its record (`FileKeyResolver`); a token key has none (the token keeps
    /// the key: nothing is imported, nothing to record).
    package func recordedSigner(for reference: String, recorded: [UInt8]?) throws(PresentmentError)
        -> RecordedSigner
    {
        guard !PKCS11URI.isPKCS11(reference) else {
            return RecordedSigner(signer: try tokens.signer(for: reference), record: nil)
        }
        return try files.recordedSigner(for: reference, recorded: recorded)
    }
}

/// Resolves `pkcs11:` URIs (RFC 7512, with `module-path` and a `pin-source` file or `x-pin-env`
/// variable) to signers over keys held in a PKCS#11 token. Every failure is `keyUnavailable` with the
/// token's step and return value, never the PIN, its source or the URI.
public struct PKCS11KeyResolver: DeviceKeyResolver {
    /// The directories a URI's `module-path` may lie in.
    public let moduleDirectories: [String]

    /// Creates a resolver whose modules load only from `moduleDirectories` (default: the system's
    /// PKCS#11 module directories, `PKCS11ModuleDirectories.system`).
    public init(moduleDirectories: [String] = PKCS11ModuleDirectories.system) {
        self.moduleDirectories = moduleDirectories
    }

    /// Loads the module (once per process), finds the token and key, and checks the key.
    public func signer(for reference: String) throws(PresentmentError) -> any COSESigner {
        do { return try PKCS11Signer(uri: PKCS11URI(parsing: reference), moduleDirectories: moduleDirectories) } catch {
            throw PresentmentError(KeyRule.token, underlying: error)
        }
    }
}
