import Foundation
import Testing
import TestSupport
@testable import MdocCBOR

@Suite("CBOR: decode failures, limits, encoding")
struct CBORDecodeTests {
    struct FailureCase: CustomTestStringConvertible, Sendable {
        let name: String
        let hex: String
        let code: CBORError.Code
        let offset: Int
        var options: CBORDecodingOptions = .default
        var testDescription: String { name }
    }

    static let failures: [FailureCase] = [
        .init(name: "empty input", hex: "", code: .truncated, offset: 0),
        .init(name: "uint head cut short", hex: "19 01", code: .truncated, offset: 0),
        .init(name: "reserved additional info 28", hex: "1c", code: .malformedHead, offset: 0),
        .init(name: "reserved additional info 30 on bstr", hex: "5e", code: .malformedHead, offset: 0),
        .init(name: "indefinite unsigned", hex: "1f", code: .invalidIndefiniteLength, offset: 0),
        .init(name: "indefinite negative", hex: "3f", code: .invalidIndefiniteLength, offset: 0),
        .init(name: "indefinite tag", hex: "df", code: .invalidIndefiniteLength, offset: 0),
        .init(name: "two-byte simple below 32", hex: "f8 18", code: .invalidIndefiniteLength, offset: 0),
        .init(name: "break at top level", hex: "ff", code: .unexpectedBreak, offset: 0),
        .init(name: "break inside definite array", hex: "81 ff", code: .unexpectedBreak, offset: 1),
        .init(name: "integer chunk in indefinite bstr", hex: "5f 01 ff", code: .invalidChunk, offset: 1),
        .init(name: "text chunk in indefinite bstr", hex: "5f 61 61 ff", code: .invalidChunk, offset: 1),
        .init(name: "nested indefinite chunk", hex: "7f 7f ff ff", code: .invalidChunk, offset: 1),
        .init(name: "odd indefinite map", hex: "bf 01 ff", code: .incompleteMap, offset: 2),
        .init(name: "invalid UTF-8 (lone continuation)", hex: "61 80", code: .invalidUTF8, offset: 0),
        .init(name: "overlong UTF-8", hex: "62 c0 80", code: .invalidUTF8, offset: 0),
        .init(name: "UTF-16 surrogate in UTF-8", hex: "63 ed a0 80", code: .invalidUTF8, offset: 0),
        .init(name: "code point above U+10FFFF", hex: "64 f4 90 80 80", code: .invalidUTF8, offset: 0),
        .init(name: "truncated UTF-8 sequence", hex: "62 61 e2", code: .invalidUTF8, offset: 0),
        // After eight ASCII bytes (the in-line ASCII test's word), in the word and in the tail.
        .init(
            name: "invalid UTF-8 after a word of ASCII", hex: "6c 61 62 63 64 65 66 67 68 69 6a c0 80",
            code: .invalidUTF8,
            offset: 0),
        .init(
            name: "lone continuation in the tail", hex: "69 61 62 63 64 65 66 67 68 80", code: .invalidUTF8, offset: 0),
        .init(
            name: "non-ASCII inside the first word", hex: "6a 61 62 63 ff 65 66 67 68 69 6a", code: .invalidUTF8,
            offset: 0),
        .init(name: "invalid UTF-8 in an indefinite chunk", hex: "7f 61 61 61 ff ff", code: .invalidUTF8, offset: 3),
        .init(name: "duplicate text key", hex: "a2 61 61 01 61 61 02", code: .duplicateMapKey, offset: 4),
        .init(
            name: "duplicate int key in non-preferred form", hex: "a2 01 00 18 01 00", code: .duplicateMapKey, offset: 3
        ),
        .init(name: "duplicate key in indefinite map", hex: "bf 02 00 02 00 ff", code: .duplicateMapKey, offset: 3),
        // Found by FuzzCBOR: an indefinite-length "" key and a definite "" key were taken as different
        // keys, and the map re-encoded with a duplicate. Chunked strings compare by content.
        .init(
            name: "indefinite and definite empty text keys (FuzzCBOR crash fd1397ad)",
            hex: "bf 2c 00 00 00 7f ff 00 69 01 00 00 00 00 00 60 60 60 60 60 60 40 00 ff",
            code: .duplicateMapKey, offset: 19),
        // Found by FuzzCBOR in CI: two NaN keys with different payloads; the writer emits one canonical NaN.
        .init(
            name: "NaN keys with different payloads (FuzzCBOR crash 3159d67c)",
            hex:
                "bf fb 7f f8 00 00 00 61 cb cb cb cb 01 fb 7f f8 00 00 00 61 01 cb cb cb cb db cb cb cb cb cb 2c cb cb 25 ff",
            code: .duplicateMapKey, offset: 13),
        .init(
            name: "1.0 as half and as single are the same key", hex: "a2 f9 3c 00 00 fa 3f 80 00 00 01",
            code: .duplicateMapKey, offset: 5),
        .init(
            name: "a tag key in preferred and non-preferred form", hex: "a2 c1 00 00 d8 01 00 01",
            code: .duplicateMapKey, offset: 4),
        .init(
            name: "array keys, definite and indefinite", hex: "a2 81 00 00 9f 00 ff 01", code: .duplicateMapKey,
            offset: 4),
        .init(
            name: "chunked text key equal to a definite one", hex: "a2 7f 61 61 61 62 ff 00 62 61 62 01",
            code: .duplicateMapKey, offset: 8),
        .init(
            name: "two chunked byte-string keys with the same content",
            hex: "a2 5f 41 01 41 02 ff 00 5f 42 01 02 ff 01", code: .duplicateMapKey, offset: 8),
        .init(name: "trailing byte", hex: "00 00", code: .trailingBytes, offset: 1),
        .init(
            name: "array count beyond input", hex: "9b 00 00 00 01 00 00 00 00", code: .lengthExceedsInput, offset: 0),
        .init(name: "array count 2^64-1", hex: "9b ff ff ff ff ff ff ff ff", code: .lengthExceedsInput, offset: 0),
        .init(
            name: "map count whose doubling overflows", hex: "bb 80 00 00 00 00 00 00 00", code: .lengthExceedsInput,
            offset: 0),
        .init(name: "map count beyond input", hex: "a3 01 02", code: .lengthExceedsInput, offset: 0),
        .init(name: "byte string length 2^64-1", hex: "5b ff ff ff ff ff ff ff ff 00", code: .truncated, offset: 0),
        .init(name: "text length beyond input", hex: "7a 00 01 00 00 41", code: .truncated, offset: 0),
        .init(name: "tag with no content", hex: "d8 18", code: .truncated, offset: 2),
        .init(name: "tag 24 over an integer", hex: "d8 18 01", code: .invalidTagContent, offset: 2),
        .init(name: "tag 24 over text", hex: "d8 18 61 61", code: .invalidTagContent, offset: 2),
        .init(name: "reserved 0xfc", hex: "fc", code: .malformedHead, offset: 0),
        .init(
            name: "depth limit", hex: "81 81 81 81 00", code: .depthLimitExceeded, offset: 3,
            options: .init(maxDepth: 3)),
        .init(
            name: "depth limit through tags", hex: "c1 c1 c1 00", code: .depthLimitExceeded, offset: 2,
            options: .init(maxDepth: 2)),
        .init(name: "item limit", hex: "83 01 02 03", code: .itemLimitExceeded, offset: 3, options: .init(maxItems: 3)),
        .init(
            name: "input size limit", hex: "43 01 02 03", code: .inputTooLarge, offset: 0,
            options: .init(maxInputSize: 3)),
        .init(
            name: "non-preferred uint head (strict)", hex: "18 17", code: .nonPreferredEncoding, offset: 0,
            options: .init(requirePreferredEncoding: true)),
        .init(
            name: "non-preferred length head (strict)", hex: "59 00 01 00", code: .nonPreferredEncoding, offset: 0,
            options: .init(requirePreferredEncoding: true)),
        .init(
            name: "indefinite array (strict)", hex: "9f ff", code: .nonPreferredEncoding, offset: 0,
            options: .init(requirePreferredEncoding: true)),
        .init(
            name: "single float that fits half (strict)", hex: "fa 3f 80 00 00", code: .nonPreferredEncoding, offset: 0,
            options: .init(requirePreferredEncoding: true)),
    ]

