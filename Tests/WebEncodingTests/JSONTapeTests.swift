import Foundation
import Testing

@testable import WebEncoding

/// The tape and the reader's scans: look-ups, decoding on demand, every byte at every position,
/// duplicate keys and nesting without recursion.
extension JSONTests {
    @Test("The tape: lookups compare key bytes (escaped keys decoded), strings decode on demand, text is exact")
    func tape() throws {
        let text = #" {"a\u0062":[1,"x\ud83d\ude00\n",{"k":null}],"plain":"v","n":-1.5e2,"t":true} "#
        let doc = try JSONDocument(Array(text.utf8))
        let root = doc.root
        #expect(root.isObject && root.count == 4)
        let ab = try #require(root["ab"])
        #expect(ab.isArray && ab.count == 3)
        #expect(ab.elements?[1].string == "x😀\n")
        #expect(ab.elements?[2]["k"]?.isNull == true)
        #expect(root["plain"]?.string == "v" && root["n"]?.number == JSONNumber("-150") && root["t"]?.bool == true)
        #expect(root["missing"] == nil && root["a"] == nil)
        // One pass over the keys: the escaped key is decoded; keys are tried in order; not an object, no keys.
        var tried = [String]()
        #expect(
            root.containsKey { k in
                tried.append(k.string ?? "?")
                return k.spells("ab")
            })
        #expect(tried == ["ab"])
        #expect(!root.containsKey { $0.spells("a") || $0.spells("x") })
        #expect(root.containsKey { $0.spells("t") })
        #expect(!ab.containsKey { _ in true } && !root["plain"]!.containsKey { _ in true })
        #expect(String(decoding: root["plain"]!.text, as: UTF8.self) == "\"v\"")
        #expect(String(decoding: ab.text, as: UTF8.self) == #"[1,"x\ud83d\ude00\n",{"k":null}]"#)
        #expect(root.members?.map(\.0) == ["ab", "plain", "n", "t"])
        #expect(root.shape == (depth: 3, widest: 4))
        #expect(root.value == (try JSONValue.parse(Array(text.utf8))))
        // A key spelled with an escape duplicates the plain one.
        #expect(throws: JSONValue.ParseError.self) { try JSONDocument(Array(#"{"a":1,"\u0061":2}"#.utf8)) }
        // Past the pairwise bound (16 members) duplicates are found through a set of decoded keys:
        // escaped against plain, either order, at any position; distinct keys of one length pass.
        let many = (0..<40).map { #""\u006b\#($0)":0"# }
        #expect((try JSONDocument(Array("{\(many.joined(separator: ","))}".utf8))).root.members?.count == 40)
        for (a, b) in [(#""k7""#, #""\u006b7""#), (#""\u006b39""#, #""k39""#), (#""\u006b\u0032""#, #""k2""#)] {
            let text = "{\(many.joined(separator: ",")),\(a):1,\(b):2}"
            #expect(throws: JSONValue.ParseError.self, "\(a) \(b)") { try JSONDocument(Array(text.utf8)) }
        }
        // Non-ASCII escapes decode to UTF-8 (two, three and four bytes).
        let wide = try JSONDocument(Array(#"{"s":"\u00e9\u20ac\ud83d\ude00"}"#.utf8))
        #expect(wide.root["s"]?.string == "é€😀")
        // Bytes handed over in a buffer.
        let bytes = Array(#"{"z":[]}"#.utf8)
        let fromBuffer = try bytes.withUnsafeBufferPointer { try JSONDocument($0) }
        #expect(fromBuffer.root["z"]?.elements?.isEmpty == true)
        // String bytes in place (escapes decoded); emptiness read from the raw text.
        let strings = try JSONDocument(Array(#"["","\u0000","a\"",1,[]]"#.utf8)).root.elements ?? []
        #expect(strings.map(\.isEmptyString) == [true, false, false, false, false])
        var seen = [[UInt8]]()
        #expect(strings.map { s in s.withStringBytes { seen.append(Array($0)) } } == [true, true, true, false, false])
        #expect(seen == [[], [0], [0x61, 0x22]])
    }

    @Test("The reader's scan: every byte value at every position of strings to 19 bytes, each kind to 130, by its rule")
    func readerScan() throws {
        // Every byte value to 19 bytes (the first 16-byte block, the eight-byte words); the scan then
        // reads a second 16-byte block and goes on in 32-byte blocks, so longer strings put each kind
        // of byte (each class's bounds and its neighbours) at every position.
        let kinds = [0x00, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x41, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0xc3, 0xff]
        for length in Array(1...36) + [47, 48, 49, 50, 63, 64, 65, 80, 81, 100, 130] {
            for position in 0..<length {
                for byte in length <= 19 ? Array(0...255) : kinds {
                    var content = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    content[position] = UInt8(byte)
                    // Another string after it, so that a scan running past the quote would be seen.
                    let input = Array(#"{"k":""#.utf8) + content + Array(#"","x":"y"}"#.utf8)
                    let expected: JSONValue.ParseError.Code? =
                        switch UInt8(byte) {
                        case 0x22: .objectUnterminated  // the string ends early, then "a…" follows
                        case 0x5c: .invalidEscape  // backslash then 'a' or '"'
                        case 0..<0x20: .controlCharacter
                        case 0x80...: .invalidUTF8  // a lone byte ≥ 0x80 is never UTF-8
                        default: nil
                        }
                    do {
                        let doc = try JSONDocument(input)
                        #expect(expected == nil, "byte \(byte) at \(position) of \(length)")
                        #expect(doc.root["k"]?.string == String(decoding: content, as: UTF8.self))
                        #expect(doc.root["x"]?.string == "y")
                    } catch {
                        // A backslash last is followed by the closing quote: a valid escape of it.
                        let code = byte == 0x5c && position == length - 1 ? .objectUnterminated : expected
                        #expect(error.code == code, "byte \(byte) at \(position) of \(length)")
                    }
                }
                // Multi-byte UTF-8 at each position goes through the validating path.
                var content = Array(String(repeating: "a", count: length).utf8)
                content.replaceSubrange(position..<position + 1, with: Array("é€😀".utf8))
                let doc = try JSONDocument(Array(#"{"k":""#.utf8) + content + Array(#""}"#.utf8))
                #expect(doc.root["k"]?.string == String(decoding: content, as: UTF8.self))
            }
        }
    }

    @Test("Duplicate keys are found after nested values, pairwise (up to 16 members) and past it")
    func duplicatesAfterNestedValues() throws {
        let values = [#"{"a":{"b":[1,{"c":2}]}}"#, "[[],[[]]]", #""s""#, "7", "null"]
        for members in [2, 5, 16, 17, 40] {
            let keys = (0..<members).map { "key\($0)" }
            let text = keys.enumerated().map { #""\#($1)":\#(values[$0 % values.count])"# }
            let document = "{\(text.joined(separator: ","))}"
            let doc = try JSONDocument(Array(document.utf8))
            #expect(doc.root.members?.map(\.0) == keys)
            for repeated in [0, members / 2, members - 1] {
                let duplicate = "{\(text.joined(separator: ",")),\"key\(repeated)\":[{}]}"
                #expect(throws: JSONValue.ParseError(.duplicateKey), "\(repeated) of \(members)") {
                    try JSONDocument(Array(duplicate.utf8))
                }
            }
            // The same keys inside a nested object do not collide with the outer ones.
            let nested = "{\(text.joined(separator: ",")),\"inner\":{\(text.joined(separator: ","))}}"
            #expect(try JSONDocument(Array(nested.utf8)).root["inner"]?.count == members)
        }
    }

    @Test("Objects past the pairwise bound, side by side and nested: each one's keys are checked against its own only")
    func largeObjectsSideBySideAndNested() throws {
        let keys = (0..<20).map { #""k\#($0)":0"# }.joined(separator: ",")
        // Two siblings and an object inside another, each with the same 20 keys: no collision.
        let siblings = "[{\(keys)},{\(keys)},{\(keys),\"in\":{\(keys)},\"k99\":1}]"
        let doc = try JSONDocument(Array(siblings.utf8))
        #expect(doc.root.elements?.map(\.count) == [20, 20, 22])
        // After the nested object closes, the outer one still finds its own earlier key (its set was
        // made before the nested object's and is not the nested one's).
        for repeated in ["k0", "k19", "in"] {
            let text = "{\(keys),\"in\":{\(keys)},\"\(repeated)\":1}"
            #expect(throws: JSONValue.ParseError(.duplicateKey), "\(repeated)") { try JSONDocument(Array(text.utf8)) }
        }
        // A second large sibling at the same depth starts from an empty set: its repeat is its own.
        let again = "[{\(keys)},{\(keys),\"k5\":1}]"
        #expect(throws: JSONValue.ParseError(.duplicateKey)) { try JSONDocument(Array(again.utf8)) }
    }

    @Test("Nesting is read without recursion: deep input under a large depth limit, and every limit at its edge")
    func deepNesting() throws {
        for depth in [1, 15, 16, 1_000, 60_000] {
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let objects = String(repeating: #"{"a":"#, count: depth) + "0" + String(repeating: "}", count: depth)
            for input in [text, objects] {
                let limits = JSONValue.Limits(maxBytes: 1 << 22, maxDepth: Int.max)
                let doc = try JSONDocument(Array(input.utf8), limits: limits)
                #expect(doc.root.shape.depth == depth)
                // The default limit (16): a container at level 15 is the deepest one allowed.
                if depth <= 16 {
                    #expect(throws: Never.self) { try JSONDocument(Array(text.utf8)) }
                } else {
                    #expect(throws: JSONValue.ParseError(.tooDeep)) { try JSONDocument(Array(input.utf8)) }
                }
            }
        }
        // A scalar member at the limit is too deep, as a container is; no depth allows nothing.
        #expect(throws: JSONValue.ParseError(.tooDeep)) {
            try JSONDocument(Array(#"{"a":"s"}"#.utf8), limits: .init(maxDepth: 1))
        }
        #expect(try JSONDocument(Array(#"{}"#.utf8), limits: .init(maxDepth: 1)).root.count == 0)
        #expect(throws: JSONValue.ParseError(.tooDeep)) {
            try JSONDocument(Array("1".utf8), limits: .init(maxDepth: 0))
        }
        #expect(throws: JSONValue.ParseError(.tooDeep)) { try JSONDocument([], limits: .init(maxDepth: 0)) }
    }
}
