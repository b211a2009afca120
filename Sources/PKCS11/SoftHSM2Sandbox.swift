import CryptoCore
import MdocCBOR
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// A SoftHSM2 token store in a temporary directory, for tests, the demo and the benchmark: the
/// stand-in for a wallet backend's HSM.
///
/// SoftHSM2 reads its configuration (`SOFTHSM2_CONF`) once, when it is initialised, so there is one
/// sandbox per process: the first `shared()` creates the directory, writes the configuration and sets
/// the variable (child processes inherit it), and later tokens are added to the same store. The
/// directory is removed when the process exits.
package final class SoftHSM2Sandbox: Sendable {
    /// Where Debian's softhsm2 package installs the module.
    package static let modulePaths = [
        "/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
        "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so",
    ]

    /// The installed SoftHSM2 module, if any.
    package static var installedModule: String? { modulePaths.first { access($0, R_OK) == 0 } }

    /// The sandbox directory (holds `softhsm2.conf`, `tokens/` and the PIN files).
    package let directory: String
    /// The module used.
    package let modulePath: String
    private let creating = LockedValue<Int>(0)

    private static let instance = LockedValue<SoftHSM2Sandbox?>(nil)
    /// The directory removed at exit (read by the C exit handler, which cannot capture).
    nonisolated(unsafe) private static var cleanupPath: String?

    private init(directory: String, modulePath: String) {
        self.directory = directory
        self.modulePath = modulePath
    }

    /// The process's sandbox, created on first use with the module at `modulePath` (default: the
    /// installed SoftHSM2).
    package static func shared(modulePath: String? = nil) throws(PKCS11Error) -> SoftHSM2Sandbox {
        try instance.withLock { (current) throws(PKCS11Error) -> SoftHSM2Sandbox in
            if let current { return current }
            guard let module = modulePath ?? installedModule else {
                throw PKCS11Error(.moduleUnavailable, "SoftHSM2 is not installed (apt-get install softhsm2)")
            }
            var template = Array("/tmp/mdoc-softhsm-XXXXXX".utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw PKCS11Error(.moduleUnavailable, "cannot create the SoftHSM2 sandbox directory")
            }
            let dir = String(cString: made)
            guard mkdir(dir + "/tokens", 0o700) == 0 else {
                throw PKCS11Error(.moduleUnavailable, "cannot create the SoftHSM2 token directory")
            }
            let conf =
                "directories.tokendir = \(dir)/tokens\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n"
            try writePrivate(Array(conf.utf8), to: dir + "/softhsm2.conf")
            setenv("SOFTHSM2_CONF", dir + "/softhsm2.conf", 1)
            cleanupPath = dir
            atexit {
                if let p = SoftHSM2Sandbox.cleanupPath { try? FileManager.default.removeItem(atPath: p) }
            }
            let s = SoftHSM2Sandbox(directory: dir, modulePath: module)
            current = s
            return s
        }
    }

    /// A token in the sandbox with its user PIN in a 0600 file.
    package struct Token: Sendable {
        /// The token's label.
        package let label: String
        /// The file holding the user PIN.
        package let pinFile: String
        /// The module.
        package let modulePath: String

        /// The URI of a key in this token, with the module path and the PIN file.
        package func uri(object: String, id: [UInt8]? = nil) -> PKCS11URI {
            PKCS11URI(token: label, object: object, id: id, modulePath: modulePath, pinSource: .file(pinFile))
        }
    }

    /// Initialises a new token labelled `label` (random PINs; the user PIN is written to a 0600 file).
    package func makeToken(label: String) throws(PKCS11Error) -> Token {
        try creating.withLock { (n) throws(PKCS11Error) -> Token in
            n += 1
            let user: [UInt8]
            let so: [UInt8]
            do {
                user = try SecureBytes.random(count: 8).map { UInt8(ascii: "a") + $0 % 26 }
                so = try SecureBytes.random(count: 8).map { UInt8(ascii: "a") + $0 % 26 }
            } catch { throw PKCS11Error(.tokenFailed, "no random bytes for the PINs") }
            let pinFile = directory + "/pin-\(n)"
            try Self.writePrivate(user, to: pinFile)
            try PKCS11KeyGeneration.initialiseFreeToken(modulePath: modulePath, label: label, soPIN: so, userPIN: user)
            return Token(label: label, pinFile: pinFile, modulePath: modulePath)
        }
    }

    /// Writes `bytes` to a new file created with mode 0600 from its first byte.
    package static func writePrivate(_ bytes: [UInt8], to path: String) throws(PKCS11Error) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw PKCS11Error(.moduleUnavailable, "cannot create a sandbox file") }
        defer { close(fd) }
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else { throw PKCS11Error(.moduleUnavailable, "cannot write a sandbox file") }
    }
}
