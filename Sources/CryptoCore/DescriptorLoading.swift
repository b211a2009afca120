#if canImport(Glibc)
    internal import Glibc
#endif

/// Loads code by what it is, not where it lies: `dlopen` of a file already opened (and checked) through
/// a descriptor, so a file swapped in at the same path after the check is never the one loaded.
package enum DescriptorLoading {
    /// Loads so far in this process (each gets a name no earlier load had).
    private static let loads = LockedValue(0)

    /// `dlopen`s the file open on `descriptor` with `flags`; nil when it is not a loadable library.
    ///
    /// The loader is given `/proc/self/fd/N`, spelled with one more `./` segment than any earlier load
    /// of this process: glibc returns an already-loaded object whose name equals the path it is given
    /// before it opens anything, and descriptor numbers (so `/proc/self/fd/N` names) are reused, so two
    /// different files loaded through the same number would otherwise both be the first. The kernel
    /// resolves the segments away; a second load of the same file (same device and inode) is still the
    /// loaded object, as glibc matches it by file identity after opening.
    package static func open(descriptor: Int32, flags: Int32) -> UnsafeMutableRawPointer? {
        let n = loads.withLock { count in
            count += 1
            return count
        }
        let path = "/proc/self/fd/" + String(repeating: "./", count: n) + String(descriptor)
        return dlopen(path, flags)
    }
}
