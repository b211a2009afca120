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
        init(_ parsed: TapeParser.Parsed) {
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