    @Test("Malformed and over-limit inputs fail with the expected code and offset", arguments: failures)
    func decodeFailure(_ c: FailureCase) {
        do {
            _ = try CBORDocument(decoding: h(c.hex), options: c.options)
            Issue.record("\(c.name): accepted")
        } catch {
            #expect(error.code == c.code, "\(c.name)")
            #expect(error.offset == c.offset, "\(c.name)")
            // The message names the code and offset, never content.
            #expect(error.description == "CBOR \(c.code.rawValue) at byte \(c.offset)")
        }
    }

    @Test("Chunked string keys with different content are distinct keys")
    func chunkedKeysDistinct() throws {
        for hex in ["a2 7f 61 61 ff 00 62 61 62 01", "a2 7f 61 61 61 62 ff 00 62 61 63 01", "a2 5f ff 00 41 00 01"] {
            let bytes = hex.split(separator: " ").map { UInt8($0, radix: 16)! }
            let doc = try CBORDocument(decoding: bytes)
            #expect(doc.root.count == 2)
            // Re-encoding (chunks joined) still decodes: the keys stay distinct.
            _ = try CBORDocument(decoding: CBORValue(doc.root).encoded())
        }
    }

    @Test(
        "Maps of more than 16 pairs (the sorted path): float, tag, array and chunked-string keys compare as the writer would encode them"
    )
    func largeMapExoticKeys() throws {
        // 20 distinct keys of every kind that is compared through an encoding.
        var keys: [[UInt8]] = (0..<8).map { [0xfa, 0x3f, 0x80, 0x00, UInt8($0)] }  // floats (single)
        keys += (0..<4).map { [0xc1, UInt8($0)] }  // tags
        keys += (0..<4).map { [0x82, 0x00, UInt8($0)] }  // arrays
        keys += (0..<4).map { [0x7f, 0x61, 0x61, 0x61, 0x61 + UInt8($0), 0xff] }  // chunked text
        func map(_ ks: [[UInt8]]) -> [UInt8] { [0xb8, UInt8(ks.count)] + ks.flatMap { $0 + [0x00] } }
        let ok = try CBORDocument(decoding: map(keys))
        #expect(ok.root.count == 20)
        // Each kind of duplicate is found: 1.0 as half vs single, NaN payloads,
        // a tag in non-preferred form, an indefinite array, a chunked string equal to a definite one.
        let duplicates: [([UInt8], [UInt8])] = [
            ([0xf9, 0x3c, 0x00], [0xfa, 0x3f, 0x80, 0x00, 0x00]),
            ([0xfb, 0x7f, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01], [0xf9, 0x7e, 0x00]),
            ([0xd8, 0x01, 0x00], [0xc1, 0x00]),
            ([0x9f, 0x00, 0x01, 0xff], [0x82, 0x00, 0x01]),
            ([0x62, 0x61, 0x61], [0x7f, 0x61, 0x61, 0x61, 0x61, 0xff]),
        ]
        // Twenty integer keys beside each pair, so the map takes the sorted path and the pair is its
        // only possible duplicate.
        let fillers: [[UInt8]] = (0..<20).map { [UInt8($0)] }
        for (a, b) in duplicates {
            do {
                _ = try CBORDocument(decoding: map(fillers + [a] + [b]))
                Issue.record("\(a) and \(b) were accepted as distinct keys")
            } catch {
                #expect(error.code == .duplicateMapKey)
            }
            // With another key in place of `b`, the map is fine.
            #expect(try CBORDocument(decoding: map(fillers + [a] + [[0x63, 0x7a, 0x7a, 0x7a]])).root.count == 22)
        }
    }

