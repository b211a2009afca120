internal import CBase64
internal import CryptoCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// A JSON text (RFC 8259) parsed strictly onto a flat tape: one node per value in document order,
/// each with its byte range in the kept input and the index just past its subtree. Nothing is built
/// per value: strings are decoded when read (one without escapes straight from its bytes), numbers
/// kept as their lexeme, objects looked up by comparing key bytes. The whole document is one input
/// copy and one node array, released in two steps.
///
/// The rules, checked while parsing with the rule broken as the error: bounded size, depth, member
/// count and string length; duplicate object keys refused; invalid UTF-8, lone surrogates, control
/// characters and bad escapes in strings refused; the number grammar; nothing after the value.
package struct JSONDocument: Sendable {
    /// Kind of one node.
    enum Kind: UInt8 { case object, array, string, number, `true`, `false`, null }

    struct Node {
        var kind: Kind
        /// A string with at least one escape (decoded through the slow path).
        var escaped: Bool
        /// Nesting depth of a value (the top-level value is 0; a key has its object's; clamped at
        /// 65,535, far past any limit).
        var depth: UInt16
        /// Strings: the content between the quotes; numbers: the lexeme; containers: the brackets.
        var start: UInt32
        var end: UInt32
        /// Index of the node after this one's subtree.
        var next: UInt32
        /// Members (objects: key and value nodes alternate as children) or elements.
        var count: UInt32
    }

    /// The input and its nodes, immutable once made (so shared between threads as is): one block the
    /// parser filled and this storage owns, the nodes then a copy of the input, read without bounds
    /// checks (every index a node holds was written by the parser) and without retaining an array.
    final class Storage: @unchecked Sendable {
        let nodes: UnsafeBufferPointer<Node>
        let bytes: UnsafeBufferPointer<UInt8>
        private let block: UnsafeMutableRawPointer
        fileprivate init(_ parsed: TapeParser.Parsed) {
            nodes = parsed.nodes
            bytes = parsed.bytes
            block = parsed.block
        }
        deinit { block.deallocate() }
    }

    let storage: Storage

    /// The top-level value.
    package var root: JSONNode { JSONNode(storage: storage, index: 0) }

    /// Parses `bytes`.
    package init(_ bytes: [UInt8], limits: JSONValue.Limits = .init()) throws(JSONValue.ParseError) {
        let r: Result<JSONDocument, JSONValue.ParseError> = bytes.withUnsafeBufferPointer { b in
            Result { () throws(JSONValue.ParseError) in try JSONDocument(b, limits: limits) }
        }
        self = try r.get()
    }

    /// Parses bytes handed over in a buffer (copied once, into the block that holds the nodes).
    package init(_ bytes: UnsafeBufferPointer<UInt8>, limits: JSONValue.Limits = .init())
        throws(JSONValue.ParseError)
    {
        guard bytes.count <= limits.maxBytes else { throw JSONValue.ParseError(.tooLarge) }
        guard bytes.count < Int(UInt32.max) else { throw JSONValue.ParseError(.tooLarge) }
        var p = TapeParser(bytes: bytes, limits: limits)
        do throws(JSONValue.ParseError) {
            p.skipSpace()
            try p.document()
            p.skipSpace()
            guard p.i == bytes.count else { throw JSONValue.ParseError(.trailingBytes) }
        } catch {
            p.discard()
            throw error
        }
        storage = Storage(p.finish())
    }
}

