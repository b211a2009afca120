import Foundation
import Testing
import TestSupport
@testable import MdocCBOR

/// Depth, item and size limits, the tape's growth and item ranges.
extension CBORDecodeTests {
    @Test("Nesting 100 000 deep is rejected at the depth limit without recursion")
    func deepNesting() {
        let deep = [UInt8](repeating: 0x81, count: 100_000) + [0x00]
        #expect(throws: CBORError(.depthLimitExceeded, at: 64)) { try CBORDocument(decoding: deep) }
        let indefinite = [UInt8](repeating: 0x9f, count: 100_000)
        #expect(throws: CBORError(.depthLimitExceeded, at: 64)) { try CBORDocument(decoding: indefinite) }
    }

    @Test(
        "The nesting stack grows past its stack buffer: every depth up to the limit decodes, each level intact",
        arguments: [1, 31, 32, 33, 63, 64])
    func nestingAroundTheFrameBuffer(depth: Int) throws {
        #expect(CBORValidator.inlineFrames == 32)
        // Definite arrays, indefinite arrays and one-entry maps (their duplicate-key check runs when
        // each closes, reading its frame back), `depth` levels around an integer.
        func nested(_ d: Int, _ wrap: (CBORValue) -> CBORValue) -> CBORValue {
            (0..<d).reduce(CBORValue.unsigned(7)) { v, _ in wrap(v) }
        }
        let arrays = nested(depth) { .array([$0]) }
        #expect(CBORValue(try CBORDocument(decoding: arrays.encoded()).root) == arrays)
        let maps = nested(depth) { .map([CBORValue.MapEntry(.unsigned(1), $0)]) }
        #expect(CBORValue(try CBORDocument(decoding: maps.encoded()).root) == maps)
        let indefinite = [UInt8](repeating: 0x9f, count: depth) + [0x07] + [UInt8](repeating: 0xff, count: depth)
        #expect(CBORValue(try CBORDocument(decoding: indefinite).root) == arrays)
        // A sibling after the deepest point: frames below the top are read after the growth.
        let wide = [0x82] + [UInt8](repeating: 0x81, count: depth - 1) + [0x07, 0x08]
        let doc = try CBORDocument(decoding: wide)
        #expect(doc.root.count == 2)
        #expect(Array(doc.root.children).last?.unsignedValue == 8)
    }

