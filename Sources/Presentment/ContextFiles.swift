#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR

/// The file primitives of the context store: the writer lock, files created private from their first
/// byte, atomic replacement, and the removal of what killed writers and removed credentials leave.
extension CredentialContext {
    /// The writer lock: an exclusive `flock` on `.lock` (created 0600, never removed), held from
    /// `acquire` until `release`. `flock` locks belong to the open file description, so two threads
    /// of one process exclude each other as two processes do. An instance exists only while it holds
    /// the lock, so its descriptor is closed exactly once: a refused writer closes its own before any
    /// instance exists (a second close would close whatever another thread had opened meanwhile under
    /// the same number).
    final class WriterLock {
        private var fd: Int32

        private init(locked fd: Int32) { self.fd = fd }

        /// Takes the lock, waiting up to `timeout` seconds.
        /// - Throws: `ContextRule.lockFileUnavailable`, `.lockFailed`, or `.busy` after the wait.
        static func acquire(directory: String, timeout: Double) throws(PresentmentError) -> WriterLock {
            let fd = open(
                directory + "/" + CredentialContext.lockFileName, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw PresentmentError(ContextRule.lockFileUnavailable) }
            let deadline = Date().addingTimeInterval(max(0, timeout))
            var delay: useconds_t = 1000
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let e = errno
                guard e == EWOULDBLOCK || e == EINTR else {
                    close(fd)
                    throw PresentmentError(ContextRule.lockFailed)
                }
                guard Date() < deadline else {
                    close(fd)
                    throw PresentmentError(ContextRule.busy)
                }
                usleep(delay)
                delay = min(delay * 2, 50_000)
            }
            return WriterLock(locked: fd)
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
            throw PresentmentError(ContextRule.keyDirectoryUncreatable)
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
            throw PresentmentError(ContextRule.keyFileUnwritable)
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
            throw PresentmentError(ContextRule.temporaryFileUncreatable)
        }
        // The mode is 0600 whatever the umask (it can only remove bits), but make sure.
        var ok = fchmod(fd, 0o600) == 0
        if ok {
            // unsafe: write(2) takes a pointer to the snapshot's bytes.
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
            throw PresentmentError(ContextRule.fileUnwritable)
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
        try replaceFile(bytes, atPath: url.path)
    }

    /// Writes `bytes` to the regular file at `path` all or nothing (the context's file, the CLI's
    /// output and state files): a temporary in the same directory, 0600 from its creation, written in
    /// full and fsynced, renamed over `path`, the directory fsynced. A reader sees the old file or the
    /// new one, never part of either; a symbolic link at `path` is replaced, never followed.
    /// - Throws: `ContextRule.temporaryFileUncreatable` or `.fileUnwritable` (the temporary),
    ///   `.contextFileUnwritable` (the rename).
    package static func replaceFile(_ bytes: [UInt8], atPath path: String) throws(PresentmentError) {
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let dir = slash.map { $0 == path.utf8.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.utf8.index(after: $0)...]) } ?? path
        let tmp = temporaryName(in: dir, for: name)
        try writeNew(bytes, to: tmp)
        guard rename(tmp, path) == 0 else {
            unlink(tmp)
            throw PresentmentError(ContextRule.contextFileUnwritable)
        }
        syncDirectory(dir)
    }

    /// Deletes temporary files (`.<name>.<pid>.<random>.tmp`) left by writers killed before their
    /// rename or link: every one whose process no longer exists, or older than an hour (a recycled
    /// pid). Called with the writer lock held, when no live writer of this code has one open.
    static func removeStaleTemporaries(in dir: String) {
        removeEntries(in: dir) { file, st in
            guard file.hasPrefix("."), file.hasSuffix(".tmp") else { return false }
            let parts = file.dropLast(4).split(separator: ".")
            guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]), UInt32(parts[parts.count - 1]) != nil
            else { return false }
            let dead = pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
            let old = time(nil) - st.st_mtim.tv_sec > 3600
            return dead || old
        }
    }

    /// Removes the regular files of `dir` that `shouldRemove` selects, through a descriptor of the
    /// directory opened without following a link (a `dir` that is a symbolic link is left alone), each
    /// examined and unlinked relative to it (`fstatat`/`unlinkat`, never following a link). Returns
    /// how many were removed.
    @discardableResult
    static func removeEntries(in dir: String, where shouldRemove: (String, stat) -> Bool) -> Int {
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        // fdopendir takes the descriptor; a second one is kept for fstatat/unlinkat.
        let dirFD = dup(fd)
        guard dirFD >= 0, let d = fdopendir(fd) else {
            close(fd)
            if dirFD >= 0 { close(dirFD) }
            return 0
        }
        defer {
            closedir(d)
            close(dirFD)
        }
        var chosen = [String]()
        while let entry = readdir(d) {
            // unsafe: readdir(3) gives the name as a fixed C array in the dirent.
            let file = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard file != ".", file != "..", !file.contains("/") else { continue }
            var st = stat()
            guard fstatat(dirFD, file, &st, AT_SYMLINK_NOFOLLOW) == 0, st.st_mode & S_IFMT == S_IFREG,
                shouldRemove(file, st)
            else { continue }
            chosen.append(file)
        }
        var removed = 0
        for file in chosen where unlinkat(dirFD, file, 0) == 0 { removed += 1 }
        if removed > 0 { fsync(dirFD) }
        return removed
    }

    /// Deletes the `keys/*.pem` files that `context` does not reference (keys of removed credentials,
    /// of imports that failed or were killed). Called with the writer lock held.
    static func removeUnreferencedKeys(in dir: String, keeping context: CredentialContext) {
        let referenced = Set(context.credentials.map(\.deviceKeyReference))
        removeEntries(in: dir + "/" + keyDirectoryName) { file, _ in
            file.hasSuffix(".pem") && !file.hasPrefix(".") && !referenced.contains(keyDirectoryName + "/" + file)
        }
    }
}

/// Checks a file through the descriptor it will be read from (so the file examined is the file read):
/// a regular file, and with `requirePrivate` owned by this user and neither readable nor writable by
/// group or others. Each fault is refused by the caller's rule for it.
/// - Returns: the file's size in bytes.
func checkOpenedFile<R: RefusalRule>(
    _ fd: Int32, requirePrivate: Bool, unexaminable: R, notRegular: R, notOwned: R, notPrivate: R
) throws(PresentmentError) -> Int {
    var st = stat()
    guard fstat(fd, &st) == 0 else { throw PresentmentError(unexaminable) }
    guard st.st_mode & S_IFMT == S_IFREG else { throw PresentmentError(notRegular) }
    if requirePrivate {
        guard st.st_uid == geteuid() else { throw PresentmentError(notOwned) }
        guard st.st_mode & 0o077 == 0 else { throw PresentmentError(notPrivate) }
    }
    return Int(st.st_size)
}

/// `directory`'s path with one separator after it: a file name inside is appended as text (the snapshot,
/// key references), not through `URL.appendingPathComponent`, whose first use in a process costs more
/// than reading a snapshot.
func pathPrefix(_ directory: URL) -> String {
    let path = directory.path
    return path.hasSuffix("/") ? path : path + "/"
}

/// Reads a regular file's whole content from an open descriptor whose size `checkOpenedFile` just
/// returned, refusing more than `maxBytes` (and a file that changed size meanwhile).
func readBounded(_ fd: Int32, maxBytes: Int, size: Int) -> [UInt8]? {
    guard size >= 0, size <= maxBytes else { return nil }
    var out = [UInt8](repeating: 0, count: size)
    var off = 0
    while off < out.count {
        // unsafe: read(2) fills the array in place.
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
