/// The structural validator: drives the tokenizer head by head, tracks nesting and counts, and
/// records every item on a flat tape. Enforces RFC 8949 well-formedness plus the configured limits.
/// Written as a struct with mutating methods (no capturing closures) so exclusivity is checked
/// statically. The tape and the nesting stack are raw buffers: the tape starts in a small stack
/// buffer and moves to the heap (doubling, never past `maxItems`) only for larger documents, so the
/// loop does no per-item allocation, reference counting or copy-on-write check; the finished tape is
/// copied once into the exact-size array the document keeps.
struct CBORValidator {
    private enum FrameKind: UInt8 { case array, map, indefArray, indefMap, indefBytes, indefText, tag }

    private struct Frame {
        var node: Int
        /// Items still expected (definite containers, tags) or items seen so far (indefinite ones).
        var count: UInt64
        var kind: FrameKind
    }

    /// Tape entries that fit in the stack buffer before the tape moves to the heap.
    private static let inlineNodes = 40

    private let base: UnsafePointer<UInt8>
    private let end: Int
    private let options: CBORDecodingOptions
    /// The tokenizer's callback table, fetched once per document.
    private let callbacks: Tokenizer.Callbacks
    /// The tape: `count` entries at `nodes`, room for `capacity`; heap-allocated when `onHeap`.
    private var nodes: UnsafeMutablePointer<Node>
    private var count = 0
    private var capacity: Int
    private var onHeap = false
    /// Heap capacity to jump to when the stack buffer fills (a guess from the input size).
    private let estimatedItems: Int
    /// The nesting stack lives in a stack-allocated buffer of `maxDepth` frames (no heap allocation).
    private let stack: UnsafeMutablePointer<Frame>
    private var depth = 0

