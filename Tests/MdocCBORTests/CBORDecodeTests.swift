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
}
