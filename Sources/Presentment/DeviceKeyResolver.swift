#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR

/// Resolves a credential's device-key reference to a signer. Implement it to keep device keys in an
/// HSM, KMS or secure element; `FileKeyResolver` reads PKCS#8 files next to the context (the default
/// of `CredentialContext.load` and `update`), and `ContextKeyResolver` (in DigitalCredentials) adds
/// keys in a PKCS#11 token named by `pkcs11:` URIs.
public protocol DeviceKeyResolver: Sendable {
    /// The signer for `reference`. Throw a `KeyRule` refusal (`PresentmentError(KeyRule.unknownReference)`, or another rule with
    /// code `keyUnavailable`) when it cannot be resolved.
    func signer(for reference: String) throws(PresentmentError) -> any COSESigner
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
        // The URI scheme, case-insensitively (as the token resolver recognises it).
        if reference.utf8.count >= 7 && reference.utf8.prefix(7).map({ $0 | 0x20 }) == Array("pkcs11:".utf8) {
            throw PresentmentError(KeyRule.tokenNeedsResolver)
        }
        guard !reference.isEmpty, !reference.hasPrefix("/"),
            !reference.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }),
            reference.utf8.count <= 255
        else {
            throw PresentmentError(KeyRule.referenceNotRelative)
        }
        let path = directory.appendingPathComponent(reference).path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            throw PresentmentError(errno == ELOOP ? KeyRule.fileIsLink : KeyRule.fileMissing)
        }
        defer { close(fd) }
        _ = try checkOpenedFile(
            fd, requirePrivate: requirePrivateFiles, unexaminable: KeyRule.notRegularFile, notRegular: .notRegularFile,
            notOwned: .fileNotOwned, notPrivate: .fileNotPrivate)
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
