#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
internal import CryptoCore

/// Where an engine reads its credential context from on every call: a snapshot fixed at construction
/// (the host owns the bytes and opens a new engine for new ones), or a context directory whose
/// `context.cbor` is checked on every call and reloaded when a writer replaced it, so an open engine
/// answers from the store as it is now (a credential cancelled, removed or reinstated on disk is seen
/// by the next call, however long the engine has been open).
///
/// The check is one `lstat` of the snapshot (device, inode, size, modification and change times):
/// the store's one writer replaces the file by an atomic rename, so a new snapshot is a new inode.
/// A snapshot that disappeared or no longer loads refuses the call (`context.noContext`, or the load's
/// own rule); the engine never falls back to what it read before.
@usableFromInline package final class ContextSource: Sendable {
    private enum Origin: Sendable {
        case fixed(CredentialContext)
        /// The directory, its snapshot's path (made once), how keys resolve and whether modes are checked.
        case directory(URL, snapshot: String, keyResolver: any DeviceKeyResolver, requirePrivateFiles: Bool)
    }

    /// What identifies one version of the snapshot file.
    struct Generation: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let modified: (Int, Int)
        let changed: (Int, Int)

        static func == (a: Generation, b: Generation) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size && a.modified == b.modified
                && a.changed == b.changed
        }
    }

    private let origin: Origin
    /// The directory's snapshot as last read, with the generation it was read at.
    private let loaded: LockedValue<(generation: Generation, context: CredentialContext)?>

    /// A fixed snapshot.
    package init(_ context: CredentialContext) {
        origin = .fixed(context)
        loaded = LockedValue(nil)
    }

    /// A context directory, loaded now (its first snapshot must exist) and re-read whenever replaced.
    /// - Throws: `context.noContext` when there is no snapshot; the load's rules otherwise.
    package init(directory: URL, keyResolver: any DeviceKeyResolver, requirePrivateFiles: Bool = true)
        throws(PresentmentError)
    {
        origin = .directory(
            directory, snapshot: pathPrefix(directory) + CredentialContext.fileName, keyResolver: keyResolver,
            requirePrivateFiles: requirePrivateFiles)
        loaded = LockedValue(nil)
        _ = try current()
    }

    /// The snapshot the fixed source holds, or the directory's as first loaded (for callers that need a
    /// context before any call, such as a configuration narrowing the stored trust policy).
    package var initial: CredentialContext {
        switch origin {
        case .fixed(let context): return context
        case .directory: return loaded.withLock { $0!.context }
        }
    }

    /// The context as it is now: the fixed snapshot, or the directory's current one (reloaded when the
    /// file changed since the last call).
    @usableFromInline package func current() throws(PresentmentError) -> CredentialContext {
        switch origin {
        case .fixed(let context):
            return context
        case .directory(let directory, let path, let keyResolver, let requirePrivateFiles):
            guard let generation = Self.generation(path) else { throw PresentmentError(ContextRule.noContext) }
            if let context = loaded.withLock({ $0?.generation == generation ? $0!.context : nil }) { return context }
            // Reloaded outside the lock (a load parses the snapshot); concurrent callers may both load,
            // and the last one's result is kept: both read the file at or after `generation`.
            guard
                let context = try CredentialContext.load(
                    from: directory, keyResolver: keyResolver, requirePrivateFiles: requirePrivateFiles)
            else { throw PresentmentError(ContextRule.noContext) }
            loaded.withLock { $0 = (generation, context) }
            return context
        }
    }

    /// The snapshot file's generation, or nil when it cannot be examined (missing).
    static func generation(_ path: String) -> Generation? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return Generation(
            device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
            modified: (st.st_mtim.tv_sec, st.st_mtim.tv_nsec), changed: (st.st_ctim.tv_sec, st.st_ctim.tv_nsec))
    }
}
