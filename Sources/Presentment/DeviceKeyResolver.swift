#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
internal import CryptoCore
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

/// A resolver that records what it checked, so that a snapshot can keep the record with the credential
/// (`keyVerified`) and loading the same key again does not repeat the check: for a key file, that its
/// embedded public point is d·G for its scalar (the one check of a key file that costs a scalar
/// multiplication; the point is still validated and compared with the MSO's `deviceKey`).
package protocol KeyRecordingResolver: DeviceKeyResolver {
    /// The signer for `reference`, with the record of the key material it was read from (nil when
    /// there is nothing to record). Given a `recorded` value equal to the record of what is read now,
    /// the check the record stands for is not repeated; any other value (nil, an older record) checks
    /// in full.
    func recordedSigner(for reference: String, recorded: [UInt8]?) throws(PresentmentError) -> RecordedSigner
}

/// A signer with the record of the key material it was made from (`KeyRecordingResolver`).
package struct RecordedSigner: Sendable {
    /// The signer.
    package let signer: any COSESigner
    /// SHA-256 of the key file's bytes, or nil (a key held elsewhere: nothing to record).
    package let record: [UInt8]?

    /// A signer and its record.
    package init(signer: any COSESigner, record: [UInt8]?) {
        self.signer = signer
        self.record = record
    }
}

/// Reads PKCS#8 PEM/DER private keys from files named by relative paths inside `directory`.
/// Absolute paths, `..` components and files readable by group or others are refused. A context
/// written with validated keys records the SHA-256 of each key file (`keyVerified`); reading the same
/// bytes again skips only the check that their public point is d·G.
public struct FileKeyResolver: KeyRecordingResolver {
    /// The directory references are relative to.
    public let directory: URL
    /// Refuse key files readable by group or others (default true; false only for the published test keys).
    public let requirePrivateFiles: Bool

    /// `directory`'s path, with the separator a reference is appended after.
    private let base: String

    /// Creates a resolver rooted at `directory`.
    public init(directory: URL, requirePrivateFiles: Bool = true) {
        self.directory = directory
        self.requirePrivateFiles = requirePrivateFiles
        base = pathPrefix(directory)
    }

    /// Whether `reference` is a relative path of at most 255 bytes with no `.` or `..` component
    /// (empty components, `a//b`, are allowed: the file system reads them as one separator).
    static func isRelative(_ reference: String) -> Bool {
        let u = reference.utf8
        guard !u.isEmpty, u.count <= 255, u.first != UInt8(ascii: "/") else { return false }
        var dots = 0
        var componentLength = 0
        for b in u {
            if b == UInt8(ascii: "/") {
                if componentLength > 0 && dots == componentLength && dots <= 2 { return false }
                dots = 0
                componentLength = 0
            } else {
                componentLength += 1
                if b == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return !(componentLength > 0 && dots == componentLength && dots <= 2)
    }

    /// Loads the key file `reference` (e.g. `keys/mdl-1.pem`).
    public func signer(for reference: String) throws(PresentmentError) -> any COSESigner {
        try load(reference, recorded: nil, recording: false).signer
    }

    /// Loads the key file `reference`; its record is the SHA-256 of the file's bytes. When `recorded`
    /// equals it, those bytes passed the key-pair check before (the embedded public point is d·G), so
    /// only that multiplication is skipped: the file's rules, the PKCS#8 structure, the scalar's range
    /// and the point's validity are checked as always.
    package func recordedSigner(for reference: String, recorded: [UInt8]?) throws(PresentmentError)
        -> RecordedSigner
    {
        try load(reference, recorded: recorded, recording: true)
    }

    private func load(_ reference: String, recorded: [UInt8]?, recording: Bool) throws(PresentmentError)
        -> RecordedSigner
    {
        // The URI scheme, case-insensitively (as the token resolver recognises it).
        if reference.utf8.count >= 7 && reference.utf8.prefix(7).elementsEqual("pkcs11:".utf8, by: { $0 | 0x20 == $1 })
        {
            throw PresentmentError(KeyRule.tokenNeedsResolver)
        }
        guard Self.isRelative(reference) else {
            throw PresentmentError(KeyRule.referenceNotRelative)
        }
        let fd = open(base + reference, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            throw PresentmentError(errno == ELOOP ? KeyRule.fileIsLink : KeyRule.fileMissing)
        }
        defer { close(fd) }
        let size = try checkOpenedFile(
            fd, requirePrivate: requirePrivateFiles, unexaminable: KeyRule.notRegularFile, notRegular: .notRegularFile,
            notOwned: .fileNotOwned, notPrivate: .fileNotPrivate)
        guard var bytes = readBounded(fd, maxBytes: 16384, size: size) else {
            throw PresentmentError(KeyRule.fileUnreadable)
        }
        defer { for i in bytes.indices { bytes[i] = 0 } }
        let record = recording ? MdocDigest.sha256(bytes) : nil
        var checked = false
        if let record, let recorded { checked = SecureBytes.constantTimeEqual(record, recorded) }
        do {
            return RecordedSigner(
                signer: try SoftwareSigner(encodedPrivateKey: bytes, publicPointChecked: checked), record: record)
        } catch {
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
