internal import CryptoCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
