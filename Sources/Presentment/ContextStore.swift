#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR

/// The credential context on disk: `directory/context.cbor` (the snapshot), `directory/keys/` (device
/// keys as PKCS#8 PEM files) and `directory/.lock` (the writer lock).
///
/// - Readers (`load`) take no lock: the snapshot is replaced whole by an atomic rename, so a reader
///   sees the old snapshot or the new one, never a mix.
/// - Writers go through `update(at:…)`: one at a time across processes and threads (an exclusive
///   `flock` on `.lock`, waited for up to a bound, else `contextBusy`), around load, change,
///   validation and the atomic write.
/// - Every file holding key material is created with mode 0600 from its first byte (`O_CREAT|O_EXCL`),
///   written, fsynced and linked into place without replacing anything; temporaries of killed
///   writers and key files no snapshot references are removed by the next writer.
/// - The directory must be the user's own and not writable by group or others (`contextInsecure`);
///   every file is checked through the descriptor it is read from (`fstat`, not `stat` then `open`).
extension CredentialContext {
    /// The writer lock's file name inside the context directory.
    package static let lockFileName = ".lock"
    /// Where `Transaction.storeDeviceKey` puts device keys, relative to the context directory.
    package static let keyDirectoryName = "keys"
    /// How long a writer waits for the lock by default, in seconds.
    public static let defaultLockTimeout: Double = 10

    // MARK: Reading

    /// Loads `directory/context.cbor`. Returns nil when no snapshot exists; throws `contextCorrupt`
    /// for a damaged one and `contextInsecure` when the file is readable by group or others or the
    /// directory is not the user's own or is writable by group or others. Device keys are not read
    /// here: each is resolved when its credential first signs.
    /// - Parameters:
    ///   - directory: the context's directory.
    ///   - keyResolver: defaults to `FileKeyResolver(directory:)` (key files); pass `ContextKeyResolver`
    ///     (DigitalCredentials) for a context whose keys may also be `pkcs11:` URIs.
    ///   - requirePrivateFiles: apply the ownership and mode checks (default true; false only for the
    ///     published test context, whose modes a git checkout does not keep).
    public static func load(
        from directory: URL, keyResolver: (any DeviceKeyResolver)? = nil, requirePrivateFiles: Bool = true
    ) throws(PresentmentError) -> CredentialContext? {
        if requirePrivateFiles {
            try checkDirectory(directory.path)
            try checkKeyDirectory(directory.path)
        }
        guard let bytes = try readSnapshot(directory, requirePrivateFiles: requirePrivateFiles) else { return nil }
        return try CredentialContext(
            encoded: bytes,
            keyResolver: keyResolver
                ?? FileKeyResolver(directory: directory, requirePrivateFiles: requirePrivateFiles))
    }

