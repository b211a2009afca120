internal import CryptoCore
/// A view of one data item inside a `CBORDocument`. Cheap to copy; holds a reference to the
/// document's storage and the item's index on the tape. All accessors are bounds-checked and
/// never copy the input unless they return an owned Swift value.
public struct CBORItem: Sendable {
    let storage: CBORStorage
    let index: Int

    @inline(__always) var node: Node { storage[index] }

    /// The item's type.
    public var type: CBORType { node.type }

    /// Byte range of the whole item (head, content and any break) in the document's buffer.
    public var byteRange: Range<Int> {
        let n = node
        return Int(n.start)..<Int(n.end)
    }

    /// Byte range of the head only.
    public var headRange: Range<Int> {
        let n = node
        return Int(n.start)..<(Int(n.start) + Int(n.headLength))
    }

    /// Byte range after the head: the payload of a definite string, the elements of a container, the
    /// content of a tag.
    public var contentRange: Range<Int> { node.contentRange }

    /// The exact encoded bytes of the whole item (a slice of the input, not a copy).
    public var encodedBytes: ArraySlice<UInt8> { storage.bytes[byteRange] }

    /// True for indefinite-length strings, arrays and maps.
    public var isIndefiniteLength: Bool { node.flags & Node.indefinite != 0 }

    /// The raw argument of the head: the integer value, string length, element or pair count, tag
    /// number, simple value, or float bits.
    public var argument: UInt64 { node.argument }

    // MARK: Scalars

    /// The value of an unsigned integer.
    public var unsignedValue: UInt64? { type == .unsignedInt ? node.argument : nil }

    /// The value of a major type 0 or 1 integer when it fits in `Int64`.
    public var int64Value: Int64? {
        let n = node
        switch n.type {
        case .unsignedInt: return n.argument <= UInt64(Int64.max) ? Int64(n.argument) : nil
        case .negativeInt: return n.argument <= UInt64(Int64.max) ? -1 - Int64(n.argument) : nil
        default: return nil
        }
    }

    /// The value of a bool.
    public var boolValue: Bool? {
        let n = node
        guard n.type == .simple else { return nil }
        switch n.argument {
        case 20: return false
        case 21: return true
        default: return nil
        }
    }

    /// True for `null` (simple value 22).
    public var isNull: Bool {
        let n = node
        return n.type == .simple && n.argument == 22
    }

    /// True for `undefined` (simple value 23).
    public var isUndefined: Bool {
        let n = node
        return n.type == .simple && n.argument == 23
    }

    /// The simple value number (0–255), for major type 7 simple values.
    public var simpleValue: UInt8? {
        let n = node
        return n.type == .simple ? UInt8(n.argument) : nil
    }

    /// The value of a half, single or double float, widened to `Double`.
    public var doubleValue: Double? {
        let n = node
        guard n.type == .float else { return nil }
        return CBORFloat.value(bits: n.argument, flags: n.flags)
    }

    /// The encoded width of a float in bytes (2, 4 or 8).
    public var floatWidth: Int? {
        let n = node
        guard n.type == .float else { return nil }
        return Int(n.flags)
    }

    // MARK: Strings

    /// The payload of a definite-length byte string, as a slice of the input (zero-copy).
    public var byteStringSlice: ArraySlice<UInt8>? {
        guard type == .byteString, !isIndefiniteLength else { return nil }
        return storage.bytes[contentRange]
    }

    /// The payload of a byte string; indefinite-length chunks are concatenated (one copy).
    public var byteStringValue: [UInt8]? {
        guard type == .byteString else { return nil }
        if !isIndefiniteLength { return Array(storage.bytes[contentRange]) }
        var out = [UInt8]()
        for chunk in children { out.append(contentsOf: storage.bytes[chunk.contentRange]) }
        return out
    }

