internal import CryptoCore

/// The major kinds of CBOR data item (RFC 8949 §3.1), with major type 7 split into simple values and
/// floats.
public enum CBORType: UInt8, Sendable, Hashable {
    /// Major type 0.
    case unsignedInt = 0
    /// Major type 1: the value is −1 − argument.
    case negativeInt = 1
    /// Major type 2.
    case byteString = 2
    /// Major type 3.
    case textString = 3
    /// Major type 4.
    case array = 4
    /// Major type 5.
    case map = 5
    /// Major type 6.
    case tag = 6
    /// Major type 7 simple values (false, true, null, undefined, simple(n)).
    case simple = 7
    /// Major type 7 half, single or double precision floats.
    case float = 8
}

/// One entry of the decoded tape: a data item and where its bytes are. 24 bytes.
struct Node {
    /// Int value, negative argument, string length, element count (pairs for maps), tag number,
    /// simple value, or the float's raw bits.
    var argument: UInt64
    /// Offset of the item's head.
    var start: UInt32
    /// Offset one past the item's last byte (head, content and, for indefinite items, the break).
    var end: UInt32
    /// Number of tape entries in this item's subtree, itself included: the next sibling is at
    /// `index + span`.
    var span: UInt32
    var type: CBORType
    /// Head length in bytes (1–9).
    var headLength: UInt8
    var flags: UInt8

    static let indefinite: UInt8 = 1

    /// Byte range after the head (a definite string's content; a container's elements).
    var contentRange: Range<Int> { (Int(start) + Int(headLength))..<Int(end) }

    /// True when this is a definite text string whose content in `bytes` equals `utf8`.
    func isDefiniteText(_ utf8: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard type == .textString, flags & Node.indefinite == 0, Int(argument) == utf8.count else { return false }
        return utf8.isEmpty
            || ShortBytes.equal(bytes.baseAddress! + Int(start) + Int(headLength), utf8.baseAddress!, count: utf8.count)
    }
    static let floatHalf: UInt8 = 2
    static let floatSingle: UInt8 = 4
    static let floatDouble: UInt8 = 8
}

/// Immutable storage shared by a document and all of its items: the input buffer and the decoded
/// tape (allocated at its exact size, not an array). Nothing in it changes once made.
final class CBORStorage: @unchecked Sendable {
    let bytes: [UInt8]
    let nodes: UnsafeMutablePointer<Node>
    let nodeCount: Int

    private init(bytes: [UInt8], nodes: UnsafeMutablePointer<Node>, nodeCount: Int) {
        self.bytes = bytes
        self.nodes = nodes
        self.nodeCount = nodeCount
    }

    deinit { nodes.deallocate() }

    /// A storage holding a copy of `nodes`.
    static func make(bytes: [UInt8], nodes: UnsafeBufferPointer<Node>) -> CBORStorage {
        let p = UnsafeMutablePointer<Node>.allocate(capacity: max(1, nodes.count))
        p.initialize(from: nodes.baseAddress!, count: nodes.count)
        return CBORStorage(bytes: bytes, nodes: p, nodeCount: nodes.count)
    }

    /// The tape entry at `i` (bounds-checked: an index off the tape traps rather than reads past it).
    @inline(__always) subscript(i: Int) -> Node {
        precondition(UInt(bitPattern: i) < UInt(bitPattern: nodeCount), "CBOR tape index out of range")
        return nodes[i]
    }

    /// Calls `body` with the buffer's bytes.
    @inline(__always)
    func withBytes<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try bytes.withUnsafeBufferPointer { (b) throws(E) -> R in try body(b) }
    }

    /// Calls `body` with the whole tape and the buffer's bytes.
    @inline(__always)
    func withTape<R, E: Error>(
        _ body: (_ nodes: UnsafeBufferPointer<Node>, _ bytes: UnsafeBufferPointer<UInt8>) throws(E) -> R
    ) throws(E) -> R {
        let n = UnsafeBufferPointer(start: nodes, count: nodeCount)
        return try bytes.withUnsafeBufferPointer { (b) throws(E) -> R in try body(n, b) }
    }

    /// Calls `body` with the whole tape.
    @inline(__always)
    func withNodes<R, E: Error>(_ body: (UnsafeBufferPointer<Node>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(start: nodes, count: nodeCount))
    }
}

/// A decoded, validated CBOR data item over its input buffer. Nothing is copied: every item is a
/// byte range into `bytes`.
public struct CBORDocument: Sendable {
    let storage: CBORStorage

    /// The buffer the document was decoded from (possibly larger than the item, for embedded items).
    public var bytes: [UInt8] { storage.bytes }

    /// The top-level item.
    public var root: CBORItem { CBORItem(storage: storage, index: 0) }

    /// Number of data items in the document (including string chunks).
    public var itemCount: Int { storage.nodeCount }

    /// Decodes and validates exactly one data item spanning all of `bytes`.
    public init(decoding bytes: [UInt8], options: CBORDecodingOptions = .default) throws(CBORError) {
        try self.init(decoding: bytes, range: 0..<bytes.count, options: options)
    }

    /// Decodes and validates exactly one data item spanning `range` of `bytes`; the item's ranges are
    /// offsets into `bytes`. Used to parse tag-24 payloads without copying them.
    public init(decoding bytes: [UInt8], range: Range<Int>, options: CBORDecodingOptions = .default) throws(CBORError) {
        self.storage = try CBORValidator.decode(bytes, range: range, options: options)
    }
}

#if canImport(Glibc)
    import Glibc
#endif