    static func decode(_ bytes: [UInt8], range: Range<Int>, options: CBORDecodingOptions) throws(CBORError) -> [Node] {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { throw CBORError(.truncated, at: 0) }
        guard range.count <= options.maxInputSize else { throw CBORError(.inputTooLarge, at: range.lowerBound) }
        guard !range.isEmpty else { throw CBORError(.truncated, at: range.lowerBound) }
        let depthCapacity = max(1, min(options.maxDepth, 4096))
        let result: Result<[Node], CBORError> = bytes.withUnsafeBufferPointer { buf in
            withUnsafeTemporaryAllocation(of: Node.self, capacity: inlineNodes) { inline in
                withUnsafeTemporaryAllocation(of: Frame.self, capacity: depthCapacity) { frames in
                    var v = CBORValidator(
                        base: buf.baseAddress!, end: range.upperBound, options: options,
                        estimatedItems: 16 + range.count / 6,
                        nodes: inline, stack: frames.baseAddress!)
                    defer { if v.onHeap { v.nodes.deallocate() } }
                    do throws(CBORError) {
                        try v.run(start: range.lowerBound)
                        return .success(Array(UnsafeBufferPointer(start: v.nodes, count: v.count)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
        }
        return try result.get()
    }

    private init(
        base: UnsafePointer<UInt8>, end: Int, options: CBORDecodingOptions, estimatedItems: Int,
        nodes: UnsafeMutableBufferPointer<Node>, stack: UnsafeMutablePointer<Frame>
    ) {
        self.base = base
        self.end = end
        self.options = options
        callbacks = Tokenizer.callbacks
        self.nodes = nodes.baseAddress!
        capacity = nodes.count
        self.estimatedItems = estimatedItems
        self.stack = stack
    }

    /// Makes room for one more tape entry. `run` checks `count < maxItems` first, so the tape is
    /// below `maxItems` here and the new capacity, capped there, still grows.
    @inline(never)
    private mutating func grow() {
        let newCapacity = min(max(capacity * 2, estimatedItems), options.maxItems)
        let p = UnsafeMutablePointer<Node>.allocate(capacity: newCapacity)
        p.initialize(from: nodes, count: count)
        if onHeap { nodes.deallocate() }
        nodes = p
        capacity = newCapacity
        onHeap = true
    }

    private mutating func push(_ f: Frame) throws(CBORError) {
        guard depth < options.maxDepth, depth < 4096 else {
            throw CBORError(.depthLimitExceeded, at: Int(nodes[f.node].start))
        }
        stack[depth] = f
        depth += 1
    }

    /// An item has just been completed at `itemEnd`; update the parent frames, closing every
    /// definite container or tag whose last child this was.
    private mutating func completed(_ itemEnd: Int) throws(CBORError) {
        while depth > 0 {
            let top = stack[depth - 1]
            switch top.kind {
            case .array, .map, .tag:
                let remaining = top.count - 1
                if remaining == 0 {
                    depth -= 1
                    if top.kind == .map && options.rejectDuplicateKeys {
                        try checkDuplicateKeys(map: top.node)
                    }
                    nodes[top.node].end = UInt32(itemEnd)
                    nodes[top.node].span = UInt32(count - top.node)
                    continue
                }
                stack[depth - 1].count = remaining
                return
            case .indefArray, .indefMap, .indefBytes, .indefText:
                stack[depth - 1].count += 1
                return
            }
        }
    }

    private mutating func run(start: Int) throws(CBORError) {
        var offset = start
        let strict = options.requirePreferredEncoding
        while true {
            if offset >= end { throw CBORError(.truncated, at: offset) }
            let t = Tokenizer.next(base, offset: offset, end: end, callbacks: callbacks)
            if t.truncated { throw CBORError(.truncated, at: offset) }
            if t.kind == .error {
                let b = base[offset]
                let major = b >> 5
                let info = b & 0x1f
                if info == 31 && (major == 0 || major == 1 || major == 6) {
                    throw CBORError(.invalidIndefiniteLength, at: offset)
                }
                if b == 0xf8 { throw CBORError(.invalidIndefiniteLength, at: offset) }
                throw CBORError(.malformedHead, at: offset)
            }
            if strict && t.headLength > 1 {
                // A head is preferred when its argument could not have been encoded shorter.
                let v = t.value
                let minimal: Int
                switch t.kind {
                case .half, .single, .double: minimal = t.headLength
                case .simple: minimal = v < 24 ? 1 : 2
                default: minimal = v < 24 ? 1 : v <= 0xff ? 2 : v <= 0xffff ? 3 : v <= 0xffff_ffff ? 5 : 9
                }
                if t.headLength != minimal { throw CBORError(.nonPreferredEncoding, at: offset) }
            }

            if t.kind == .breakCode {
                guard depth > 0 else { throw CBORError(.unexpectedBreak, at: offset) }
                let top = stack[depth - 1]
                switch top.kind {
                case .indefArray, .indefBytes, .indefText: break
                case .indefMap:
                    if top.count % 2 != 0 { throw CBORError(.incompleteMap, at: offset) }
                default:
                    throw CBORError(.unexpectedBreak, at: offset)
                }
                depth -= 1
                let index = top.node
                nodes[index].argument = top.kind == .indefMap ? top.count / 2 : top.count
                if top.kind == .indefMap && options.rejectDuplicateKeys { try checkDuplicateKeys(map: index) }
                offset += 1
                nodes[index].end = UInt32(offset)
                nodes[index].span = UInt32(count - index)
                try completed(offset)
                if depth == 0 { break }
                continue
            }

            if depth > 0 {
                let top = stack[depth - 1]
                if top.kind == .indefBytes && t.kind != .bytes { throw CBORError(.invalidChunk, at: offset) }
                if top.kind == .indefText && t.kind != .text { throw CBORError(.invalidChunk, at: offset) }
                if top.kind == .tag && options.checkTag24Content && nodes[top.node].argument == 24 && t.kind != .bytes {
                    throw CBORError(.invalidTagContent, at: offset)
                }
            }
            guard count < options.maxItems else { throw CBORError(.itemLimitExceeded, at: offset) }
            let type: CBORType
            var flags: UInt8 = 0
            switch t.kind {
            case .unsigned: type = .unsignedInt
            case .negative: type = .negativeInt
            case .bytes: type = .byteString
            case .bytesStart:
                type = .byteString
                flags = Node.indefinite
            case .text: type = .textString
            case .textStart:
                type = .textString
                flags = Node.indefinite
            case .array: type = .array
            case .arrayStart:
                type = .array
                flags = Node.indefinite
            case .map: type = .map
            case .mapStart:
                type = .map
                flags = Node.indefinite
            case .tag: type = .tag
            case .simple: type = .simple
            case .half:
                type = .float
                flags = Node.floatHalf
            case .single:
                type = .float
                flags = Node.floatSingle
            case .double:
                type = .float
                flags = Node.floatDouble
            case .breakCode, .error: throw CBORError(.malformedHead, at: offset)
            }
            if strict && flags == Node.indefinite { throw CBORError(.nonPreferredEncoding, at: offset) }
            if strict && type == .float {
                // Preferred floats use the shortest width that keeps the value exactly.
                if CBORFloat.preferredWidth(CBORFloat.value(bits: t.value, flags: flags)) != flags {
                    throw CBORError(.nonPreferredEncoding, at: offset)
                }
            }

            if count == capacity { grow() }
            let index = count
            (nodes + index).initialize(
                to: Node(
                    argument: t.value, start: UInt32(offset), end: UInt32(offset + t.length), span: 1,
                    type: type, headLength: UInt8(t.headLength), flags: flags))
            count += 1
            let itemStart = offset
            offset += t.length

            switch t.kind {
            case .text:
                if !UTF8Check.isValid(base + itemStart + t.headLength, count: Int(t.value)) {
                    throw CBORError(.invalidUTF8, at: itemStart)
                }
                try completed(offset)
            case .array, .map:
                let needed: (partialValue: UInt64, overflow: Bool) =
                    t.kind == .map ? t.value.multipliedReportingOverflow(by: 2) : (t.value, false)
                if needed.overflow || needed.partialValue > UInt64(end - offset) {
                    throw CBORError(.lengthExceedsInput, at: itemStart)
                }
                if t.value == 0 {
                    try completed(offset)
                } else {
                    try push(Frame(node: index, count: needed.partialValue, kind: t.kind == .map ? .map : .array))
                    continue
                }
            case .arrayStart, .mapStart, .bytesStart, .textStart, .tag:
                let kind: FrameKind
                switch t.kind {
                case .arrayStart: kind = .indefArray
                case .mapStart: kind = .indefMap
                case .bytesStart: kind = .indefBytes
                case .textStart: kind = .indefText
                default: kind = .tag
                }
                try push(Frame(node: index, count: kind == .tag ? 1 : 0, kind: kind))
                continue
            default:
                try completed(offset)
            }
            if depth == 0 { break }
        }
        if offset != end { throw CBORError(.trailingBytes, at: offset) }
    }

    /// Rejects a map whose keys repeat. Integer keys compare by value (so `01` and `18 01` collide),
    /// strings by content (chunked ones joined), floats, tags, arrays and maps by the deterministic
    /// encoding the writer would give them (see `compareKeys`). Maps of up to 16 pairs are checked
    /// pairwise (no allocation unless a key needs encoding); larger ones are sorted, with each key that
    /// needs encoding encoded once rather than at every comparison.
    private func checkDuplicateKeys(map: Int) throws(CBORError) {
        let pairs = Int(nodes[map].argument)
        if pairs < 2 { return }
        let n = UnsafeBufferPointer(start: nodes, count: count)
        if pairs <= 16 {
            // Each key's fingerprint (type and value, or type, length and first and last eight
            // bytes) is equal for equal keys, so only keys whose fingerprints match are compared in
            // full. A map with any key compared through its encoding (an indefinite string, a
            // float, tag, array or map) is compared pairwise in full instead.
            try withUnsafeTemporaryAllocation(of: (node: Int, print: UInt64).self, capacity: 16) {
                keys throws(CBORError) in
                var x = map + 1
                var exotic = false
                for px in 0..<pairs {
                    exotic = exotic || Self.needsEncoding(n[x])
                    keys[px] = (x, exotic ? 0 : Self.fingerprint(base, n[x]))
                    x += Int(n[x].span)
                    x += Int(n[x].span)
                }
                for px in 1..<pairs {
                    for py in 0..<px where exotic || keys[py].print == keys[px].print {
                        if Self.compareKeys(base, n, keys[px].node, keys[py].node) == 0 {
                            throw CBORError(.duplicateMapKey, at: Int(n[keys[px].node].start))
                        }
                    }
                }
            }
            return
        }
        var keys = [(node: Int, encoded: [UInt8]?)]()
        keys.reserveCapacity(pairs)
        var i = map + 1
        for _ in 0..<pairs {
            keys.append((i, Self.needsEncoding(n[i]) ? Self.comparable(base, n, i) : nil))
            i += Int(n[i].span)
            i += Int(n[i].span)
        }
        keys.sort { Self.compareKeys(base, n, $0.node, $1.node, $0.encoded, $1.encoded) < 0 }
        for x in 1..<keys.count
        where Self.compareKeys(base, n, keys[x].node, keys[x - 1].node, keys[x].encoded, keys[x - 1].encoded) == 0 {
            throw CBORError(.duplicateMapKey, at: Int(max(n[keys[x].node].start, n[keys[x - 1].node].start)))
        }
    }

    /// A total order over keys that is consistent with key equality as defined above. Strings compare
    /// by their content: an indefinite-length string equals the concatenation of its chunks (RFC 8949
    /// §3.2.3), so `(_ "a", "b")` and `"ab"` are the same key — otherwise a duplicate could be smuggled
    /// past this check in chunked form and reappear once re-encoded. Floats, tags, arrays and maps
    /// compare by the deterministic encodings the writer would produce (shortest heads, definite
    /// lengths, floats by value with one canonical NaN, sorted map keys), so keys that re-encode
    /// identically are the same key (found by FuzzCBOR: two NaN keys with different payloads, both
    /// written back as f97e00). `ea`/`eb` are `comparable(…)` of the keys when already computed.
    private static func compareKeys(
        _ base: UnsafePointer<UInt8>, _ n: UnsafeBufferPointer<Node>, _ ia: Int, _ ib: Int,
        _ ea: [UInt8]? = nil, _ eb: [UInt8]? = nil
    ) -> Int {
        let a = n[ia]
        let b = n[ib]
        if a.type != b.type { return a.type.rawValue < b.type.rawValue ? -1 : 1 }
        switch a.type {
        case .unsignedInt, .negativeInt, .simple:
            return a.argument == b.argument ? 0 : (a.argument < b.argument ? -1 : 1)
        case .byteString, .textString:
            if a.flags & Node.indefinite == 0 && b.flags & Node.indefinite == 0 {
                return compareBytes(
                    base + Int(a.start) + Int(a.headLength), Int(a.argument), base + Int(b.start) + Int(b.headLength),
                    Int(b.argument))
            }
            fallthrough
        default:
            let x = ea ?? comparable(base, n, ia)
            let y = eb ?? comparable(base, n, ib)
            return x.withUnsafeBufferPointer { px in
                y.withUnsafeBufferPointer { py in
                    compareBytes(px.baseAddress ?? base, px.count, py.baseAddress ?? base, py.count)
                }
            }
        }
    }

    /// A 64-bit summary of a key that `needsEncoding` rejects, equal whenever `compareKeys` would
    /// call two such keys equal: integers and simple values by type and value, definite strings by
    /// type, length and their first and last (up to) eight bytes.
    @inline(__always)
    private static func fingerprint(_ base: UnsafePointer<UInt8>, _ node: Node) -> UInt64 {
        switch node.type {
        case .unsignedInt, .negativeInt, .simple:
            return (node.argument &+ UInt64(node.type.rawValue)) &* 0x9e37_79b9_7f4a_7c15
        case .byteString, .textString:
            let p = UnsafeRawPointer(base + Int(node.start) + Int(node.headLength))
            let len = Int(node.argument)
            var head: UInt64 = 0
            var tail: UInt64 = 0
            if len >= 8 {
                head = p.loadUnaligned(as: UInt64.self)
                tail = p.loadUnaligned(fromByteOffset: len - 8, as: UInt64.self)
            } else {
                for k in 0..<len { head = head << 8 | UInt64(p.load(fromByteOffset: k, as: UInt8.self)) }
            }
            let h = (head ^ UInt64(len) << 56 ^ UInt64(node.type.rawValue)) &* 0xff51_afd7_ed55_8ccd
            return (h ^ tail) &* 0xc4ce_b9fe_1a85_ec53
        default:
            return 0x5bd1_e995
        }
    }

    /// True for keys that `compareKeys` compares through `comparable` (everything but integers, simple
    /// values and definite-length strings, which it reads in place).
    private static func needsEncoding(_ node: Node) -> Bool {
        switch node.type {
        case .unsignedInt, .negativeInt, .simple: false
        case .byteString, .textString: node.flags & Node.indefinite != 0
        default: true
        }
    }

    /// What `compareKeys` compares for a key that it cannot read in place: a string's content, or
    /// any other item's deterministic encoding.
    private static func comparable(_ base: UnsafePointer<UInt8>, _ n: UnsafeBufferPointer<Node>, _ i: Int) -> [UInt8] {
        n[i].type == .byteString || n[i].type == .textString ? content(base, n, i) : canonical(base, n, i)
    }

    /// The deterministic encoding of the item at node `i`, as `CBORWriter.write(_:)` would produce it.
    private static func canonical(_ base: UnsafePointer<UInt8>, _ n: UnsafeBufferPointer<Node>, _ i: Int) -> [UInt8] {
        var w = CBORWriter(capacity: 16)
        func emit(_ i: Int) {
            let node = n[i]
            switch node.type {
            case .unsignedInt: w.writeHead(major: 0, argument: node.argument)
            case .negativeInt: w.writeHead(major: 1, argument: node.argument)
            case .byteString, .textString:
                let c = content(base, n, i)
                w.writeHead(major: node.type == .byteString ? 2 : 3, argument: UInt64(c.count))
                w.writeRaw(c)
            case .array:
                var c = i + 1
                var items = 0
                while c < i + Int(node.span) {
                    items += 1
                    c += Int(n[c].span)
                }
                w.writeHead(major: 4, argument: UInt64(items))
                c = i + 1
                while c < i + Int(node.span) {
                    emit(c)
                    c += Int(n[c].span)
                }
            case .map:
                var entries = [(key: [UInt8], value: [UInt8])]()
                var c = i + 1
                while c < i + Int(node.span) {
                    let k = c
                    c += Int(n[c].span)
                    entries.append((canonical(base, n, k), canonical(base, n, c)))
                    c += Int(n[c].span)
                }
                entries.sort { $0.key.lexicographicallyPrecedes($1.key) }
                w.writeHead(major: 5, argument: UInt64(entries.count))
                for e in entries {
                    w.writeRaw(e.key)
                    w.writeRaw(e.value)
                }
            case .tag:
                w.writeHead(major: 6, argument: node.argument)
                if node.span > 1 { emit(i + 1) }
            case .simple: w.writeSimple(UInt8(truncatingIfNeeded: node.argument))
            case .float: w.writeFloat(CBORFloat.value(bits: node.argument, flags: node.flags))
            }
        }
        emit(i)
        return w.bytes
    }

    /// The content of a byte or text string node: its payload, or its chunks' payloads concatenated.
    static func content(_ base: UnsafePointer<UInt8>, _ n: UnsafeBufferPointer<Node>, _ i: Int) -> [UInt8] {
        func payload(_ c: Node) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(start: base + Int(c.start) + Int(c.headLength), count: Int(c.argument))
        }
        let node = n[i]
        if node.flags & Node.indefinite == 0 { return Array(payload(node)) }
        var out = [UInt8]()
        var c = i + 1
        while c < i + Int(node.span) {
            out.append(contentsOf: payload(n[c]))
            c += Int(n[c].span)
        }
        return out
    }

    private static func compareBytes(_ a: UnsafePointer<UInt8>, _ na: Int, _ b: UnsafePointer<UInt8>, _ nb: Int) -> Int
    {
        if na != nb { return na < nb ? -1 : 1 }
        for k in 0..<na where a[k] != b[k] { return a[k] < b[k] ? -1 : 1 }
        return 0
    }
}