    /// The snapshot's bytes, or nil when there is none; checked on the opened descriptor.
    static func readSnapshot(_ directory: URL, requirePrivateFiles: Bool) throws(PresentmentError) -> [UInt8]? {
        let path = pathPrefix(directory) + fileName
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw PresentmentError(ContextRule.pathIsLink) }
            throw PresentmentError(ContextRule.fileUnopenable)
        }
        defer { close(fd) }
        let size = try checkOpenedFile(
            fd, requirePrivate: requirePrivateFiles, unexaminable: ContextRule.fileUnexaminable,
            notRegular: .notRegularFile, notOwned: .fileNotOwned, notPrivate: .fileNotPrivate)
        guard size <= maxFileSize else {
            throw PresentmentError(ContextRule.fileTooLarge)
        }
        guard let bytes = readBounded(fd, maxBytes: maxFileSize, size: size) else {
            throw PresentmentError(ContextRule.fileUnreadable)
        }
        return bytes
    }

    /// Refuses a context directory that another user owns or that group or others may write to (they
    /// could swap the snapshot or a key file).
    static func checkDirectory(_ path: String) throws(PresentmentError) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { throw PresentmentError(ContextRule.directoryMissing) }
            throw PresentmentError(ContextRule.directoryUnexaminable)
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw PresentmentError(ContextRule.directoryNotDirectory)
        }
        guard st.st_uid == geteuid() else {
            throw PresentmentError(ContextRule.directoryNotOwned)
        }
        guard st.st_mode & 0o022 == 0 else {
            throw PresentmentError(ContextRule.directoryWritable)
        }
    }

    /// Refuses a context whose `keys/` entry exists but is a symbolic link (or not a private
    /// directory of this user): readers would follow it to key files elsewhere and writers would
    /// remove unrelated files in its target. A missing `keys/` is fine (no file keys yet).
    static func checkKeyDirectory(_ contextDirectory: String) throws(PresentmentError) {
        let keys = contextDirectory + "/" + keyDirectoryName
        var st = stat()
        guard lstat(keys, &st) == 0 else { return }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw PresentmentError(ContextRule.keyDirectoryNotDirectory)
        }
        try checkDirectory(keys)
    }

    // MARK: Writing

    /// A change to a context on disk, made under the writer lock: edit `entries` and `readerTrust`,
    /// add device keys with `storeDeviceKey`. Nothing reaches the disk unless the whole new context
    /// validates (every credential, every device key against its MSO).
    public struct Transaction {
        /// The credentials, as loaded; edit freely.
        public var entries: [Entry]
        /// The reader-trust policy, as loaded.
        public var readerTrust: ReaderTrustPolicy
        /// The directory holding `context.cbor`, the `.lock` file and `keys/` (the device key files).
        public let directory: URL
        var nextCredentialNumber: UInt64
        /// Key files this transaction created (relative references), removed if it fails.
        var createdKeys: [String] = []

        /// A credential id never used in this context before, even by a credential since removed:
        /// `credential-N` from a counter kept in the snapshot.
        public mutating func newCredentialID() -> String {
            while true {
                let id = CredentialContext.defaultIDPrefix + String(nextCredentialNumber)
                nextCredentialNumber += 1
                if !entries.contains(where: { $0.id == id }) { return id }
            }
        }

        /// Stores a device key in `keys/` and returns its reference for an `Entry`. The file is created
        /// with mode 0600 from its first byte, written in full and fsynced under a temporary name, then
        /// linked to `keys/<name>.pem`, never replacing an existing file (a free name is picked when
        /// that one is taken).
        /// - Parameters:
        ///   - pem: the key file's content (a PKCS#8 PEM; cleansed by the caller).
        ///   - name: the preferred file name without extension (`[A-Za-z0-9_-]`, at most 64 bytes).
        public mutating func storeDeviceKey(_ pem: [UInt8], name: String) throws(PresentmentError) -> String {
            guard CredentialContext.isValidCredentialID(name) else {
                throw PresentmentError(KeyRule.fileName)
            }
            let keys = directory.appendingPathComponent(CredentialContext.keyDirectoryName).path
            try CredentialContext.ensurePrivateDirectory(keys)
            for attempt in 0..<16 {
                let file =
                    attempt == 0 ? "\(name).pem" : "\(name)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16)).pem"
                switch try CredentialContext.createExclusively(pem, at: keys + "/" + file) {
                case true:
                    let reference = CredentialContext.keyDirectoryName + "/" + file
                    createdKeys.append(reference)
                    return reference
                case false:
                    continue
                }
            }
            throw PresentmentError(ContextRule.noFreeKeyFileName)
        }
    }

    /// Changes the context in `directory` as one transaction: takes the writer lock (waiting up to
    /// `lockTimeout` seconds, else `contextBusy`), removes temporaries of killed writers, loads the
    /// snapshot, runs `body`, validates the result (every credential and device key), writes it all
    /// or nothing, and removes key files no snapshot references. If anything fails, the snapshot on
    /// disk is untouched and the key files `body` stored are removed.
    /// - Parameters:
    ///   - directory: the context's directory.
    ///   - create: start from an empty context (creating the directory with mode 0700) when there is
    ///     none; otherwise a missing snapshot is `contextUnavailable`.
    ///   - keyResolver: how the new context's device keys are checked (default: the directory's key
    ///     files, `FileKeyResolver`; pass `ContextKeyResolver` when keys may be `pkcs11:` URIs).
    ///   - lockTimeout: how long to wait for the writer lock, in seconds.
    ///   - body: the change, made to the transaction's copy of the context.
    /// - Returns: the context as written.
    @discardableResult
    public static func update(
        at directory: URL, create: Bool = false, lockTimeout: Double = defaultLockTimeout,
        keyResolver: (any DeviceKeyResolver)? = nil,
        _ body: (inout Transaction) throws(PresentmentError) -> Void
    ) throws(PresentmentError) -> CredentialContext {
        let dir = directory.path
        if create && access(dir, F_OK) != 0 {
            do {
                try FileManager.default.createDirectory(
                    atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw PresentmentError(ContextRule.directoryUncreatable)
            }
        }
        try checkDirectory(dir)
        try checkKeyDirectory(dir)
        if create { try ensurePrivateDirectory(dir + "/" + keyDirectoryName) }
        let lock = try WriterLock.acquire(directory: dir, timeout: lockTimeout)
        defer { lock.release() }
        removeStaleTemporaries(in: dir)
        removeStaleTemporaries(in: dir + "/" + keyDirectoryName)
        let resolver = keyResolver ?? FileKeyResolver(directory: directory)
        let current: CredentialContext
        if let bytes = try readSnapshot(directory, requirePrivateFiles: true) {
            current = try CredentialContext(encoded: bytes, keyResolver: resolver)
        } else {
            guard create else { throw PresentmentError(ContextRule.noContext) }
            current = try CredentialContext(
                entries: [], readerTrust: ReaderTrustPolicy(), keyResolver: resolver, validatingKeys: false,
                nextCredentialNumber: nil)
        }
        removeUnreferencedKeys(in: dir, keeping: current)
        var tx = Transaction(
            entries: current.entries, readerTrust: current.readerTrust, directory: directory,
            nextCredentialNumber: current.nextCredentialNumber)
        let next: CredentialContext
        do throws(PresentmentError) {
            try body(&tx)
            var ids = Set<String>()
            for e in tx.entries where !ids.insert(e.id).inserted {
                throw PresentmentError(ContextRule.duplicateCredential)
            }
            next = try CredentialContext(
                entries: tx.entries, readerTrust: tx.readerTrust, keyResolver: resolver, validatingKeys: true,
                nextCredentialNumber: max(tx.nextCredentialNumber, current.nextCredentialNumber))
            try atomicWrite(next.encoded(), to: directory.appendingPathComponent(fileName))
        } catch {
            for k in tx.createdKeys { unlink(dir + "/" + k) }
            throw error
        }
        removeUnreferencedKeys(in: dir, keeping: next)
        return next
    }

    /// Replaces the snapshot in `directory` with this one, under the writer lock, all or nothing (a
    /// temporary file created 0600, written, fsynced, renamed over the old one, the directory
    /// fsynced). Readers see the old snapshot or the new one, never a mix. (To change a context,
    /// prefer `update(at:…)`: it loads, changes and writes under one lock, so no other writer's change
    /// is lost.)
    public func write(to directory: URL, lockTimeout: Double = CredentialContext.defaultLockTimeout)
        throws(PresentmentError)
    {
        try Self.checkDirectory(directory.path)
        try Self.checkKeyDirectory(directory.path)
        let lock = try WriterLock.acquire(directory: directory.path, timeout: lockTimeout)
        defer { lock.release() }
        Self.removeStaleTemporaries(in: directory.path)
        try Self.atomicWrite(encoded(), to: directory.appendingPathComponent(Self.fileName))
    }
}