    @Test(
        "Fields: a map's values by text key in its own order, in any other order, again, and not at all; values with nested items between keys; not a map"
    )
    func fieldsInAnyOrder() throws {
        let keys = ["a", "bb", "cc", "ddd", "eeee"]
        // Values of different tape sizes (a nested map, an array, a tag) so that a wrong step lands on a value.
        let values: [CBORValue] = [
            .unsigned(1), .map([.init(.text("a"), .text("inner"))]), .array([.text("bb"), .unsigned(2)]),
            .tagged(0, .text("ddd")), .text("e"),
        ]
        let encoded = CBORValue.map(zip(keys, values).map { .init(.text($0), $1) }).encoded()
        let map = try CBORDocument(decoding: encoded).root
        func read(_ order: [Int]) -> [CBORValue?] {
            var field = CBORItem.Fields(map)
            let names: [StaticString] = ["a", "bb", "cc", "ddd", "eeee"]
            return order.map { field(names[$0]).map(CBORValue.init) }
        }
        for order in [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3], [1, 1, 4, 4, 0], [3, 2]] {
            #expect(read(order) == order.map { values[$0] }, "order \(order)")
        }
        // Absent keys, between and after present ones, leave the next search where it was.
        var field = CBORItem.Fields(map)
        #expect(field("bb").map(CBORValue.init) == values[1])
        #expect(field("inner") == nil)
        #expect(field("b") == nil)
        #expect(field("cc").map(CBORValue.init) == values[2])
        #expect(field("eeeee") == nil)
        #expect(field("a").map(CBORValue.init) == values[0])
        // An empty map, a non-map and a non-text key equal in bytes find nothing.
        var empty = CBORItem.Fields(try CBORDocument(decoding: CBORValue.map([]).encoded()).root)
        #expect(empty("a") == nil)
        let arrayItem = try CBORDocument(decoding: CBORValue.array([.text("a"), .unsigned(1)]).encoded()).root
        var array = CBORItem.Fields(arrayItem)
        #expect(array("a") == nil)
        var bytesKey = CBORItem.Fields(
            try CBORDocument(decoding: CBORValue.map([.init(.bytes(Array("a".utf8)), .unsigned(1))]).encoded()).root)
        #expect(bytesKey("a") == nil)
    }

    @Test(
        "Several items onto one tape: each root reads as that item decoded alone; the first bad item fails with its own code and offset; the item limit bounds the whole tape"
    )
    func decodeEach() throws {
        let values: [CBORValue] = [
            .map([
                .init(.text("digestID"), .unsigned(1)),
                .init(.text("elementValue"), .array([.text("a"), .bool(true)])),
            ]),
            .unsigned(24), .text("family_name"), .tagged(0, .text("2026-01-01T00:00:00Z")),
            .array((0..<50).map { .unsigned(UInt64($0)) }),  // past the inline tape buffer
            .map([.init(.unsigned(1), .map([.init(.unsigned(2), .array([.array([.array([])])]))]))]),
        ]
        // The items with a filler byte around each (ranges inside a larger buffer, as tag 24 contents are).
        var buffer: [UInt8] = [0xf6]
        var ranges = [Range<Int>]()
        for v in values {
            let e = v.encoded()
            ranges.append(buffer.count..<buffer.count + e.count)
            buffer += e + [0xf6]
        }
        let (storage, roots) = try CBORValidator.decodeEach(buffer, ranges: ranges, options: .default)
        #expect(roots.count == values.count)
        for (k, root) in roots.enumerated() {
            let item = CBORItem(storage: storage, index: root)
            let alone = try CBORDocument(decoding: buffer, range: ranges[k]).root
            #expect(CBORValue(item) == values[k])
            #expect(item.byteRange == alone.byteRange && item.byteRange == ranges[k])
            #expect(item.encodedBytes == alone.encodedBytes)
        }
        #expect(try CBORValidator.decodeEach(buffer, ranges: [], options: .default).roots.isEmpty)
        // A bad third item: the same error as decoding it alone, whatever follows it.
        for bad: [UInt8] in [
            [0x82, 0x01], [0xff], [0x62, 0xc3, 0x28], [0xa2, 0x01, 0x01, 0x01, 0x02], [0x01, 0x02],
        ] {
            var b = buffer
            let at = b.count
            b += bad
            var r = ranges
            r.insert(at..<at + bad.count, at: 2)
            let alone = #expect(throws: CBORError.self) { try CBORDocument(decoding: b, range: at..<at + bad.count) }
            #expect(throws: alone!) { try CBORValidator.decodeEach(b, ranges: r, options: .default) }
        }
        // Ranges outside the buffer or empty, as `decode` refuses them.
        #expect(throws: CBORError(.truncated, at: 0)) {
            try CBORValidator.decodeEach(buffer, ranges: [ranges[0], 0..<buffer.count + 1], options: .default)
        }
        #expect(throws: CBORError(.truncated, at: 3)) {
            try CBORValidator.decodeEach(buffer, ranges: [ranges[0], 3..<3], options: .default)
        }
        // The item limit counts every entry on the tape: 7 + 1 + 1 fit in 9, not in 8.
        let small = Array(ranges[0...2])
        _ = try CBORValidator.decodeEach(buffer, ranges: small, options: .init(maxItems: 9))
        #expect(throws: CBORError(.itemLimitExceeded, at: ranges[2].lowerBound)) {
            try CBORValidator.decodeEach(buffer, ranges: small, options: .init(maxItems: 8))
        }
    }

    @Test("A depth limit above the frame buffer is honoured exactly (1,000 levels decode, 1,001 do not)")
    func deepLimitAboveTheFrameBuffer() throws {
        let options = CBORDecodingOptions(maxDepth: 1000)
        let ok = [UInt8](repeating: 0x81, count: 1000) + [0x00]
        let doc = try CBORDocument(decoding: ok, options: options)
        var item = doc.root
        for _ in 0..<1000 {
            #expect(item.count == 1)
            item = Array(item.children)[0]
        }
        #expect(item.unsignedValue == 0)
        let over = [UInt8](repeating: 0x81, count: 1001) + [0x00]
        #expect(throws: CBORError(.depthLimitExceeded, at: 1000)) { try CBORDocument(decoding: over, options: options) }
        // Past the 4,096-level ceiling whatever the option says.
        let ceiling = [UInt8](repeating: 0x81, count: 5000) + [0x00]
        #expect(throws: CBORError(.depthLimitExceeded, at: 4096)) {
            try CBORDocument(decoding: ceiling, options: .init(maxDepth: 10_000))
        }
    }

    @Test("A 1 MB array of small items is bounded by the item limit")
    func itemBomb() {
        var bytes: [UInt8] = [0x9a, 0x00, 0x0f, 0xff, 0xff]
        bytes += [UInt8](repeating: 0, count: 0x0fffff)
        #expect(throws: CBORError(.itemLimitExceeded, at: 5 + 999)) {
            try CBORDocument(decoding: bytes, options: .init(maxItems: 1000))
        }
        #expect(throws: Never.self) { try CBORDocument(decoding: bytes) }
    }

    @Test("The tape grows past its stack buffer and its size estimate, and stops exactly at the item limit")
    func tapeGrowth() throws {
        // Arrays of n small integers: n + 1 tape entries, around the stack buffer (40) and beyond the
        // estimate from the input size (16 + bytes / 6), nested so containers close after growth.
        for n in [0, 1, 38, 39, 40, 41, 100, 1000, 5000] {
            var w = CBORWriter()
            w.writeArrayHeader(count: 2)
            w.writeArrayHeader(count: n)
            for i in 0..<n { w.writeUnsigned(UInt64(i % 24)) }
            w.writeMapHeader(count: 1)
            w.writeText("k")
            w.writeBool(true)
            let doc = try CBORDocument(decoding: w.bytes)
            #expect(doc.itemCount == n + 5, "n = \(n)")
            let inner = try #require(doc.root[0])
            #expect(inner.count == n && inner.byteRange.upperBound == doc.root[1]!.byteRange.lowerBound)
            #expect(inner.children.map { $0.unsignedValue! } == (0..<n).map { UInt64($0 % 24) })
            #expect(doc.root[1]!["k"]?.boolValue == true)
            #expect(doc.root.byteRange == 0..<w.bytes.count)
            // The limit admits exactly maxItems entries.
            #expect(throws: Never.self) { try CBORDocument(decoding: w.bytes, options: .init(maxItems: n + 5)) }
            #expect(throws: CBORError.self) { try CBORDocument(decoding: w.bytes, options: .init(maxItems: n + 4)) }
        }
    }

    @Test("Item ranges: head, content and whole item, including tag 24 embedded bytes")
    func ranges() throws {
        let doc = try CBORDocument(decoding: h("82 d8 18 43 a1 01 02 5f 41 01 ff"))
        let tagged = doc.root[0]!
        #expect(tagged.byteRange == 1..<7)
        #expect(tagged.headRange == 1..<3)
        #expect(tagged.embeddedRange == 4..<7)
        #expect(Array(tagged.encodedBytes) == h("d8 18 43 a1 01 02"))
        let inner = try tagged.decodeEmbedded()
        #expect(inner.root.byteRange == 4..<7)
        #expect(inner.root[intKey: 1]?.unsignedValue == 2)
        let indef = doc.root[1]!
        #expect(indef.isIndefiniteLength)
        #expect(indef.byteRange == 7..<11)
        #expect(indef.byteStringValue == [1])
        #expect(doc.root.count == 2)
    }
}