    @Test(
        "Keys in ascending order pass after one comparison each; a repeat or a step down anywhere (also at the last key) still finds every duplicate, in small and large maps"
    )
    func ascendingKeys() throws {
        func text(_ k: Int) -> [UInt8] { [0x66] + Array("key_\(String(format: "%02d", k))".utf8) }
        func map(_ ks: [[UInt8]]) -> [UInt8] {
            (ks.count < 24 ? [0xa0 | UInt8(ks.count)] : [0xb8, UInt8(ks.count)]) + ks.flatMap { $0 + [0xf6] }
        }
        for size in [2, 12, 16, 17, 40] {
            let ints: [[UInt8]] = (0..<size).map { $0 < 24 ? [UInt8($0)] : [0x18, UInt8($0)] }
            let texts = (0..<size).map(text)
            for keys in [ints, texts, ints + texts] where keys.count <= 40 {
                let keyBytes = keys.map(\.count)
                func offset(_ j: Int) -> Int { (keys.count < 24 ? 1 : 2) + keyBytes[..<j].reduce(0, +) + j }
                #expect(try CBORDocument(decoding: map(keys)).root.count == keys.count, "ascending, \(keys.count) keys")
                #expect(try CBORDocument(decoding: map(keys.reversed())).root.count == keys.count, "descending")
                // The last key repeating the one before it, and the first: ascending up to the end.
                for repeated in [keys.count - 2, 0] {
                    var ks = keys
                    ks[keys.count - 1] = keys[repeated]
                    do {
                        _ = try CBORDocument(decoding: map(ks))
                        Issue.record("\(keys.count) keys, key \(repeated) repeated last: accepted")
                    } catch {
                        #expect(error.code == .duplicateMapKey && error.offset == offset(keys.count - 1))
                    }
                }
            }
        }
    }