/// One value of a `JSONDocument`: cheap to copy (a reference and an index).
package struct JSONNode: Sendable {
    let storage: JSONDocument.Storage
    let index: Int

    var node: JSONDocument.Node { storage.nodes[index] }

    /// True for an object.
    package var isObject: Bool { node.kind == .object }
    /// True for an array.
    package var isArray: Bool { node.kind == .array }
    /// True for `null`.
    package var isNull: Bool { node.kind == .null }
    /// True for a string.
    package var isString: Bool { node.kind == .string }
    /// True for the empty string `""` (decided from the raw text: an escape always decodes to at
    /// least one byte, so nothing is unescaped).
    package var isEmptyString: Bool {
        let n = node
        return n.kind == .string && n.start == n.end
    }

    /// The boolean, when this is one.
    package var bool: Bool? {
        switch node.kind {
        case .true: true
        case .false: false
        default: nil
        }
    }

    /// The number, when this is one.
    package var number: JSONNumber? {
        let n = node
        guard n.kind == .number else { return nil }
        return JSONNumber(String(decoding: storage.bytes[Int(n.start)..<Int(n.end)], as: UTF8.self))
    }

    /// The string, decoded, when this is one.
    package var string: String? {
        let n = node
        guard n.kind == .string else { return nil }
        if !n.escaped {
            // From a buffer pointer: String's contiguous UTF-8 path (a slice goes through the generic one).
            return String(
                decoding: UnsafeBufferPointer(rebasing: storage.bytes[Int(n.start)..<Int(n.end)]), as: UTF8.self)
        }
        return String(decoding: JSONDocument.unescape(storage.bytes, Int(n.start)..<Int(n.end)), as: UTF8.self)
    }

    /// Calls `body` once with the string's decoded UTF-8 bytes and returns true, when this is a
    /// string (false otherwise): in place for a string without escapes, no `String` made; an escaped
    /// one is unescaped first. Not generic, so a reader taking many strings runs no generic code.
    package func withStringBytes(_ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        let n = node
        guard n.kind == .string else { return false }
        let range = Int(n.start)..<Int(n.end)
        if !n.escaped {
            body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: storage.bytes[range])))
        } else {
            JSONDocument.unescape(storage.bytes, range).withUnsafeBytes { body($0) }
        }
        return true
    }

    /// Whether this is a string equal to `s` (compared decoded, without making a `String`).
    package func isString(_ s: String) -> Bool {
        guard node.kind == .string else { return false }
        return withUTF8Bytes(s) { JSONDocument.keyEquals(storage, index, $0) }
    }

    /// Whether this is a string spelling `s` byte for byte (no `String` made; for the fixed member
    /// names a reader looks for).
    package func spells(_ s: StaticString) -> Bool {
        guard node.kind == .string else { return false }
        return JSONDocument.keyEquals(
            storage, index, UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    /// Members (objects) or elements (arrays); 0 otherwise.
    package var count: Int {
        let n = node
        return n.kind == .object || n.kind == .array ? Int(n.count) : 0
    }

    /// The elements, when this is an array.
    package var elements: [JSONNode]? {
        let n = node
        guard n.kind == .array else { return nil }
        var out = [JSONNode]()
        out.reserveCapacity(Int(n.count))
        var k = index + 1
        for _ in 0..<n.count {
            out.append(JSONNode(storage: storage, index: k))
            k = Int(storage.nodes[k].next)
        }
        return out
    }

    /// Calls `body` with each element in order (arrays only), without an array of them.
    package func forEachElement<E: Error>(_ body: (JSONNode) throws(E) -> Void) throws(E) {
        let n = node
        guard n.kind == .array else { return }
        var k = index + 1
        for _ in 0..<n.count {
            try body(JSONNode(storage: storage, index: k))
            k = Int(storage.nodes[k].next)
        }
    }

    /// Calls `body` with the decoded UTF-8 bytes of each string of an array of exactly `count` strings
    /// and returns true; false, without calling `body`, for anything else. In place when no string has
    /// an escape (no node, array or `String` made); escaped strings are unescaped into one buffer first.
    package func withStringElements(count: Int, _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>) -> Void)
        -> Bool
    {
        let n = node
        guard n.kind == .array, Int(n.count) == count else { return false }
        let nodes = storage.nodes
        var k = index + 1
        var escaped = false
        for _ in 0..<count {
            let e = nodes[k]
            guard e.kind == .string else { return false }
            escaped = escaped || e.escaped
            k = Int(e.next)
        }
        return withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: count) { views in
            let bytes = storage.bytes
            func each(_ visit: (Int, Range<Int>, Bool) -> Void) {
                var k = index + 1
                for i in 0..<count {
                    let e = nodes[k]
                    visit(i, Int(e.start)..<Int(e.end), e.escaped)
                    k = Int(e.next)
                }
            }
            if !escaped {
                bytes.withUnsafeBytes { all in
                    each { i, range, _ in
                        views.initializeElement(at: i, to: UnsafeRawBufferPointer(rebasing: all[range]))
                    }
                    body(UnsafeBufferPointer(views))
                }
            } else {
                var joined = [UInt8]()
                var ranges = [Range<Int>]()
                each { _, range, escaped in
                    let start = joined.count
                    joined += escaped ? JSONDocument.unescape(bytes, range) : Array(bytes[range])
                    ranges.append(start..<joined.count)
                }
                joined.withUnsafeBytes { all in
                    for (i, range) in ranges.enumerated() {
                        views.initializeElement(at: i, to: UnsafeRawBufferPointer(rebasing: all[range]))
                    }
                    body(UnsafeBufferPointer(views))
                }
            }
            return true
        }
    }

    /// Finds the members named in `names` in one walk of the object's keys (nothing for a non-object)
    /// and calls `found` with each one's position in `names` and its value, in the object's order:
    /// each key is compared with the names in turn (by length first) until one matches, and a node is
    /// made only for a member found. For reading several members of one object, where each look-up
    /// would walk them all; `names` is best a constant (a `static let`), so no array is made per call.
    package func members(named names: [StaticString], _ found: (_ position: Int, _ value: JSONNode) -> Void) {
        let n = node
        guard n.kind == .object else { return }
        let nodes = storage.nodes
        var k = index + 1
        names.withUnsafeBufferPointer { names in
            for _ in 0..<n.count {
                let key = nodes[k]
                let v = Int(key.next)
                // The parser refused repeated keys, so each name matches at most one key.
                for (i, name) in names.enumerated()
                where JSONDocument.key(
                    key, at: k, in: storage,
                    spells: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
                {
                    found(i, JSONNode(storage: storage, index: v))
                    break
                }
                k = Int(nodes[v].next)
            }
        }
    }

    /// Calls `body` with each member's key node and value, in order (objects only).
    package func forEachMember(_ body: (_ key: JSONNode, _ value: JSONNode) throws -> Void) rethrows {
        let n = node
        guard n.kind == .object else { return }
        var k = index + 1
        for _ in 0..<n.count {
            let v = Int(storage.nodes[k].next)
            try body(JSONNode(storage: storage, index: k), JSONNode(storage: storage, index: v))
            k = Int(storage.nodes[v].next)
        }
    }

    /// Whether this is an object with a member whose key node satisfies `test`, trying the keys in
    /// order once (for checking several names in one pass, where each look-up would walk them all).
    package func containsKey(where test: (_ key: JSONNode) -> Bool) -> Bool {
        let n = node
        guard n.kind == .object else { return false }
        let nodes = storage.nodes
        var k = index + 1
        for _ in 0..<n.count {
            if test(JSONNode(storage: storage, index: k)) { return true }
            k = Int(nodes[Int(nodes[k].next)].next)
        }
        return false
    }

    /// The members with decoded keys, when this is an object.
    package var members: [(String, JSONNode)]? {
        guard isObject else { return nil }
        var out = [(String, JSONNode)]()
        out.reserveCapacity(count)
        forEachMember { k, v in out.append((k.string ?? "", v)) }
        return out
    }

    /// The member named `key` of an object (nil for a missing member or a non-object): key bytes
    /// compared in place. The fixed names a reader looks for are static text (no `String` made or
    /// retained per look-up); `member(_:)` takes a name known only at run time.
    package subscript(key: StaticString) -> JSONNode? {
        member(UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
    }

    /// The member named `key` of an object, for a name known only at run time (as `subscript`).
    package func member(_ key: String) -> JSONNode? {
        withUTF8Bytes(key) { member($0) }
    }

    /// The value after the key node spelling `want`, walking the object's key nodes once.
    @inline(__always)
    private func member(_ want: UnsafeBufferPointer<UInt8>) -> JSONNode? {
        let n = node
        guard n.kind == .object else { return nil }
        let nodes = storage.nodes
        var k = index + 1
        for _ in 0..<n.count {
            let key = nodes[k]
            let v = Int(key.next)
            if JSONDocument.key(key, at: k, in: storage, spells: want) {
                return JSONNode(storage: storage, index: v)
            }
            k = Int(nodes[v].next)
        }
        return nil
    }

    /// The exact text of this value in the input (a copy).
    package var text: [UInt8] {
        let n = node
        return n.kind == .string
            ? Array(storage.bytes[Int(n.start) - 1..<Int(n.end) + 1]) : Array(storage.bytes[Int(n.start)..<Int(n.end)])
    }

    /// Nesting depth (a scalar is 0, `{}` and `[]` are 1) and the largest member count of any
    /// container in the subtree.
    package var shape: (depth: Int, widest: Int) {
        let n = node
        guard n.kind == .object || n.kind == .array else { return (0, 0) }
        // The subtree is the node range up to `next`, in document order: one linear pass.
        var deepest = Int(n.depth)
        var widest = 0
        let b = storage.nodes
        for k in index..<Int(n.next) where b[k].kind == .object || b[k].kind == .array {
            deepest = max(deepest, Int(b[k].depth))
            widest = max(widest, Int(b[k].count))
        }
        return (deepest - Int(n.depth) + 1, widest)
    }

    /// The value as a `JSONValue` tree (for code that builds or pattern-matches; the request path reads
    /// nodes).
    package var value: JSONValue {
        let n = node
        switch n.kind {
        case .object:
            var members = [(String, JSONValue)]()
            members.reserveCapacity(Int(n.count))
            forEachMember { k, v in members.append((k.string ?? "", v.value)) }
            return .object(members)
        case .array: return .array(elements!.map(\.value))
        case .string: return .string(string!)
        case .number: return .number(number!)
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .null: return .null
        }
    }
}

extension JSONDocument {
    /// Whether `key`, the key node at `k`, spells `want`: a key without escapes whose length differs is
    /// passed over here, without the full compare.
    @inline(__always)
    static func key(_ key: Node, at k: Int, in storage: Storage, spells want: UnsafeBufferPointer<UInt8>) -> Bool {
        (key.escaped || Int(key.end &- key.start) == want.count) && keyEquals(storage, k, want)
    }

    /// Whether the key node at `k` spells `want`.
    static func keyEquals(_ storage: Storage, _ k: Int, _ want: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = storage.nodes[k]
        if n.escaped { return unescape(storage.bytes, Int(n.start)..<Int(n.end)).elementsEqual(want) }
        let len = Int(n.end - n.start)
        guard len == want.count else { return false }
        guard len > 0 else { return true }
        return ShortBytes.equal(storage.bytes.baseAddress! + Int(n.start), want.baseAddress!, count: len)
    }

    /// Whether two key nodes are the same key. An escaped key is decoded from its own range only: the
    /// work is linear in the two keys, never in the input.
    static func keysEqual(_ bytes: UnsafeBufferPointer<UInt8>, _ a: Node, _ b: Node) -> Bool {
        if !a.escaped && !b.escaped {
            let len = Int(a.end - a.start)
            return len == Int(b.end - b.start)
                && (len == 0
                    || ShortBytes.equal(
                        bytes.baseAddress! + Int(a.start), bytes.baseAddress! + Int(b.start), count: len))
        }
        return keyBytes(bytes, a) == keyBytes(bytes, b)
    }

    /// A key's decoded bytes (a copy of its own range).
    static func keyBytes(_ bytes: UnsafeBufferPointer<UInt8>, _ n: Node) -> [UInt8] {
        let range = Int(n.start)..<Int(n.end)
        return n.escaped ? unescape(bytes, range) : Array(bytes[range])
    }

    /// The decoded bytes of a string's content that the parser has validated, read in place.
    static func unescape(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(range.count)
        var i = range.lowerBound
        func hex4(_ at: Int) -> UInt32 {
            var v: UInt32 = 0
            for k in 1...4 {
                let c = bytes[at + k]
                v = v << 4 | UInt32(c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10)
            }
            return v
        }
        while i < range.upperBound {
            let b = bytes[i]
            guard b == 0x5c else {
                out.append(b)
                i += 1
                continue
            }
            let e = bytes[i + 1]
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(i + 1)
                i += 4
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    let low = hex4(i + 3)
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                // UTF-8 by hand (the parser validated the scalar): no String per escape.
                switch scalar {
                case 0..<0x80: out.append(UInt8(scalar))
                case 0x80..<0x800:
                    out.append(UInt8(0xc0 | scalar >> 6))
                    out.append(UInt8(0x80 | scalar & 0x3f))
                case 0x800..<0x10000:
                    out.append(UInt8(0xe0 | scalar >> 12))
                    out.append(UInt8(0x80 | (scalar >> 6) & 0x3f))
                    out.append(UInt8(0x80 | scalar & 0x3f))
                default:
                    out.append(UInt8(0xf0 | scalar >> 18))
                    out.append(UInt8(0x80 | (scalar >> 12) & 0x3f))
                    out.append(UInt8(0x80 | (scalar >> 6) & 0x3f))
                    out.append(UInt8(0x80 | scalar & 0x3f))
                }
            default: out.append(e)  // " \ /
            }
            i += 2
        }
        return out
    }
}

