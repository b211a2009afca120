#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole regular file with POSIX calls, refusing anything larger than `maxBytes` (checked on
/// the open descriptor, then enforced while reading). Returns nil on any error.
func readFileBounded(_ path: String, maxBytes: Int) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size >= 0, Int(st.st_size) <= maxBytes else { return nil }
    var out = [UInt8](repeating: 0, count: Int(st.st_size))
    var off = 0
    while off < out.count {
        let n = out.withUnsafeMutableBytes { read(fd, $0.baseAddress! + off, $0.count - off) }
        if n < 0 { if errno == EINTR { continue }; return nil }
        if n == 0 { break }
        off += n
    }
    guard off == out.count else { return nil }
    // The file must not have grown past the limit while we read.
    var probe: UInt8 = 0
    guard read(fd, &probe, 1) == 0 else { return nil }
    return out
}
