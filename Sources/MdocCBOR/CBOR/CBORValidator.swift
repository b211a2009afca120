internal import CryptoCore
/// The structural validator: drives the tokenizer head by head, tracks nesting and counts, and
/// records every item on a flat tape. Enforces RFC 8949 well-formedness plus the configured limits.
/// Written as a struct with mutating methods (no capturing closures) so exclusivity is checked
/// statically. The tape and the nesting stack are raw buffers: each starts in a small stack buffer
/// (under the 1 KiB Swift keeps on the stack) and moves to the heap (doubling, never past
/// `maxItems` or the depth limit) only for larger or deeper documents, so the loop does no per-item
/// allocation, reference counting or copy-on-write check; the finished tape is copied once into the
/// exact-size array the document keeps.
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
    /// Nesting frames in the stack buffer before the nesting stack moves to the heap: 32 × 24 bytes,
    /// under the 1 KiB `withUnsafeTemporaryAllocation` keeps on the stack (a buffer for the default
    /// 64 levels, 1,536 bytes, was a heap allocation on every decode). mdoc nests fewer than 16.
    static let inlineFrames = 32

    let base: UnsafePointer<UInt8>
    /// One past the last byte of the item being read.
    private var end: Int
    private let options: CBORDecodingOptions
    /// The tape: `count` entries at `nodes`, room for `capacity`; heap-allocated when `onHeap`.
    private(set) var nodes: UnsafeMutablePointer<Node>
    private(set) var count = 0
    private var capacity: Int
    private var onHeap = false
    /// Heap capacity to jump to when the stack buffer fills (a guess from the input size).
    private let estimatedItems: Int
    /// The nesting stack: `depth` frames at `stack`, room for `stackCapacity`; heap-allocated when
    /// `stackOnHeap`.
    private var stack: UnsafeMutablePointer<Frame>
    private var stackCapacity: Int
    private var stackOnHeap = false
    private var depth = 0

    /// Decodes and validates the one data item spanning `range` of `bytes` into a storage holding its tape.
    static func decode(_ bytes: [UInt8], range: Range<Int>, options: CBORDecodingOptions) throws(CBORError)
        -> CBORStorage
    {
        try decode(bytes, ranges: CollectionOfOne(range), options: options) { _ in }
    }

    /// Decodes and validates each of several data items, one spanning each of `ranges` of `bytes`, in
    /// order onto one tape (one storage for all of them, not one per item): the root of the item read
    /// from `ranges[k]` is at tape index `roots[k]`. Every rule of `decode` applies to each item (the
    /// first failure, in order, is thrown); `maxItems` bounds the tape as a whole.
    static func decodeEach(_ bytes: [UInt8], ranges: [Range<Int>], options: CBORDecodingOptions) throws(CBORError)
        -> (storage: CBORStorage, roots: [Int])
    {
        var roots = [Int]()
        roots.reserveCapacity(ranges.count)
        let storage = try decode(bytes, ranges: ranges, options: options) { roots.append($0) }
        return (storage, roots)
    }

    /// Both of the above: every range checked first, then each item read in order onto one tape,
    /// `root` told where each item's root entry is before it is read.
    private static func decode<Ranges: Collection<Range<Int>>>(
        _ bytes: [UInt8], ranges: Ranges, options: CBORDecodingOptions, root: (Int) -> Void
    ) throws(CBORError) -> CBORStorage {
        var total = 0
        for range in ranges {
            guard range.lowerBound >= 0, range.upperBound <= bytes.count else { throw CBORError(.truncated, at: 0) }
            guard range.count <= options.maxInputSize else { throw CBORError(.inputTooLarge, at: range.lowerBound) }
            guard !range.isEmpty else { throw CBORError(.truncated, at: range.lowerBound) }
            total += range.count
        }
        let result: Result<CBORStorage, CBORError> = bytes.withUnsafeBufferPointer { buf in
            withUnsafeTemporaryAllocation(of: Node.self, capacity: inlineNodes) { inline in
                withUnsafeTemporaryAllocation(of: Frame.self, capacity: inlineFrames) { frames in
                    var v = CBORValidator(
                        base: buf.baseAddress!, end: 0, options: options, estimatedItems: 16 + total / 6,
                        nodes: inline, stack: frames)
                    defer {
                        if v.onHeap { v.nodes.deallocate() }
                        if v.stackOnHeap { v.stack.deallocate() }
                    }
                    do throws(CBORError) {
                        for range in ranges {
                            root(v.count)
                            v.end = range.upperBound
                            try v.run(start: range.lowerBound)
                        }
                        return .success(
                            CBORStorage.make(bytes: bytes, nodes: UnsafeBufferPointer(start: v.nodes, count: v.count)))
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
        nodes: UnsafeMutableBufferPointer<Node>, stack: UnsafeMutableBufferPointer<Frame>
    ) {
        self.base = base
        self.end = end
        self.options = options
        self.nodes = nodes.baseAddress!
        capacity = nodes.count
        self.estimatedItems = estimatedItems
        self.stack = stack.baseAddress!
        stackCapacity = stack.count
    }

    /// Makes room for one more tape entry. `run` checks `count < maxItems` first, so the tape is
    /// below `maxItems` here and the new capacity, capped there, still grows.
    @inline(never)
    private mutating func grow() {
        let newCapacity = min(max(capacity * 2, estimatedItems), options.maxItems)
        nodes = Self.moved(nodes, count: count, capacity: newCapacity, freeing: onHeap)
        capacity = newCapacity
        onHeap = true
    }

    /// The first `count` entries of `buffer` moved to a new heap buffer of `capacity`; the old
    /// buffer freed when it was on the heap.
    private static func moved<T>(_ buffer: UnsafeMutablePointer<T>, count: Int, capacity: Int, freeing: Bool)
        -> UnsafeMutablePointer<T>
    {
        let p = UnsafeMutablePointer<T>.allocate(capacity: capacity)
        p.initialize(from: buffer, count: count)
        if freeing { buffer.deallocate() }
        return p
    }

    private mutating func push(_ f: Frame) throws(CBORError) {
        guard depth < options.maxDepth, depth < 4096 else {
            throw CBORError(.depthLimitExceeded, at: Int(nodes[f.node].start))
        }
        if depth == stackCapacity { growStack() }
        stack[depth] = f
        depth += 1
    }

    /// Makes room for one more frame. `push` checks the depth limit first, so the stack is below it
    /// here and the new capacity, capped there, still grows.
    @inline(never)
    private mutating func growStack() {
        let newCapacity = min(stackCapacity * 2, max(1, min(options.maxDepth, 4096)))
        stack = Self.moved(stack, count: depth, capacity: newCapacity, freeing: stackOnHeap)
        stackCapacity = newCapacity
        stackOnHeap = true
    }

    /// An item has just been completed at `itemEnd`; update the parent frames, closing every
    /// definite container or tag whose last child this was.
    @inline(__always)
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
            let t = Tokenizer.next(base, offset: offset, end: end)
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
}
