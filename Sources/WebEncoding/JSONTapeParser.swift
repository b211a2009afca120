internal import CWebEncodingSIMD
internal import CryptoCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The parser: one pass, no recursion (open containers on a stack bounded by the depth limit), one
/// node per value.
struct TapeParser {
    /// Objects with up to this many members compare keys pairwise (no allocation); larger ones use a set.
    static let pairwiseKeys = 16
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: JSONValue.Limits
    var i = 0
    /// The depth of the value being read (recorded in its nodes).
    var depth: UInt16 = 0
    /// The nodes so far: `nodeCount` of `capacity`, at the start of a block with room after them for
    /// a copy of the input; the block is handed to the document's storage at the end (`finish()`) or
    /// deallocated by the caller on a refusal (`discard()`).
    var nodes: UnsafeMutablePointer<JSONDocument.Node>
    var nodeCount = 0
    var capacity: Int

    typealias ParseError = JSONValue.ParseError

    /// A finished document's block, its nodes and its copy of the input.
    struct Parsed {
        let block: UnsafeMutableRawPointer
        let nodes: UnsafeBufferPointer<JSONDocument.Node>
        let bytes: UnsafeBufferPointer<UInt8>
    }

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONValue.Limits) {
        self.bytes = bytes
        self.limits = limits
        // About one node per 8 bytes of typical JSON; doubled when exceeded.
        capacity = bytes.count / 8 + 8
        nodes = Self.block(nodes: capacity, bytes: bytes.count)
    }

    /// A block for `count` nodes followed by `bytes` bytes.
    private static func block(nodes count: Int, bytes: Int) -> UnsafeMutablePointer<JSONDocument.Node> {
        UnsafeMutableRawPointer.allocate(
            byteCount: count * MemoryLayout<JSONDocument.Node>.stride + bytes,
            alignment: MemoryLayout<JSONDocument.Node>.alignment
        ).bindMemory(to: JSONDocument.Node.self, capacity: count)
    }

    mutating func grow() {
        let bigger = Self.block(nodes: capacity * 2, bytes: bytes.count)
        bigger.moveInitialize(from: nodes, count: nodeCount)
        UnsafeMutableRawPointer(nodes).deallocate()
        nodes = bigger
        capacity *= 2
    }

    /// Copies the input after the nodes and hands the block over.
    func finish() -> Parsed {
        let block = UnsafeMutableRawPointer(nodes)
        let tail = block + capacity * MemoryLayout<JSONDocument.Node>.stride
        if !bytes.isEmpty { tail.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        return Parsed(
            block: block, nodes: UnsafeBufferPointer(start: nodes, count: nodeCount),
            bytes: UnsafeBufferPointer(
                start: tail.bindMemory(to: UInt8.self, capacity: bytes.count), count: bytes.count))
    }

    /// Deallocates the block of a refused document.
    func discard() { UnsafeMutableRawPointer(nodes).deallocate() }

    @inline(__always)
    mutating func skipSpace() {
        // Compact JSON (what `JSON.stringify` writes) has no whitespace: one compare finds that.
        guard i < bytes.count, bytes[i] <= 0x20 else { return }
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0a || bytes[i] == 0x0d {
            i += 1
        }
    }

    @inline(__always)
    mutating func add(_ kind: JSONDocument.Kind, _ start: Int, _ end: Int, escaped: Bool = false) -> Int {
        if nodeCount == capacity { grow() }
        (nodes + nodeCount).initialize(
            to: .init(
                kind: kind, escaped: escaped, depth: depth, start: UInt32(start), end: UInt32(end),
                next: UInt32(nodeCount + 1), count: 0))
        nodeCount += 1
        return nodeCount - 1
    }

    /// The whole value, iteratively: an open container is a frame on a stack bounded by the depth
    /// limit (its node index), its member or element count kept in its node, so the loop holds the
    /// parser's state in one function (no call per value). Each step reads a value at the current
    /// depth; after it, the innermost open container takes a `,` (the next member or element) or its
    /// closing bracket (closed, and the step after a value repeats one level up).
    mutating func document() throws(ParseError) {
        guard limits.maxDepth > 0 else { throw ParseError(.tooDeep) }
        // Each open container took a byte, and a value opens one only below the depth limit.
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: max(1, min(limits.maxDepth, bytes.count))) {
            (open) throws(ParseError) in try document(open: open.baseAddress!)
        }
    }

    private mutating func document(open: UnsafeMutablePointer<Int>) throws(ParseError) {
        // Open containers: `open[0..<depth]`; a value read now is at depth `depth`.
        var depth = 0
        // Past `pairwiseKeys` members of an object, its keys are kept in a set (decoded, hashed with
        // the process's random seed) so the duplicate check stays linear; by depth, made on first need.
        var seen: [Set<[UInt8]>?] = []
        value: while true {
            guard depth < limits.maxDepth else { throw ParseError(.tooDeep) }
            guard i < bytes.count else { throw ParseError(.endsEarly) }
            self.depth = UInt16(clamping: depth)
            switch bytes[i] {
            case UInt8(ascii: "\""):
                _ = try string()
            case UInt8(ascii: "{"):
                let me = add(.object, i, i)
                i += 1
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    close(me, count: 0)
                } else {
                    open[depth] = me
                    depth += 1
                    try key(of: me, depth: depth, seen: &seen)
                    continue value
                }
            case UInt8(ascii: "["):
                let me = add(.array, i, i)
                i += 1
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    close(me, count: 0)
                } else {
                    open[depth] = me
                    depth += 1
                    continue value
                }
            case UInt8(ascii: "t"):
                let s = i
                try literal("true")
                _ = add(.true, s, i)
            case UInt8(ascii: "f"):
                let s = i
                try literal("false")
                _ = add(.false, s, i)
            case UInt8(ascii: "n"):
                let s = i
                try literal("null")
                _ = add(.null, s, i)
            default:
                let s = i
                try number()
                _ = add(.number, s, i)
            }
            // A value is complete: the innermost open container continues or closes.
            while depth > 0 {
                let me = open[depth - 1]
                let count = Int(nodes[me].count) + 1
                nodes[me].count = UInt32(count)
                skipSpace()
                if nodes[me].kind == .object {
                    guard count <= limits.maxMembers else { throw ParseError(.tooManyMembers) }
                    guard i < bytes.count else { throw ParseError(.endsEarly) }
                    if bytes[i] == UInt8(ascii: ",") {
                        i += 1
                        try key(of: me, depth: depth, seen: &seen)
                        continue value
                    }
                    guard bytes[i] == UInt8(ascii: "}") else { throw ParseError(.objectUnterminated) }
                    if count > Self.pairwiseKeys { seen[depth - 1] = nil }
                } else {
                    guard count <= limits.maxMembers else { throw ParseError(.tooManyElements) }
                    guard i < bytes.count else { throw ParseError(.endsEarly) }
                    if bytes[i] == UInt8(ascii: ",") {
                        i += 1
                        skipSpace()
                        continue value
                    }
                    guard bytes[i] == UInt8(ascii: "]") else { throw ParseError(.arrayUnterminated) }
                }
                i += 1
                close(me, count: count)
                depth -= 1
            }
            return
        }
    }

    /// A member's key of the object at node `me` (its members' values are at `depth`), checked against
    /// the object's earlier keys, and the colon after it; leaves `i` at the member's value.
    @inline(__always)
    private mutating func key(of me: Int, depth: Int, seen: inout [Set<[UInt8]>?]) throws(ParseError) {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw ParseError(.keyNotString) }
        // A key has its object's depth.
        self.depth = UInt16(clamping: depth - 1)
        let k = try string()
        // The keys so far are found by walking this object's nodes (a key, then its value, whose
        // `next` is the following key): no array of keys per object.
        let memberCount = Int(nodes[me].count)
        if memberCount < Self.pairwiseKeys {
            var other = me + 1
            while other != k {
                if JSONDocument.keysEqual(bytes, nodes[other], nodes[k]) { throw ParseError(.duplicateKey) }
                other = Int(nodes[other + 1].next)
            }
        } else {
            try manyKeys(of: me, key: k, depth: depth, seen: &seen)
        }
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw ParseError(.missingColon) }
        i += 1
        skipSpace()
    }

    /// The duplicate check for a key of an object past `pairwiseKeys` members: through the object's set.
    @inline(never)
    private mutating func manyKeys(of me: Int, key k: Int, depth: Int, seen: inout [Set<[UInt8]>?]) throws(ParseError) {
        if seen.count < depth { seen += Array(repeating: nil, count: depth - seen.count) }
        if seen[depth - 1] == nil {
            var s = Set<[UInt8]>(minimumCapacity: 2 * Self.pairwiseKeys)
            var other = me + 1
            while other != k {
                s.insert(JSONDocument.keyBytes(bytes, nodes[other]))
                other = Int(nodes[other + 1].next)
            }
            seen[depth - 1] = s
        }
        guard seen[depth - 1]!.insert(JSONDocument.keyBytes(bytes, nodes[k])).inserted else {
            throw ParseError(.duplicateKey)
        }
    }

    /// Finishes a container: its closing position, child count and the index past its subtree.
    @inline(__always)
    mutating func close(_ me: Int, count: Int) {
        nodes[me].end = UInt32(i)
        nodes[me].count = UInt32(count)
        nodes[me].next = UInt32(nodeCount)
    }

    mutating func literal(_ s: StaticString) throws(ParseError) {
        let n = s.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw ParseError(.invalidLiteral) }
        let lit = UnsafeBufferPointer(start: s.utf8Start, count: n)
        for k in 0..<n where bytes[i + k] != lit[k] { throw ParseError(.invalidLiteral) }
        i += n
    }

    mutating func number() throws(ParseError) {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 else {
            throw ParseError(.invalidValue)
        }
        if bytes[i] == 0x30 { i += 1 } else { while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 } }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let d = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            guard i > d else { throw ParseError(.invalidNumber) }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let d = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            guard i > d else { throw ParseError(.invalidNumber) }
        }
        // Finite and at most 64 characters (a longer lexeme or one that overflows a double is refused).
        guard i - start <= 64, JSONNumber(String(decoding: bytes[start..<i], as: UTF8.self)) != nil else {
            throw ParseError(.invalidNumber)
        }
    }

    /// Where the run of printable ASCII string content starting at `start` ends: the offset of the
    /// first quote, backslash, control character or byte ≥ 0x80, or the end of the input. Eight bytes
    /// at a time; the lowest flagged byte of a word is exact (a borrow only flags bytes above it).
    @inline(__always)
    private func asciiRunEnd(from start: Int) -> Int {
        let n = bytes.count
        var k = start
        #if arch(x86_64)
            // Two 16-byte blocks first with SSE2 (most strings, keys and names, end in them), then
            // 32-byte blocks with AVX2 where the CPU has it; what is left goes through the words below.
            if k + 32 <= n {
                var stop = Int(mdoc_json_stop16(bytes.baseAddress! + k))
                if stop < 16 { return k + stop }
                stop = Int(mdoc_json_stop16(bytes.baseAddress! + k + 16))
                if stop < 16 { return k + 16 + stop }
                k += 32
                k += mdoc_json_plain_ascii(bytes.baseAddress! + k, n - k)
            } else if k + 16 <= n {
                let stop = Int(mdoc_json_stop16(bytes.baseAddress! + k))
                if stop < 16 { return k + stop }
                k += 16
            }
        #endif
        #if _endian(little)
            let p = UnsafeRawPointer(bytes.baseAddress!)
            // Three words first (most strings are keys and names that end in them), then 32-byte
            // blocks with AVX2 where the CPU has it (`mdoc_json_plain_ascii`), then words again.
            var words = 0
            while k + 8 <= n {
                let stops = JSONScan.asciiStops(p.loadUnaligned(fromByteOffset: k, as: UInt64.self))
                if stops != 0 { return k + stops.trailingZeroBitCount >> 3 }
                k += 8
                words += 1
                // The vector scan stops at the first flagged byte (or before the last partial block);
                // the next word finds that byte at its start.
                if words == 3 { k += mdoc_json_plain_ascii(bytes.baseAddress! + k, n - k) }
            }
        #endif
        while k < n {
            let b = bytes[k]
            if b == 0x22 || b == 0x5c || b < 0x20 || b >= 0x80 { return k }
            k += 1
        }
        return n
    }

    /// Where the escape-free run of string content starting at `start` ends: the closing quote's
    /// offset (found with memchr), or the first backslash or control character before it, or the
    /// end of the input.
    private func plainEnd(from start: Int) -> Int {
        let b = bytes
        guard start < b.count, let q = memchr(b.baseAddress! + start, 0x22, b.count - start) else { return b.count }
        let end = b.baseAddress!.distance(to: q.assumingMemoryBound(to: UInt8.self))
        // Eight bytes at a time: any byte < 0x20 or == 0x5c sends us to the slow path.
        var k = JSONScan.plainRun(UnsafeRawPointer(b.baseAddress!), from: start, to: end, stopAtQuote: false)
        while k < end {
            if b[k] == 0x5c || b[k] < 0x20 { return k }
            k += 1
        }
        return end
    }

    /// A string: validated (escapes, surrogates, control characters, UTF-8, length) and recorded by
    /// its content range; returns its node index. The printable-ASCII case (keys, names, base64url:
    /// valid UTF-8 by construction) is read in line; anything else in `otherString`.
    @inline(__always)
    mutating func string() throws(ParseError) -> Int {
        i += 1  // opening quote
        let start = i
        let a = asciiRunEnd(from: i)
        if a < bytes.count, bytes[a] == UInt8(ascii: "\"") {
            guard a - i <= limits.maxStringBytes else { throw ParseError(.stringTooLong) }
            i = a + 1
            return add(.string, start, a)
        }
        return try otherString(start: start, asciiEnd: a)
    }

    /// `string` past its first byte that is not printable ASCII, at `asciiEnd`.
    @inline(never)
    mutating func otherString(start: Int, asciiEnd a: Int) throws(ParseError) -> Int {
        // Fast path: no escapes, other UTF-8 to validate.
        let j = a < bytes.count && bytes[a] >= 0x80 ? plainEnd(from: a) : a
        if j < bytes.count, bytes[j] == UInt8(ascii: "\"") {
            guard j - i <= limits.maxStringBytes else { throw ParseError(.stringTooLong) }
            // Bytes before `a` are ASCII and the one at `a` is not: the full check runs from there.
            guard UTF8Check.isValidMultibyte(bytes.baseAddress! + a, count: j - a) else {
                throw ParseError(.invalidUTF8)
            }
            i = j + 1
            return add(.string, start, j)
        }
        // Slow path: decode into a scratch buffer to check the decoded text.
        var out = [UInt8]()
        while true {
            guard i < bytes.count else { throw ParseError(.stringUnterminated) }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { break }
            if b < 0x20 { throw ParseError(.controlCharacter) }
            if b == UInt8(ascii: "\\") {
                i += 1
                guard i < bytes.count else { throw ParseError(.stringUnterminated) }
                switch bytes[i] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    out.append(0x20)  // one byte, any printable stand-in: the length is what counts
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "\\"), bytes[i + 2] == UInt8(ascii: "u")
                        else { throw ParseError(.loneSurrogate) }
                        i += 2
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else {
                            throw ParseError(.loneSurrogate)
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw ParseError(.loneSurrogate)
                    }
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default: throw ParseError(.invalidEscape)
                }
                i += 1
            } else {
                out.append(b)
                i += 1
            }
            guard out.count <= limits.maxStringBytes else {
                throw ParseError(.stringTooLong)
            }
        }
        let valid = out.withUnsafeBufferPointer { buf in
            buf.isEmpty || UTF8Check.isValid(buf.baseAddress!, count: buf.count)
        }
        guard valid else { throw ParseError(.invalidUTF8) }
        let end = i
        i += 1  // closing quote
        return add(.string, start, end, escaped: true)
    }

    mutating func hex4() throws(ParseError) -> UInt32 {
        guard i + 4 < bytes.count else { throw ParseError(.invalidUnicodeEscape) }
        var v: UInt32 = 0
        for k in 1...4 {
            let c = bytes[i + k]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw ParseError(.invalidUnicodeEscape)
            }
            v = v << 4 | d
        }
        i += 4
        return v
    }
}