    /// The value of a text string (validated UTF-8); indefinite-length chunks are concatenated.
    public var stringValue: String? {
        guard type == .textString else { return nil }
        if !isIndefiniteLength {
            let r = contentRange
            return storage.withBytes { b in
                let content = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[r]))
                return InternedText.lookup(content) ?? String(decoding: content, as: UTF8.self)
            }
        }
        var out = [UInt8]()
        for chunk in children { out.append(contentsOf: storage.bytes[chunk.contentRange]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when this item is a definite text string equal to `s` (compared as UTF-8 bytes, no allocation).
    public func isText(_ s: String) -> Bool {
        let n = node
        return withUTF8Bytes(s) { utf8 in storage.withBytes { n.isDefiniteText(utf8, in: $0) } }
    }

    // MARK: Containers

    /// Number of elements (arrays), pairs (maps), chunks (indefinite strings) or 1 (tags).
    public var count: Int {
        let n = node
        switch n.type {
        case .array, .map: return Int(n.argument)
        case .byteString, .textString: return n.flags & Node.indefinite != 0 ? Int(n.argument) : 0
        case .tag: return 1
        default: return 0
        }
    }

    /// The direct children in order: array elements, map keys and values alternating, string
    /// chunks, or a tag's content.
    public var children: Children { Children(storage: storage, parent: index) }

    /// The elements of an array (empty for other types).
    public var arrayElements: Children {
        type == .array ? children : Children(storage: storage, parent: index, empty: true)
    }

    /// The key/value pairs of a map (empty for other types).
    public var mapEntries: MapEntries { MapEntries(storage: storage, parent: index, empty: type != .map) }

    /// The element at `position` of an array.
    public subscript(position: Int) -> CBORItem? {
        guard type == .array, position >= 0, position < count else { return nil }
        var i = index + 1
        for _ in 0..<position { i += Int(storage[i].span) }
        return CBORItem(storage: storage, index: i)
    }

    /// The value for a text-string key in a map (linear scan over the tape: no allocation, and no
    /// item made for the entries passed over). Indefinite-length keys never match.
    public subscript(key: String) -> CBORItem? {
        withUTF8Bytes(key) { value(forTextKey: $0) }
    }

    /// `self[key]` for a key known at compile time (the structure readers' field names): its bytes are
    /// read in place, not through a `String`.
    package subscript(field key: StaticString) -> CBORItem? {
        value(forTextKey: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
    }

    /// `Fields`' search from the first pair, kept as its own loop: every structure reader's look-up
    /// comes here, and going through `Fields` (the wrap check, its cursor) cost 0.5–1% of `parse`.
    private func value(forTextKey k: UnsafeBufferPointer<UInt8>) -> CBORItem? {
        let found: Int? = storage.withTape { n, b in
            let map = n[index]
            guard map.type == .map else { return nil }
            var x = index + 1
            for _ in 0..<Int(map.argument) {
                let value = x + Int(n[x].span)
                if n[x].isDefiniteText(k, in: b) { return value }
                x = value + Int(n[value].span)
            }
            return nil
        }
        return found.map { CBORItem(storage: storage, index: $0) }
    }

    /// Reads one map's values by text key, each search starting after the pair the previous one
    /// found and wrapping around: keys asked for in the map's own order (a deterministic encoding's,
    /// RFC 8949 4.2.1, as every record this package writes) are found with one compare each, and any
    /// other order still finds every key that is there (a search visits each pair at most once).
    /// Not a map: nothing is found.
    package struct Fields {
        private let map: CBORItem
        /// The tape index of the key the next search starts at, and that pair's position.
        private var key: Int
        private var pair = 0

        package init(_ map: CBORItem) {
            self.map = map
            key = map.index + 1
        }

        /// The value for `name`, or nil.
        package mutating func callAsFunction(_ name: StaticString) -> CBORItem? {
            let want = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            let m = map.index
            var x = key
            var p = pair
            let found: Int? = map.storage.withTape { n, b in
                guard n[m].type == .map else { return nil }
                let pairs = Int(n[m].argument)
                for _ in 0..<pairs {
                    if p == pairs { (x, p) = (m + 1, 0) }
                    let value = x + Int(n[x].span)
                    let matched = n[x].isDefiniteText(want, in: b)
                    (x, p) = (value + Int(n[value].span), p + 1)
                    if matched { return value }
                }
                return nil
            }
            guard let found else { return nil }
            (key, pair) = (x, p)
            return CBORItem(storage: map.storage, index: found)
        }
    }

    /// The value for an integer key in a map (major type 0 or 1, compared by value).
    public subscript(intKey key: Int64) -> CBORItem? {
        let found: Int? = storage.withNodes { n in
            let map = n[index]
            guard map.type == .map else { return nil }
            let type: CBORType = key < 0 ? .negativeInt : .unsignedInt
            let argument = key < 0 ? UInt64(-1 - key) : UInt64(key)
            var x = index + 1
            for _ in 0..<Int(map.argument) {
                let k = n[x]
                let value = x + Int(k.span)
                if k.type == type && k.argument == argument { return value }
                x = value + Int(n[value].span)
            }
            return nil
        }
        return found.map { CBORItem(storage: storage, index: $0) }
    }

    // MARK: Tags

    /// The tag number, for tags.
    public var tagNumber: UInt64? { type == .tag ? node.argument : nil }

    /// The tagged content, for tags.
    public var tagContent: CBORItem? { type == .tag ? CBORItem(storage: storage, index: index + 1) : nil }

    /// For tag 24 (encoded CBOR data item): the byte range of the embedded encoding inside the buffer.
    public var embeddedRange: Range<Int>? {
        let tag = node
        guard tag.type == .tag, tag.argument == 24 else { return nil }
        // The content's tape entry read in place (no item made for it).
        let content = storage[index + 1]
        guard content.type == .byteString, content.flags & Node.indefinite == 0 else { return nil }
        return content.contentRange
    }

    /// For tag 24: the embedded bytes (slice of the input).
    public var embeddedBytes: ArraySlice<UInt8>? {
        embeddedRange.map { storage.bytes[$0] }
    }

    /// For tag 24: parses the embedded bytes on demand, without copying them. The result's ranges are
    /// offsets into the same buffer.
    public func decodeEmbedded(options: CBORDecodingOptions = .default) throws(CBORError) -> CBORDocument {
        guard let r = embeddedRange else { throw CBORError(.typeMismatch, at: Int(node.start)) }
        return try CBORDocument(decoding: storage.bytes, range: r, options: options)
    }

    /// The buffer this item lives in.
    public var buffer: [UInt8] { storage.bytes }
}

extension CBORItem {
    /// Sequence of direct children.
    public struct Children: Sequence, Sendable {
        let storage: CBORStorage
        let parent: Int
        var empty = false

        /// Iterator over children.
        public struct Iterator: IteratorProtocol {
            let storage: CBORStorage
            var position: Int
            var remaining: Int
            /// Returns the next child.
            public mutating func next() -> CBORItem? {
                guard remaining > 0 else { return nil }
                remaining -= 1
                let item = CBORItem(storage: storage, index: position)
                position += Int(storage[position].span)
                return item
            }
        }

        /// Makes an iterator.
        public func makeIterator() -> Iterator {
            if empty { return Iterator(storage: storage, position: 0, remaining: 0) }
            let n = storage[parent]
            let c: Int
            switch n.type {
            case .array: c = Int(n.argument)
            case .map: c = Int(n.argument) * 2
            case .tag: c = 1
            case .byteString, .textString: c = n.flags & Node.indefinite != 0 ? Int(n.argument) : 0
            default: c = 0
            }
            return Iterator(storage: storage, position: parent + 1, remaining: c)
        }

        /// Number of children.
        public var underestimatedCount: Int { 0 }
    }

    /// Sequence of a map's key/value pairs.
    public struct MapEntries: Sequence, Sendable {
        let storage: CBORStorage
        let parent: Int
        let empty: Bool

        /// Iterator over pairs.
        public struct Iterator: IteratorProtocol {
            var inner: Children.Iterator
            /// Returns the next pair.
            public mutating func next() -> (key: CBORItem, value: CBORItem)? {
                guard let k = inner.next(), let v = inner.next() else { return nil }
                return (k, v)
            }
        }

        /// Makes an iterator.
        public func makeIterator() -> Iterator {
            Iterator(inner: Children(storage: storage, parent: parent, empty: empty).makeIterator())
        }
    }
}
