// One CBOR head (RFC 8949 §3) at a time: the only place that reads a head's bytes. The validator
// (CBORValidator.swift) builds the structure and every rule on top of these tokens.
//
// Written here rather than over libcbor's `cbor_stream_decode` (which the engine used until 0.20):
// reading a head is a dozen lines of the RFC, libcbor 0.8 rejects well-formed heads (single-byte tags
// 6–20, simple values 0–19, PJK/libcbor#307) and drops float bits, and its soname (0.8 on Debian 12,
// 0.10 on Debian 13 and Ubuntu 24.04) kept the shipped artifacts to one distribution. libcbor stays as
// the independent peer this decoder is checked against (Tests/MdocCBORTests/TokenizerPeerTests.swift)
// and as the benchmark's baseline; nothing shipped links it.

/// The kind of one head reported by the tokenizer.
enum TokenKind: UInt8 {
    case unsigned, negative, bytes, text, bytesStart, textStart, array, map, arrayStart, mapStart,
        tag, simple, half, single, double, breakCode, error
}

/// One decoded head. For definite strings, `payloadOffset` is where the content starts and `length`
/// (total bytes consumed, head + content) covers it.
struct Token {
    var kind: TokenKind = .error
    /// Integer value, negative-integer argument, string length, container count (pairs for maps),
    /// tag number, simple value, or a float's bits as written (2, 4 or 8 bytes, big-endian).
    var value: UInt64 = 0
    /// Total bytes consumed by this head (and, for definite strings, their content).
    var length: Int = 0
    /// Head length in bytes.
    var headLength: Int = 0
    /// Set when the input ended inside this head or string.
    var truncated = false
}

enum Tokenizer {
    /// Decodes the head at `offset` of the buffer at `base`, which ends at `end` (`offset < end`).
    /// A head whose argument or definite string content runs past `end` comes back `truncated`; a
    /// reserved additional information value (28–30), an indefinite length on a major type without one
    /// (0, 1, 6) and a two-byte simple value below 32 come back as `.error`.
    @inline(__always)
    static func next(_ base: UnsafePointer<UInt8>, offset: Int, end: Int) -> Token {
        let b = base[offset]
        let info = b & 0x1f
        guard info < 24 else { return withArgumentBytes(base, offset: offset, end: end) }
        // The argument is the head's low five bits: most heads of an mdoc structure, read inline.
        var t = Token()
        t.value = UInt64(info)
        t.length = 1
        t.headLength = 1
        switch b >> 5 {
        case 0: t.kind = .unsigned
        case 1: t.kind = .negative
        case 2, 3:
            // A definite string: its content must be there.
            guard Int(info) < end &- offset else {
                t.truncated = true
                return t
            }
            t.kind = b >> 5 == 2 ? .bytes : .text
            t.length = 1 &+ Int(info)
        case 4: t.kind = .array
        case 5: t.kind = .map
        case 6: t.kind = .tag
        default: t.kind = .simple  // 0–19 unassigned, 20 false, 21 true, 22 null, 23 undefined
        }
        return t
    }

    /// A head whose additional information is 24 or more: argument bytes, an indefinite length, the
    /// break code, or a reserved value.
    @inline(never)
    static func withArgumentBytes(_ base: UnsafePointer<UInt8>, offset: Int, end: Int) -> Token {
        var t = Token()
        let b = base[offset]
        let major = b >> 5
        let info = b & 0x1f
        switch info {
        case 24...27:
            break
        case 31:
            // An indefinite length, or the break code.
            switch major {
            case 2: t.kind = .bytesStart
            case 3: t.kind = .textStart
            case 4: t.kind = .arrayStart
            case 5: t.kind = .mapStart
            case 7: t.kind = .breakCode
            default: return t  // 0, 1, 6: not well-formed
            }
            t.length = 1
            t.headLength = 1
            return t
        default:
            return t  // 28–30: reserved, not well-formed
        }
        // 1, 2, 4 or 8 argument bytes, big-endian.
        let n = 1 &<< Int(info &- 24)
        guard n < end &- offset else {
            t.truncated = true
            return t
        }
        let bytes = UnsafeRawPointer(base + (offset &+ 1))
        let argument: UInt64
        switch n {
        case 1: argument = UInt64(bytes.load(as: UInt8.self))
        case 2: argument = UInt64(UInt16(bigEndian: bytes.loadUnaligned(as: UInt16.self)))
        case 4: argument = UInt64(UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)))
        default: argument = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
        }
        let headLength = 1 &+ n
        t.value = argument
        t.length = headLength
        t.headLength = headLength
        switch major {
        case 0: t.kind = .unsigned
        case 1: t.kind = .negative
        case 2, 3:
            // A definite string: its content must be there.
            guard argument <= UInt64(end &- offset &- headLength) else {
                t.truncated = true
                return t
            }
            t.kind = major == 2 ? .bytes : .text
            t.length = headLength &+ Int(argument)
        case 4: t.kind = .array
        case 5: t.kind = .map
        case 6: t.kind = .tag
        default:
            switch info {
            case 24:
                // Two-byte simple values below 32 are not well-formed (RFC 8949 §3.3).
                guard argument >= 32 else {
                    t = Token()
                    t.length = 2
                    return t
                }
                t.kind = .simple
            case 25: t.kind = .half
            case 26: t.kind = .single
            default: t.kind = .double
            }
        }
        return t
    }
}
