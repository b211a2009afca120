/// Duplicate map keys (RFC 8949 §5.6): the validator's key comparison, by value for integers, by
/// content for strings, by deterministic encoding for everything else.
extension CBORValidator {
    /// Rejects a map whose keys repeat. Integer keys compare by value (so `01` and `18 01` collide),
    /// strings by content (chunked ones joined), floats, tags, arrays and maps by the deterministic
    /// encoding the writer would give them (see `compareKeys`). Maps of up to 16 pairs are checked
    /// pairwise (no allocation unless a key needs encoding); larger ones are sorted, with each key that
    /// needs encoding encoded once rather than at every comparison.
    func checkDuplicateKeys(map: Int) throws(CBORError) {
        let pairs = Int(nodes[map].argument)
        if pairs < 2 { return }
        let n = UnsafeBufferPointer(start: nodes, count: count)
        // Keys already in ascending order (a deterministically encoded map, what writers send) cannot
        // repeat: one comparison per key finds that. `compareKeys` is a total order consistent with key
        // equality; keys compared through their encoding (exotic ones) skip this and take the paths below.
        var previous = map + 1
        var ascending = !Self.needsEncoding(n[previous])
        var x = previous + Int(n[previous].span)
        x += Int(n[x].span)
        for _ in 1..<pairs where ascending {
            ascending = !Self.needsEncoding(n[x]) && Self.compareKeys(base, n, previous, x) < 0
            previous = x
            x += Int(n[x].span)
            x += Int(n[x].span)
        }
        if ascending { return }
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
    static func compareKeys(
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
    static func fingerprint(_ base: UnsafePointer<UInt8>, _ node: Node) -> UInt64 {
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
    static func needsEncoding(_ node: Node) -> Bool {
        switch node.type {
        case .unsignedInt, .negativeInt, .simple: false
        case .byteString, .textString: node.flags & Node.indefinite != 0
        default: true
        }
    }

    /// What `compareKeys` compares for a key that it cannot read in place: a string's content, or
    /// any other item's deterministic encoding.
    static func comparable(_ base: UnsafePointer<UInt8>, _ n: UnsafeBufferPointer<Node>, _ i: Int) -> [UInt8] {
        n[i].type == .byteString || n[i].type == .textString ? content(base, n, i) : canonical(base, n, i)
    }

    /// The deterministic encoding of the item at node `i`, as `CBORWriter.write(_:)` would produce it.
    static func canonical(_ base: UnsafePointer<UInt8>, _ n: UnsafeBufferPointer<Node>, _ i: Int) -> [UInt8] {
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

    static func compareBytes(_ a: UnsafePointer<UInt8>, _ na: Int, _ b: UnsafePointer<UInt8>, _ nb: Int) -> Int {
        if na != nb { return na < nb ? -1 : 1 }
        for k in 0..<na where a[k] != b[k] { return a[k] < b[k] ? -1 : 1 }
        return 0
    }
}
