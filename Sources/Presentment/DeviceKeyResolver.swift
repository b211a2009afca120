#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR
import PKCS11

/// Resolves a credential's device-key reference to a signer. Implement it to keep device keys in an
/// HSM, KMS or secure element; `FileKeyResolver` reads PKCS#8 files next to the context.
public protocol DeviceKeyResolver: Sendable {
    /// The signer for `reference`. Throw a `KeyRule` refusal (`PresentmentError(KeyRule.unknownReference)`, or another rule with
    /// code `keyUnavailable`) when it cannot be resolved.
    func signer(for reference: String) throws(PresentmentError) -> any COSESigner
}

/// The context's default resolver: a `pkcs11:` reference (RFC 7512) names a key in a token
/// (`PKCS11KeyResolver`), anything else a key file inside the context directory (`FileKeyResolver`).
public struct ContextKeyResolver: DeviceKeyResolver {
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

/// Reads PKCS#8 PEM/DER private keys from files named by relative paths inside `directory`.
/// Absolute paths, `..` components and files readable by group or others are refused.
public struct FileKeyResolver: DeviceKeyResolver {
    /// The directory references are relative to.
    public let directory: URL
    /// Refuse key files readable by group or others (default true; false only for the published test keys).
    public let requirePrivateFiles: Bool

    /// Creates a resolver rooted at `directory`.
    public init(directory: URL, requirePrivateFiles: Bool = true) {
        self.directory = directory
        self.requirePrivateFiles = requirePrivateFiles
    }

    /// Loads the key file `reference` (e.g. `keys/mdl-1.pem`).
    public func signer(for reference: String) throws(PresentmentError) -> any COSESigner {
        guard !reference.isEmpty, !reference.hasPrefix("/"),
            !reference.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }),
            reference.utf8.count <= 255
        else {
            throw PresentmentError(KeyRule.referenceNotRelative)
        }
        let path = directory.appendingPathComponent(reference).path
        // Checked through the descriptor it is read from: the file examined is the file read.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            throw PresentmentError(errno == ELOOP ? KeyRule.fileIsLink : KeyRule.fileMissing)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            throw PresentmentError(KeyRule.notRegularFile)
        }
        if requirePrivateFiles {
            guard st.st_uid == geteuid() else {
                throw PresentmentError(KeyRule.fileNotOwned)
            }
            guard st.st_mode & 0o077 == 0 else {
                throw PresentmentError(KeyRule.fileNotPrivate)
            }
        }
        guard var bytes = readBounded(fd, maxBytes: 16384) else {
            throw PresentmentError(KeyRule.fileUnreadable)
        }
        defer { for i in bytes.indices { bytes[i] = 0 } }
        do { return try SoftwareSigner(encodedPrivateKey: bytes) } catch {
            throw PresentmentError(KeyRule.notPKCS8)
        }
    }
}

/// Signers held in memory, keyed by reference (for backends that manage keys themselves, and tests).
public struct InMemoryKeyResolver: DeviceKeyResolver {
    let signers: [String: any COSESigner]
    /// Creates a resolver.
    public init(_ signers: [String: any COSESigner]) { self.signers = signers }
    /// The signer for `reference`.
    public func signer(for reference: String) throws(PresentmentError) -> any COSESigner {
        guard let s = signers[reference] else {
            throw PresentmentError(KeyRule.unknownReference)
        }
        return s
    }
}