    @Test("Maps of up to 16 pairs (the fingerprint path): keys alike in length, head and tail still compare in full")
    func smallMapFingerprints() throws {
        // 16 text keys of 24 bytes that share their first and last eight bytes (the fingerprint's
        // material) and differ only in the middle, plus ints that differ only in head width.
        func key(_ k: Int) -> [UInt8] { [0x78, 24] + Array("abcdefgh_mid_\(String(format: "%02d", k))_stuvwxyz".utf8) }
        func map(_ ks: [[UInt8]]) -> [UInt8] { [0xa0 | UInt8(ks.count)] + ks.flatMap { $0 + [0x00] } }
        let keys = (0..<16).map(key)
        #expect(Set(keys).count == 16 && keys.allSatisfy { $0.count == 26 })
        #expect(try CBORDocument(decoding: map(keys)).root.count == 16)
        // Any one repeated, wherever it sits, is found at the second occurrence.
        for (i, j) in [(0, 15), (7, 8), (14, 15), (3, 11)] {
            var ks = keys
            ks[j] = ks[i]
            do {
                _ = try CBORDocument(decoding: map(ks))
                Issue.record("key \(i) repeated at \(j) was accepted")
            } catch {
                #expect(error.code == .duplicateMapKey)
                #expect(error.offset == 1 + j * 27)
            }
        }
        // Integer keys: 1 and 0x18 0x01 are the same key; -1 (0x20) and 1 are not.
        #expect(throws: CBORError.self) { try CBORDocument(decoding: map([[0x01], [0x20], [0x18, 0x01]])) }
        #expect(
            try CBORDocument(decoding: map([[0x01], [0x20], [0x21], [0x41, 0x01], [0x61, 0x01]])).root.count == 5)
        // A chunked key among definite ones is compared by content, in either order.
        #expect(throws: CBORError.self) {
            try CBORDocument(decoding: map([[0x62, 0x61, 0x62], [0x01], [0x7f, 0x61, 0x61, 0x61, 0x62, 0xff]]))
        }
        #expect(throws: CBORError.self) {
            try CBORDocument(decoding: map([[0x7f, 0x61, 0x61, 0x61, 0x62, 0xff], [0x01], [0x62, 0x61, 0x62]]))
        }
    }

    @Test(
        "Interned text: well-known identifiers decode to the literal, look-alikes and unknown strings to their own bytes"
    )
    func internedText() throws {
        // Same lengths as interned entries, one byte different; an unknown long string; a chunked one.
        let texts = [
            "org.iso.18013.5.1.mDL", "org.iso.18013.5.1.mDM", "org.iso.18013.5.1", "org.iso.18013.5.2",
            "issuing_authority", "issuing_authoritz", "driving_privileges", "an_unknown_long_identifier", "short",
        ]
        for t in texts {
            let doc = try CBORDocument(decoding: CBORValue.text(t).encoded())
            #expect(doc.root.stringValue == t)
        }
        #expect(
            InternedText.known.allSatisfy { $0.utf8.count > 15 && $0.utf8.count < InternedText.maxLength },
            "entries of 15 bytes or fewer, or of maxLength or more, are never looked up")
        // The lookup itself: every entry found, and look-alikes differing in the first word, the middle
        // or the last byte (each a full or overlapping 8-byte compare) not found.
        for k in InternedText.known { #expect(Array(k.utf8).withUnsafeBytes { InternedText.lookup($0) } == k) }
        for miss in [
            "xrg.iso.18013.5.1.mDL", "org.iso.18X13.5.1.mDL", "org.iso.18013.5.1.mDM", "issuing_authoritz",
            "org.iso.18013.5.1.mD",
        ] {
            #expect(Array(miss.utf8).withUnsafeBytes { InternedText.lookup($0) } == nil, "\(miss)")
        }
        #expect(Set(InternedText.known).count == InternedText.known.count)
        for k in InternedText.known {
            let doc = try CBORDocument(decoding: CBORValue.text(k).encoded())
            #expect(doc.root.stringValue == k)
        }
        // (_ "org.iso.18013.5" ".1.mDL"): chunked, so assembled from its chunks.
        let chunked = try CBORDocument(
            decoding: [0x7f, 0x6f] + Array("org.iso.18013.5".utf8) + [0x66] + Array(".1.mDL".utf8) + [0xff])
        #expect(chunked.root.stringValue == "org.iso.18013.5.1.mDL")
    }

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

    @Test("Every one-byte head (argument below 24) decodes as RFC 8949 §3 says, with its item's exact range")
    func oneByteHeads() throws {
        for b in 0..<256 where b & 0x1f < 24 {
            let head = UInt8(b)
            let info = Int(b & 0x1f)
            let label = "0x\(String(b, radix: 16))"
            var bytes = [head]
            switch b >> 5 {
            case 2, 3: bytes += [UInt8](repeating: 0x61, count: info)  // the string's content
            case 4: bytes += [UInt8](repeating: 0x00, count: info)  // elements
            case 5: bytes += (0..<info).flatMap { [UInt8($0), 0x00] }  // distinct keys
            case 6: bytes += [0x40]  // a tag's content (an empty byte string)
            default: break
            }
            let item = try CBORDocument(decoding: bytes).root
            #expect(item.headRange == 0..<1, "\(label)")
            #expect(item.byteRange == 0..<bytes.count, "\(label)")
            switch b >> 5 {
            case 0: #expect(item.unsignedValue == UInt64(info), "\(label)")
            case 1: #expect(item.int64Value == -1 - Int64(info), "\(label)")
            case 2: #expect(item.byteStringValue == [UInt8](repeating: 0x61, count: info), "\(label)")
            case 3: #expect(item.stringValue == String(repeating: "a", count: info), "\(label)")
            case 4: #expect(item.type == .array && item.count == info, "\(label)")
            case 5: #expect(item.type == .map && item.count == info, "\(label)")
            case 6: #expect(item.tagNumber == UInt64(info) && item.tagContent?.byteStringValue == [], "\(label)")
            default:
                #expect(item.type == .simple && item.simpleValue == UInt8(info), "\(label)")
                #expect(item.boolValue == (info == 20 ? false : info == 21 ? true : nil), "\(label)")
                #expect(item.isNull == (info == 22) && item.isUndefined == (info == 23), "\(label)")
            }
            // A string whose content is cut short, and a container whose elements are missing.
            if (b >> 5 == 2 || b >> 5 == 3) && info > 0 {
                #expect(throws: CBORError(.truncated, at: 0), "\(label)") {
                    try CBORDocument(decoding: Array(bytes.dropLast()))
                }
            }
            if (4...6).contains(b >> 5) && bytes.count > 1 {
                #expect(throws: CBORError.self, "\(label)") { try CBORDocument(decoding: Array(bytes.dropLast())) }
            }
        }
    }

    @Test("Full integer range: 2^64-1 and -2^64")
    func integerRange() throws {
        let max = try CBORDocument(decoding: h("1b ffffffffffffffff")).root
        #expect(max.unsignedValue == UInt64.max)
        #expect(max.int64Value == nil)
        let min = try CBORDocument(decoding: h("3b ffffffffffffffff")).root
        #expect(min.type == .negativeInt && min.argument == UInt64.max)
        #expect(CBORDiagnostic.describe(min) == "-18446744073709551616")
        #expect(CBORValue.negative(UInt64.max).encoded() == h("3b ffffffffffffffff"))
        #expect(try CBORDocument(decoding: h("3b 7fffffffffffffff")).root.int64Value == Int64.min)
    }

    @Test("Deterministic encoding: shortest heads and bytewise-sorted map keys")
    func deterministicEncoding() throws {
        let v: CBORValue = .map([
            .init(.text("version"), .text("1.0")),
            .init(.text("status"), .unsigned(0)),
            .init(.int(-1), .int(1)),
            .init(.int(10), .bytes([UInt8](repeating: 1, count: 24))),
            .init(
                .text("a"),
                .array([
                    .unsigned(23), .unsigned(24), .unsigned(255), .unsigned(256), .unsigned(65535), .unsigned(65536),
                    .unsigned(UInt64(UInt32.max) + 1),
                ])),
        ])
        let bytes = v.encoded()
        let doc = try CBORDocument(decoding: bytes, options: .init(requirePreferredEncoding: true))
        let keys = doc.root.mapEntries.map { Array($0.key.encodedBytes) }
        #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(keys.first == h("0a"))
        #expect(
            Hex.encode(doc.root["a"]!.encodedBytes)
                == "87 17 1818 18ff 190100 19ffff 1a00010000 1b0000000100000000".replacingOccurrences(of: " ", with: "")
        )
        // Encoding is a pure function of the value.
        #expect(CBORValue(doc.root).encoded() == bytes)
        // Floats take the shortest exact width.
        #expect(CBORValue.float(1.5).encoded() == h("f9 3e00"))
        #expect(CBORValue.float(100000).encoded() == h("fa 47c35000"))
        #expect(CBORValue.float(1.1).encoded() == h("fb 3ff199999999999a"))
        #expect(CBORValue.float(.nan).encoded() == h("f9 7e00"))
        #expect(CBORValue.float(5.960464477539063e-8).encoded() == h("f9 0001"))
    }

    @Test("Raw splicing keeps pre-encoded bytes verbatim, including non-preferred ones")
    func splicing() throws {
        var w = CBORWriter()
        w.writeArrayHeader(count: 2)
        w.writeRaw(h("d8 18 58 03 a1 01 02"))  // non-preferred length head, as an issuer might send
        w.writeEmbedded(h("a0"))
        #expect(w.bytes == h("82 d8 18 58 03 a1 01 02 d8 18 41 a0"))
        let doc = try CBORDocument(decoding: w.bytes)
        #expect(Array(doc.root[0]!.encodedBytes) == h("d8 18 58 03 a1 01 02"))
    }

    @Test("Text-key lookup compares bytes without allocating, and rejects indefinite keys")
    func lookup() throws {
        let doc = try CBORDocument(decoding: h("a2 63 6b6579 01 7f 61 6b ff 02"))
        #expect(doc.root["key"]?.unsignedValue == 1)
        #expect(doc.root["k"] == nil)  // the indefinite "k" key is not matched by the byte compare
        #expect(doc.root["missing"] == nil)
        // Keys are skipped whole, however deep their values: the match is found after nested entries.
        let nested = try CBORDocument(
            decoding: h("a4 61 61 a1 61 62 82 01 02 20 03 1b 7fffffffffffffff 04 3b 7fffffffffffffff 05"))
        #expect(nested.root["b"] == nil)
        #expect(nested.root["a"]?["b"]?.count == 2)
        #expect(doc.root[""] == nil && doc.root.tagContent == nil)
        #expect(try CBORDocument(decoding: h("a1 60 07")).root[""]?.unsignedValue == 7)
        // Integer keys by value: -1, 2^63 − 1, −2^63; an integer key is never a text key and the reverse.
        #expect(nested.root[intKey: -1]?.unsignedValue == 3)
        #expect(nested.root[intKey: Int64.max]?.unsignedValue == 4)
        #expect(nested.root[intKey: Int64.min]?.unsignedValue == 5)
        #expect(nested.root[intKey: 1] == nil && nested.root[intKey: 0] == nil)
        // A non-preferred head, the same value.
        #expect(try CBORDocument(decoding: h("a1 18 01 09")).root[intKey: 1]?.unsignedValue == 9)
        #expect(try CBORDocument(decoding: h("a1 61 31 09")).root[intKey: 1] == nil)
        #expect(try CBORDocument(decoding: h("82 01 02")).root[intKey: 1] == nil)
        #expect(try CBORDocument(decoding: h("82 01 02")).root["a"] == nil)
    }

    @Test("Diagnostic notation: indefinite forms, nested containers, escaping, pretty printing")
    func diagnostic() throws {
        let d = try CBORDocument(decoding: h("83 9f 01 ff bf 61 61 f5 ff 62 0a 22")).root
        #expect(CBORDiagnostic.describe(d) == #"[[_ 1], {_ "a": true}, "\n\""]"#)
        let pretty = CBORDiagnostic.describe(
            try CBORDocument(decoding: h("a1 01 82 02 03")).root, options: .init(indent: 2))
        #expect(pretty == "{\n  1: [\n    2,\n    3\n  ]\n}")
        #expect(CBORDiagnostic.describe(try CBORDocument(decoding: h("fb 7e37e43c8800759c")).root) == "1.0e+300")
    }

    @Test("Dates: tdate and full-date parsing, and formatting")
    func dates() throws {
        #expect(MdocDate.parseDateTime("2024-02-29T23:59:59Z").map(MdocDate.formatDateTime) == "2024-02-29T23:59:59Z")
        #expect(
            MdocDate.parseDateTime("2024-01-01T01:00:00+01:00").map(MdocDate.formatDateTime) == "2024-01-01T00:00:00Z")
        #expect(MdocDate.parseDateTime("2023-02-29T00:00:00Z") == nil)
        #expect(MdocDate.parseDateTime("2023-01-01 00:00:00Z") == nil)
        #expect(MdocDate.parseDateTime("2023-01-01T00:00:00") == nil)
        // Every digit position holds a digit: the characters just below and above "0"..."9" are refused.
        let good = Array("2024-02-29T23:59:59+01:30".utf8)
        #expect(MdocDate.parseDateTime(String(decoding: good, as: UTF8.self)) != nil)
        for p in good.indices where good[p] >= 0x30 && good[p] <= 0x39 {
            for bad in [UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: " "), 0x80] {
                var text = good
                text[p] = bad
                #expect(MdocDate.parseDateTime(String(decoding: text, as: UTF8.self)) == nil, "\(p) \(bad)")
            }
        }
        #expect(MdocDate.parseFullDate("1970-0/-02") == nil && MdocDate.parseFullDate("1970-01-0:") == nil)
        #expect(MdocDate.parseFullDate("1970-01-02") == Date(timeIntervalSince1970: 86400))
        let tagged = try CBORDocument(decoding: h("d9 03ec 6a 323032302d30312d3031")).root
        #expect(tagged.dateValue.map(MdocDate.formatDateTime) == "2020-01-01T00:00:00Z")
    }
}

