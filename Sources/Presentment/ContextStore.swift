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
    public static let lockFileName = ".lock"
    /// Where `Transaction.storeDeviceKey` puts device keys, relative to the context directory.
    public static let keyDirectoryName = "keys"
    /// How long a writer waits for the lock by default, in seconds.
    public static let defaultLockTimeout: Double = 10

    // MARK: Reading

    /// Loads `directory/context.cbor`. Returns nil when no snapshot exists; throws `contextCorrupt`
    /// for a damaged one and `contextInsecure` when the file is readable by group or others or the
    /// directory is not the user's own or is writable by group or others. Device keys are not read
    /// here: each is resolved when its credential first signs.
    /// - Parameters:
    ///   - keyResolver: defaults to `FileKeyResolver(directory:)`.
    ///   - requirePrivateFiles: apply the ownership and mode checks (default true; false only for the
    ///     published test context, whose modes a git checkout does not keep).
    public static func load(
        from directory: URL, keyResolver: (any DeviceKeyResolver)? = nil, requirePrivateFiles: Bool = true
    ) throws(PresentmentError) -> CredentialContext? {
        if requirePrivateFiles { try checkDirectory(directory.path) }
        guard let bytes = try readSnapshot(directory, requirePrivateFiles: requirePrivateFiles) else { return nil }
        return try CredentialContext(
            encoded: bytes,
            keyResolver: keyResolver ?? FileKeyResolver(directory: directory, requirePrivateFiles: requirePrivateFiles))
    }

    /// The snapshot's bytes, or nil when there is none; checked on the opened descriptor.
    static func readSnapshot(_ directory: URL, requirePrivateFiles: Bool) throws(PresentmentError) -> [UInt8]? {
        let path = directory.appendingPathComponent(fileName).path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw PresentmentError(.contextCorrupt, "context path is a symbolic link") }
            throw PresentmentError(.contextUnavailable, "context file cannot be opened")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw PresentmentError(.contextUnavailable, "context file cannot be examined")
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw PresentmentError(.contextCorrupt, "context path is not a regular file")
        }
        if requirePrivateFiles {
            guard st.st_uid == geteuid() else {
                throw PresentmentError(.contextInsecure, "context file is not owned by this user")
            }
            guard st.st_mode & 0o077 == 0 else {
                throw PresentmentError(
                    .contextInsecure, "context file is readable or writable by group or others (expected mode 0600)")
            }
        }
        guard st.st_size <= maxFileSize else {
            throw PresentmentError(.contextCorrupt, "context file larger than \(maxFileSize) bytes")
        }
        guard let bytes = readBounded(fd, maxBytes: maxFileSize) else {
            throw PresentmentError(.contextUnavailable, "context file cannot be read")
        }
        return bytes
    }

    /// Refuses a context directory that another user owns or that group or others may write to (they
    /// could swap the snapshot or a key file).
    static func checkDirectory(_ path: String) throws(PresentmentError) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { throw PresentmentError(.contextUnavailable, "context directory does not exist") }
            throw PresentmentError(.contextUnavailable, "context directory cannot be examined")
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw PresentmentError(.contextInsecure, "context directory is not a directory (or is a symbolic link)")
        }
        guard st.st_uid == geteuid() else {
            throw PresentmentError(.contextInsecure, "context directory is not owned by this user")
        }
        guard st.st_mode & 0o022 == 0 else {
            throw PresentmentError(.contextInsecure, "context directory is writable by group or others")
        }
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
        /// The context directory.
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
                throw PresentmentError(.keyUnavailable, "device key file name must be 1-64 characters of [A-Za-z0-9_-]")
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
            throw PresentmentError(.contextUnavailable, "cannot find a free device key file name")
        }
    }

    /// Changes the context in `directory` as one transaction: takes the writer lock (waiting up to
    /// `lockTimeout` seconds, else `contextBusy`), removes temporaries of killed writers, loads the
    /// snapshot, runs `body`, validates the result (every credential and device key), writes it all
    /// or nothing, and removes key files no snapshot references. If anything fails, the snapshot on
    /// disk is untouched and the key files `body` stored are removed.
    /// - Parameters:
    ///   - create: start from an empty context (creating the directory with mode 0700) when there is
    ///     none; otherwise a missing snapshot is `contextUnavailable`.
    ///   - keyResolver: how the new context's device keys are checked (default: the directory's files).
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
                throw PresentmentError(.contextUnavailable, "cannot create the context directory")
            }
        }
        try checkDirectory(dir)
        if create { try ensurePrivateDirectory(dir + "/" + keyDirectoryName) }
        let lock = try WriterLock(directory: dir, timeout: lockTimeout)
        defer { lock.release() }
        removeStaleTemporaries(in: dir)
        removeStaleTemporaries(in: dir + "/" + keyDirectoryName)
        let resolver = keyResolver ?? FileKeyResolver(directory: directory)
        let current: CredentialContext
        if let bytes = try readSnapshot(directory, requirePrivateFiles: true) {
            current = try CredentialContext(encoded: bytes, keyResolver: resolver)
        } else {
            guard create else { throw PresentmentError(.contextUnavailable, "no context in this directory") }
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
                throw PresentmentError(.duplicateCredential, "the change adds a credential id that exists already")
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
        let lock = try WriterLock(directory: directory.path, timeout: lockTimeout)
        defer { lock.release() }
        Self.removeStaleTemporaries(in: directory.path)
        try Self.atomicWrite(encoded(), to: directory.appendingPathComponent(Self.fileName))
    }

    /// The writer lock: an exclusive `flock` on `.lock` (created 0600, never removed), held from
    /// construction until `release`. `flock` locks belong to the open file description, so two threads
    /// of one process exclude each other as two processes do.
    final class WriterLock {
        private var fd: Int32

        init(directory: String, timeout: Double) throws(PresentmentError) {
            fd = open(
                directory + "/" + CredentialContext.lockFileName, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw PresentmentError(.contextUnavailable, "cannot open the context lock file") }
            let deadline = Date().addingTimeInterval(max(0, timeout))
            var delay: useconds_t = 1000
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let e = errno
                guard e == EWOULDBLOCK || e == EINTR else {
                    close(fd)
                    throw PresentmentError(.contextUnavailable, "cannot lock the context")
                }
                guard Date() < deadline else {
                    close(fd)
                    throw PresentmentError(
                        .contextBusy, "another writer holds the context lock (waited the configured time)")
                }
                usleep(delay)
                delay = min(delay * 2, 50_000)
            }
        }

        func release() {
            guard fd >= 0 else { return }
            flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }

        deinit { release() }
    }

    /// Whether `id` is a valid credential id: 1 to 64 characters of `[A-Za-z0-9_-]` (it also names
    /// the credential's key file).
    public static func isValidCredentialID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy(isIDCharacter)
    }

    /// Characters allowed in credential ids and key file names.
    static func isIDCharacter(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7a) || c == 0x2d || c == 0x5f
    }

    /// Creates `path` as a private directory if missing; refuses one that is not private.
    static func ensurePrivateDirectory(_ path: String) throws(PresentmentError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw PresentmentError(.contextUnavailable, "cannot create the key directory")
        }
        try checkDirectory(path)
    }

    /// Writes `bytes` to a new file at `path` that no one else can have opened: a temporary created
    /// `O_CREAT|O_EXCL` with mode 0600, written in full, fsynced, then hard-linked to `path` (which
    /// fails rather than replace an existing file) and the directory fsynced. False when `path`
    /// exists; the temporary never survives.
    static func createExclusively(_ bytes: [UInt8], at path: String) throws(PresentmentError) -> Bool {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path
        let tmp = temporaryName(in: dir, for: url.lastPathComponent)
        try writeNew(bytes, to: tmp)
        defer { unlink(tmp) }
        if link(tmp, path) != 0 {
            if errno == EEXIST { return false }
            throw PresentmentError(.contextUnavailable, "cannot write the device key file")
        }
        syncDirectory(dir)
        return true
    }

    /// `.<name>.<pid>.<random>.tmp` in `dir`.
    static func temporaryName(in dir: String, for name: String) -> String {
        dir + "/.\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
    }

    /// Creates `path` (which must not exist) with mode 0600, writes `bytes`, fsyncs and closes it.
    static func writeNew(_ bytes: [UInt8], to path: String) throws(PresentmentError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw PresentmentError(.contextUnavailable, "cannot create a temporary file in the context directory")
        }
        // The mode is 0600 whatever the umask (it can only remove bits), but make sure.
        var ok = fchmod(fd, 0o600) == 0
        if ok {
            ok = bytes.withUnsafeBytes { buf -> Bool in
                var off = 0
                while off < buf.count {
                    let n = Glibc.write(fd, buf.baseAddress! + off, buf.count - off)
                    if n < 0 {
                        if errno == EINTR { continue }
                        return false
                    }
                    off += n
                }
                return true
            }
        }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok else {
            unlink(path)
            throw PresentmentError(.contextUnavailable, "cannot write a file in the context directory")
        }
    }

    static func syncDirectory(_ dir: String) {
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
    }

    /// Writes `bytes` to `url` all or nothing: a temporary (0600 from creation), fsynced, renamed over
    /// the old file, the directory fsynced.
    static func atomicWrite(_ bytes: [UInt8], to url: URL) throws(PresentmentError) {
        let dir = url.deletingLastPathComponent().path
        let tmp = temporaryName(in: dir, for: url.lastPathComponent)
        try writeNew(bytes, to: tmp)
        guard rename(tmp, url.path) == 0 else {
            unlink(tmp)
            throw PresentmentError(.contextUnavailable, "cannot write the context file")
        }
        syncDirectory(dir)
    }

    /// Deletes temporary files (`.<name>.<pid>.<random>.tmp`) left by writers killed before their
    /// rename or link: every one whose process no longer exists, or older than an hour (a recycled
    /// pid). Called with the writer lock held, when no live writer of this code has one open.
    static func removeStaleTemporaries(in dir: String) {
        guard let d = opendir(dir) else { return }
        defer { closedir(d) }
        var stale = [String]()
        while let entry = readdir(d) {
            let file = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard file.hasPrefix("."), file.hasSuffix(".tmp") else { continue }
            let parts = file.dropLast(4).split(separator: ".")
            guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]), UInt32(parts[parts.count - 1]) != nil
            else { continue }
            let path = dir + "/" + file
            var st = stat()
            guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            let dead = pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
            let old = time(nil) - st.st_mtim.tv_sec > 3600
            if dead || old { stale.append(path) }
        }
        for path in stale { unlink(path) }
    }

    /// Deletes the `keys/*.pem` files that `context` does not reference (keys of removed credentials,
    /// of imports that failed or were killed). Called with the writer lock held.
    static func removeUnreferencedKeys(in dir: String, keeping context: CredentialContext) {
        let keys = dir + "/" + keyDirectoryName
        guard let d = opendir(keys) else { return }
        defer { closedir(d) }
        let referenced = Set(context.credentials.map(\.deviceKeyReference))
        var orphans = [String]()
        while let entry = readdir(d) {
            let file = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard file.hasSuffix(".pem"), !file.hasPrefix("."), !referenced.contains(keyDirectoryName + "/" + file)
            else { continue }
            var st = stat()
            guard lstat(keys + "/" + file, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            orphans.append(keys + "/" + file)
        }
        for path in orphans { unlink(path) }
        if !orphans.isEmpty { syncDirectory(keys) }
    }
}

/// Reads a regular file's whole content from an open descriptor, refusing more than `maxBytes`.
func readBounded(_ fd: Int32, maxBytes: Int) -> [UInt8]? {
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size >= 0, Int(st.st_size) <= maxBytes else {
        return nil
    }
    var out = [UInt8](repeating: 0, count: Int(st.st_size))
    var off = 0
    while off < out.count {
        let n = out.withUnsafeMutableBytes { read(fd, $0.baseAddress! + off, $0.count - off) }
        if n < 0 {
            if errno == EINTR { continue }
            return nil
        }
        if n == 0 { break }
        off += n
    }
    guard off == out.count else { return nil }
    // The file must not have grown past the limit while we read.
    var probe: UInt8 = 0
    guard read(fd, &probe, 1) == 0 else { return nil }
    return out
}
