import CryptoCore
import DigitalCredentials
import Foundation
import MdocCBOR
import PKCS11
import Presentment
import TestSupport
import Testing

/// Device keys in a SoftHSM2 token for the tests: the built-in TestVectors context with every device
/// key moved into a token, and helpers to put any test key there.
public enum TokenContext {
    /// Whether the PKCS#11 tests can run (SoftHSM2 installed), or must run and fail (under CI).
    public static var runnable: Bool { SoftHSM2Sandbox.installedModule != nil || Prerequisites.required }
    /// Why a PKCS#11 test is skipped.
    public static let skipNote: Comment = "SoftHSM2 is not installed (scripts/bootstrap.sh installs softhsm2)"

    /// The process's SoftHSM2 sandbox.
    package static func sandbox() throws -> SoftHSM2Sandbox { try SoftHSM2Sandbox.shared() }

    /// A new token with a unique label.
    package static func newToken(_ name: String) throws -> SoftHSM2Sandbox.Token {
        try sandbox().makeToken(label: "\(name)-\(UInt32.random(in: 0...UInt32.max))")
    }

    /// Imports `signer`'s key into `token` as `label` (with a random id); returns the key's URI.
    package static func importKey(_ signer: SoftwareSigner, into token: SoftHSM2Sandbox.Token, label: String) throws
        -> PKCS11URI
    {
        var scalar = try signer.privateKey.exportSecret()
        defer { SecureBytes.cleanse(&scalar) }
        let uri = token.uri(object: label, id: try SecureBytes.random(count: 8))
        try PKCS11KeyGeneration.importTestKey(
            uri, curve: signer.publicKey.curve, scalar: scalar, publicKey: signer.publicKey)
        return uri
    }

    private static let builtInCache = LockedValue<(CredentialContext, SoftHSM2Sandbox.Token)?>(nil)

    /// The built-in context (`TestVectors/context`) with every device key imported from its published
    /// key file into one SoftHSM2 token and referenced by a `pkcs11:` URI instead: the same
    /// credentials, none of their keys in a file. Built once per process.
    public static func builtIn(vectors: URL) throws -> CredentialContext { try builtInWithToken(vectors: vectors).0 }

    /// As `builtIn(vectors:)`, with the token.
    package static func builtInWithToken(vectors: URL) throws -> (CredentialContext, SoftHSM2Sandbox.Token) {
        try builtInCache.withLock { (cached) throws -> (CredentialContext, SoftHSM2Sandbox.Token) in
            if let cached { return cached }
            let dir = vectors.appendingPathComponent("context")
            guard let files = try CredentialContext.load(from: dir, requirePrivateFiles: false) else {
                throw PKCS11Error(.keyNotFound, "no built-in context")
            }
            let token = try newToken("builtin")
            var entries = files.entries
            for i in entries.indices {
                let pem = try Data(contentsOf: dir.appendingPathComponent(entries[i].deviceKeyReference))
                let signer = try SoftwareSigner(encodedPrivateKey: Array(pem))
                entries[i].deviceKeyReference = try importKey(signer, into: token, label: entries[i].id).string
            }
            let context = try CredentialContext(
                entries: entries, readerTrust: files.readerTrust,
                keyResolver: ContextKeyResolver(directory: dir, requirePrivateFiles: false))
            cached = (context, token)
            return (context, token)
        }
    }
}

extension TokenContext {
    /// The fault-injecting module (`Tests/PKCS11FaultModule`) as built beside the test binary, copied
    /// into the sandbox as `<user>/fault-<mode>.so` so it runs `mode` over SoftHSM2 (each user its own
    /// copy, so its own call counters). Nil when not built.
    /// The module directories that admit the fault modules of `user` beside the system's.
    package static func faultModuleDirectories(user: String = "shared") throws -> [String] {
        PKCS11ModuleDirectories.system + [try sandbox().directory + "/\(user)"]
    }

    package static func faultModule(_ mode: String, user: String = "shared") throws -> String? {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let built = exe.appendingPathComponent("libmdoc-p11-fault.so").path
        guard FileManager.default.fileExists(atPath: built) else { return nil }
        let s = try sandbox()
        if let target = SoftHSM2Sandbox.installedModule { setenv("MDOC_P11FAULT_TARGET", target, 1) }
        let copy = s.directory + "/\(user)/fault-\(mode).so"
        return try faultCopies.withLock { (done: inout Set<String>) throws -> String in
            if done.insert(copy).inserted {
                try FileManager.default.createDirectory(
                    atPath: s.directory + "/\(user)", withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o755])
                try FileManager.default.copyItem(atPath: built, toPath: copy)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: copy)
            }
            return copy
        }
    }

    private static let faultCopies = LockedValue<Set<String>>([])
}

extension TestWorld {
    /// A context of `entries` whose device keys (issued by `entry(…)`) are imported into a new SoftHSM2
    /// token and referenced by `pkcs11:` URIs: the same credentials, every key in the token.
    public func tokenContext(_ entries: [CredentialContext.Entry], trust: ReaderTrustPolicy = ReaderTrustPolicy())
        throws -> CredentialContext
    {
        let token = try TokenContext.newToken("world")
        var moved = entries
        for i in moved.indices {
            guard let key = deviceKeys[moved[i].deviceKeyReference] else {
                throw PKCS11Error(.keyNotFound, "no test key for the entry")
            }
            moved[i].deviceKeyReference = try TokenContext.importKey(key, into: token, label: moved[i].id).string
        }
        return try CredentialContext(
            entries: moved, readerTrust: trust,
            keyResolver: ContextKeyResolver(directory: URL(fileURLWithPath: "/nonexistent")))
    }
}