@Suite("CBOR: heads written into caller buffers")
struct CBORHeadWriterTests {
    @Test(
        "writeHead(at:) and writeText(at:) produce the same bytes and lengths as the array writer, at every length boundary"
    )
    func heads() {
        let values: [UInt64] = [0, 1, 23, 24, 255, 256, 65535, 65536, 0xffff_ffff, 0x1_0000_0000, UInt64.max]
        for major: UInt8 in [0, 2, 3, 4, 5, 6] {
            for v in values {
                var w = CBORWriter()
                w.writeHead(major: major, argument: v)
                var buf = [UInt8](repeating: 0xee, count: 12)
                let n = buf.withUnsafeMutableBufferPointer {
                    CBORWriter.writeHead(major: major, argument: v, at: $0.baseAddress!)
                }
                #expect(n == w.bytes.count && n == CBORWriter.headLength(v), "major \(major) value \(v)")
                #expect(Array(buf[..<n]) == w.bytes, "major \(major) value \(v)")
                #expect(buf[n...].allSatisfy { $0 == 0xee }, "wrote past the head: major \(major) value \(v)")
            }
        }
        for text in ["", "dcapi", String(repeating: "é", count: 40), String(repeating: "x", count: 300)] {
            var w = CBORWriter()
            w.writeText(text)
            var buf = [UInt8](repeating: 0, count: w.bytes.count)
            let utf8 = Array(text.utf8)
            let n = buf.withUnsafeMutableBufferPointer { out in
                utf8.withUnsafeBufferPointer { CBORWriter.writeText($0, at: out.baseAddress!) }
            }
            #expect(n == w.bytes.count && buf == w.bytes)
        }
    }
}
