import Foundation
import Testing
import TestSupport
@testable import MdocCBOR

/// Heads, the integer range, deterministic encoding, splicing and look-ups.
extension CBORDecodeTests {
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