/// The parser: one pass, no recursion (open containers on a stack bounded by the depth limit), one
/// node per value.
private struct TapeParser {
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

/// The eight-bytes-at-a-time scan both directions of JSON share: how far from `start` (up to `end`)
/// runs of bytes need no escaping, stopping at the first eight-byte word holding a control character or
/// a backslash (or, with `stopAtQuote`, a quote). Callers finish the last few bytes one by one.
enum JSONScan {
    /// The high bit of each byte of `w` that is a control character (< 0x20) or a backslash, with
    /// `quote` a quote too, and with `nonASCII` a byte ≥ 0x80 too. A byte above a flagged one may be
    /// flagged as well (a borrow), never one below it, so the lowest flag (in memory order on a
    /// little-endian machine) is exact.
    @inline(__always)
    static func stops(_ w: UInt64, quote: Bool, nonASCII: Bool) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let b = w ^ (ones &* 0x5c)
        var flags = ((w &- ones &* 0x20) & ~w) | ((b &- ones) & ~b)
        if quote {
            let q = w ^ (ones &* 0x22)
            flags |= (q &- ones) & ~q
        }
        if nonASCII { flags |= w }
        return flags & 0x8080_8080_8080_8080
    }

    /// The string reader's stops: a quote, a backslash, a control character or a byte ≥ 0x80.
    @inline(__always)
    static func asciiStops(_ w: UInt64) -> UInt64 { stops(w, quote: true, nonASCII: true) }

    @inline(__always)
    static func plainRun(_ p: UnsafeRawPointer, from start: Int, to end: Int, stopAtQuote: Bool) -> Int {
        var k = start
        while k + 8 <= end {
            let w = p.loadUnaligned(fromByteOffset: k, as: UInt64.self)
            if stops(w, quote: stopAtQuote, nonASCII: false) != 0 { break }
            k += 8
        }
        return k
    }
}
