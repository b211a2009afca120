import Foundation
import Testing

@testable import WebEncoding

@Suite("JSON: the strict bounded parser and the deterministic writer")
struct JSONTests {
    static func parse(_ s: String, _ limits: JSONValue.Limits = .init()) throws(JSONValue.ParseError) -> JSONValue {
        try JSONValue.parse(Array(s.utf8), limits: limits)
    }

    struct Refusal: CustomTestStringConvertible, Sendable {
        let input: [UInt8]
        let rule: String
        var testDescription: String { rule }
        init(_ s: String, _ rule: String) {
            input = Array(s.utf8)
            self.rule = rule
        }
        init(bytes: [UInt8], _ rule: String) {
            input = bytes
            self.rule = rule
        }
    }

    static let refusals: [Refusal] = [
        .init("", "JSON ends early"),
        .init("{\"a\":1,\"a\":2}", "duplicate JSON object key"),
        .init("{\"a\":1,}", "JSON object key is not a string"),
        .init("[1,]", "invalid JSON value"),
        .init("{\"a\" 1}", "JSON object lacks ':'"),
        .init("{\"a\":1 \"b\":2}", "JSON object lacks ',' or '}'"),
        .init("[1 2]", "JSON array lacks ',' or ']'"),
        .init("{a:1}", "JSON object key is not a string"),
        .init("01", "trailing bytes after the JSON value"),
        .init("1.", "invalid JSON number"),
        .init("1e", "invalid JSON number"),
        .init("-", "invalid JSON value"),
        .init("+1", "invalid JSON value"),
        .init("NaN", "invalid JSON value"),
        .init("1e999", "invalid JSON number"),
        .init("tru", "invalid JSON literal"),
        .init("nul", "invalid JSON literal"),
        .init("\"a", "unterminated JSON string"),
        .init("\"\\x\"", "invalid JSON escape"),
        .init("\"\\u12\"", "invalid JSON \\u escape"),
        .init("\"\\ud800\"", "lone surrogate in JSON string"),
        .init("\"\\udc00\"", "lone surrogate in JSON string"),
        .init("\"\\ud800\\u0041\"", "lone surrogate in JSON string"),
        .init("\"a\u{1}b\"", "control character in JSON string"),
        .init(bytes: [0x22, 0xc3, 0x28, 0x22], "invalid UTF-8 in JSON string"),
        .init(bytes: [0x22, 0xed, 0xa0, 0x80, 0x22], "invalid UTF-8 in JSON string"),
        .init(bytes: [0x22, 0xc0, 0xaf, 0x22], "invalid UTF-8 in JSON string"),
        // After an ASCII run (the check starts at the first byte at or above 0x80), and valid UTF-8
        // followed by an invalid sequence.
        .init(bytes: [0x22] + Array("abcdefghij".utf8) + [0xc3, 0x28, 0x22], "invalid UTF-8 in JSON string"),
        .init(bytes: [0x22, 0x61, 0xc3, 0xa9, 0x62, 0xed, 0xa0, 0x80, 0x22], "invalid UTF-8 in JSON string"),
        .init("{} {}", "trailing bytes after the JSON value"),
        .init("'a'", "invalid JSON value"),
    ]

    @Test("Malformed JSON is refused with the rule it breaks", arguments: refusals)
    func refusal(_ r: Refusal) {
        #expect {
            try JSONValue.parse(r.input)
        } throws: { error in
            (error as? JSONValue.ParseError)?.what == r.rule
        }
    }

    @Test("Well-formed JSON parses; members keep their order; escapes and surrogate pairs decode")
    func accepted() throws {
        let v = try Self.parse(" {\"b\":[true,false,null],\"a\":\"x\\n\\u00e9\\ud83d\\ude00\\/\",\"n\":-0.5e+1} ")
        #expect(v.object?.map(\.0) == ["b", "a", "n"])
        #expect(v["b"] == .array([.bool(true), .bool(false), .null]))
        #expect(v["a"]?.string == "x\né😀/")
        #expect(v["n"] == .number(JSONNumber("-5")!))
        #expect(v["missing"] == nil)
        #expect(try Self.parse("[]") == .array([]))
        #expect(try Self.parse("\"\"") == .string(""))
    }

    @Test(
        "Members by fixed and run-time names; a node compares with text as decoded text, escaped or not, only as a string"
    )
    func nodeStringEquality() throws {
        let text =
            #"{"p\u0061th":"org.iso.18013.5.1","b":"\u00e9","n":1,"e":"","c":"org.iso.18013.5.\u0031","#
            + #""d":"org.iso.18013.5.2","f":"1"}"#
        let root = try JSONDocument(Array(text.utf8)).root
        var keys = [JSONNode]()
        root.forEachMember { k, _ in keys.append(k) }
        // Members by a fixed name and by a name known at run time, the key escaped or not.
        #expect(root["path"]?.string == "org.iso.18013.5.1" && root.member("path")?.string == "org.iso.18013.5.1")
        #expect(root["pat"] == nil && root.member("paths") == nil && root.member("é") == nil)
        #expect(root["b"]?.string == "é" && root.member(String("path".prefix(3))) == nil)
        #expect(try JSONDocument(Array(#"{"é":2}"#.utf8)).root.member("é")?.number?.text == "2")
        #expect(root["path"]?["b"] == nil && keys[0]["path"] == nil)
        // Against text: decoded, only for a string.
        #expect(keys[0].isString("path") && !keys[0].isString("pat") && !keys[0].isString("paths"))
        #expect(root["path"]?.isString("org.iso.18013.5.1") == true && root["c"]?.isString("org.iso.18013.5.1") == true)
        #expect(root["d"]?.isString("org.iso.18013.5.1") == false)
        #expect(root["b"]?.isString("é") == true && root["b"]?.isString("e") == false)
        #expect(root["n"]?.isString("1") == false && root["f"]?.isString("1") == true)
        #expect(root["e"]?.isString("") == true && root["e"]?.isString("x") == false)
        #expect(!root.isString(""))
        // Fixed names through `spells` (compared as bytes of the decoded text).
        #expect(keys[0].spells("path") && !keys[0].spells("pat") && !keys[0].spells("paths"))
        #expect(root["b"]?.spells("é") == true && root["n"]?.spells("1") == false && !root.spells(""))
        #expect(root["e"]?.spells("") == true)
        // Raw UTF-8 after an ASCII run reads back whole.
        let raw = try JSONDocument(Array("{\"k\":\"abcdefghijé😀z\"}".utf8)).root
        #expect(raw["k"]?.string == "abcdefghijé😀z")
        // Elements visited in order without an array of them; nothing for a non-array.
        let list = try JSONDocument(Array(#"[1,{"a":[2,3]},"x",[],4]"#.utf8)).root
        var seen = [String]()
        list.forEachElement { seen.append($0.number?.text ?? ($0.string ?? ($0.isObject ? "{}" : "[]"))) }
        #expect(seen == ["1", "{}", "x", "[]", "4"])
        var none = 0
        root.forEachElement { _ in none += 1 }
        #expect(none == 0)
    }

    @Test("Numbers keep their text; integers are exact beyond 2^53; equality is by value")
    func numbers() throws {
        let big = try Self.parse("9007199254740993")
        guard case .number(let n) = big else {
            Issue.record("not a number")
            return
        }
        #expect(n.int64 == 9_007_199_254_740_993)
        #expect(n.text == "9007199254740993")
        #expect(n != JSONNumber("9007199254740992")!)  // the doubles are equal, the integers not
        #expect(JSONNumber("1")! == JSONNumber("1.0")!)
        #expect(JSONNumber("1.0")!.int64 == nil)
        #expect(JSONNumber("1e2")!.int64 == nil)
        #expect(JSONNumber("-9223372036854775808")!.int64 == .min)
        #expect(JSONNumber("9223372036854775808")!.int64 == nil)
    }

    @Test("Limits: size, depth, members and string length are enforced before anything larger is built")
    func limits() throws {
        let l = JSONValue.Limits(maxBytes: 64, maxDepth: 3, maxMembers: 2, maxStringBytes: 4)
        #expect(throws: JSONValue.ParseError.self) { try Self.parse(String(repeating: " ", count: 65) + "1", l) }
        #expect(try Self.parse("[[1]]", l) == .array([.array([.number(JSONNumber(1))])]))
        #expect(throws: JSONValue.ParseError.self) { try Self.parse("[[[1]]]", l) }
        #expect(throws: JSONValue.ParseError.self) { try Self.parse("[1,2,3]", l) }
        #expect(throws: JSONValue.ParseError.self) { try Self.parse("{\"a\":1,\"b\":2,\"c\":3}", l) }
        #expect(try Self.parse("\"abcd\"", l) == .string("abcd"))
        #expect(throws: JSONValue.ParseError.self) { try Self.parse("\"abcde\"", l) }
        #expect(throws: JSONValue.ParseError.self) { try Self.parse("\"abc\\u00e9\"", l) }  // 5 bytes unescaped
        // 100,000 nested arrays: refused at the depth limit, no stack exhaustion.
        let deep = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(deep) }
        #expect(try Self.parse("[[[1]]]").shape == (depth: 3, widest: 1))
        // Strings as elements and member values are read on a path of their own: the same depth rule.
        for (text, deepest) in [
            (#"[["a"]]"#, false), (#"[[["a"]]]"#, true), (#"{"a":{"b":"c"}}"#, false),
            (#"{"a":{"b":{"c":"d"}}}"#, true),
            (#"{"a":["b",{"c":["d"]}]}"#, true),
        ] {
            let depthRule = JSONValue.Limits(maxBytes: 64, maxDepth: 3, maxMembers: 4, maxStringBytes: 4)
            do {
                _ = try JSONDocument(Array(text.utf8), limits: depthRule)
                #expect(!deepest, "\(text) is past the depth limit")
            } catch {
                #expect(deepest && error.code == .tooDeep, "\(text): \(error.code)")
            }
        }
    }

    @Test("The writer is deterministic and minimal, and what it writes parses back to the same value")
    func writer() throws {
        let v = JSONValue.object([
            ("z", .string("q\"b\\s\u{1}\u{1f}\n\r\t\u{8}\u{c}é😀</")),
            ("a", .array([.number(JSONNumber(-3)), .bool(true), .null, .object([])])),
            ("n", .number(JSONNumber("1.5e3")!)),
        ])
        let text = String(decoding: v.serialized, as: UTF8.self)
        #expect(
            text == "{\"z\":\"q\\\"b\\\\s\\u0001\\u001f\\n\\r\\t\\b\\fé😀</\",\"a\":[-3,true,null,{}],\"n\":1.5e3}")
        #expect(try JSONValue.parse(v.serialized) == v)
        // Foundation reads it the same way.
        let f = try JSONSerialization.jsonObject(with: Data(v.serialized)) as? [String: Any]
        #expect(f?["z"] as? String == "q\"b\\s\u{1}\u{1f}\n\r\t\u{8}\u{c}é😀</")
    }

    @Test("The writer's eight-byte scan: an escape at every position of long strings is written and read back")
    func longStrings() throws {
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65] {
            for position in 0..<max(length, 1) {
                for special in ["\"", "\\", "\u{1}", "\n", "é"] {
                    var chars = Array(repeating: "a", count: length)
                    if length > 0 { chars[position] = special }
                    let text = chars.joined()
                    let v = JSONValue.array([.string(text)])
                    #expect(try JSONValue.parse(v.serialized) == v, "length \(length) at \(position)")
                }
            }
        }
        var w = JSONWriter()
        w.writeRaw("{\"k\":")
        w.writeBase64URLString([0xfb, 0xff, 0x00])
        w.writeRaw("}")
        #expect(String(decoding: w.bytes, as: UTF8.self) == "{\"k\":\"-_8A\"}")
    }

    /// A message cut into pieces at `cuts`, declaring `count` bytes (its own length by default).
    struct Pieces: PiecewiseBytes {
        let bytes: [UInt8]
        let cuts: [Int]
        var declared: Int?
        var count: Int { declared ?? bytes.count }
        func forEachPiece(_ body: (UnsafeRawBufferPointer) -> Void) {
            let bounds = [0] + cuts + [bytes.count]
            bytes.withUnsafeBytes { b in
                for k in 0..<(bounds.count - 1) { body(UnsafeRawBufferPointer(rebasing: b[bounds[k]..<bounds[k + 1]])) }
            }
        }
    }

    @Test(
        "base64url written in place: a message in pieces, and a buffer appended, read as the whole encoded at once, with or without room reserved; pieces that do not add up leave the text as it was"
    )
    func base64InPlace() {
        var rng = SystemRandomNumberGenerator()
        for n in [0, 1, 2, 3, 4, 47, 48, 49, 95, 96, 97, 1000, 14_706] {
            let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let whole = Base64URL.encode(b)
            let cuts = (0..<3).map { _ in Int.random(in: 0...n, using: &rng) }.sorted()
            for capacity in [0, 8, n * 2 + 64] {
                var w = JSONWriter(capacity: capacity)
                w.writeRaw("[")
                let wrote = w.writeBase64URLString(pieces: Pieces(bytes: b, cuts: cuts))
                #expect(wrote)
                w.writeRaw("]")
                #expect(
                    String(decoding: w.bytes, as: UTF8.self) == "[\"\(whole)\"]", "length \(n), capacity \(capacity)")
                // Pieces one byte short and one byte over what they declare: refused, nothing written.
                for declared in [n + 1, n - 1] where declared >= 0 {
                    let before = w.bytes
                    let refused = !w.writeBase64URLString(pieces: Pieces(bytes: b, cuts: cuts, declared: declared))
                    #expect(refused)
                    #expect(w.bytes == before, "length \(n), declared \(declared)")
                }
                var out: [UInt8] = Array("x".utf8)
                out.reserveCapacity(capacity)
                b.withUnsafeBytes { Base64URL.encode($0, appendingTo: &out) }
                #expect(out == Array("x\(whole)".utf8), "appended, length \(n), capacity \(capacity)")
            }
        }
    }

    @Test("Several members in one walk, and the strings of an array of strings in place")
    func membersAndStringElements() throws {
        let doc = try JSONDocument(Array(#"{"id":"c1","p\u0061th":["ns","n\u0061me"],"values":[1],"x":{"id":2}}"#.utf8))
        let root = doc.root
        func look(_ node: JSONNode, _ names: [StaticString]) -> [JSONNode?] {
            var found = [JSONNode?](repeating: nil, count: names.count)
            node.members(named: names) { found[$0] = $1 }
            return found
        }
        let m = look(root, ["id", "path", "values", "intent_to_retain"])
        #expect(m[0]?.string == "c1" && m[1]?.count == 2 && m[2]?.count == 1 && m[3] == nil)
        // Names given in another order, a name matching no key, a name twice (the first takes it), and
        // not an object.
        let n = look(root, ["x", "nope", "id", "id"])
        #expect(n[0]?["id"]?.number == JSONNumber("2") && n[1] == nil && n[2]?.string == "c1" && n[3] == nil)
        #expect(look(root["values"]!, ["id", "path", "values", "x"]).allSatisfy { $0 == nil })
        // Found in the object's order, each once.
        var seen = [Int]()
        root.members(named: ["x", "values", "id"]) { i, _ in seen.append(i) }
        #expect(seen == [2, 1, 0])
        // An array of exactly `count` strings: decoded (an escape in any string), else refused.
        var got = [[UInt8]]()
        #expect(m[1]!.withStringElements(count: 2) { got = $0.map { Array($0) } })
        #expect(got == [Array("ns".utf8), Array("name".utf8)])
        let plain = try JSONDocument(
            Array(#"[["a","bc"],["\u0041",""],["a"],["a","b","c"],["a",1],[1,"a"],{"a":"b"},"ab"]"#.utf8))
        var pairs = [[[UInt8]]]()
        let answers = plain.root.elements!.map { node in
            node.withStringElements(count: 2) { pairs.append($0.map { Array($0) }) }
        }
        #expect(answers == [true, true, false, false, false, false, false, false])
        #expect(pairs == [[[0x61], [0x62, 0x63]], [[0x41], []]])
        var triple = [[UInt8]]()
        #expect(plain.root.elements![3].withStringElements(count: 3) { triple = $0.map { Array($0) } })
        #expect(triple == [[0x61], [0x62], [0x63]])
        #expect(plain.root.elements![2].withStringElements(count: 1) { _ in })
    }

    @Test("A node's shape (depth and widest container of its subtree) matches a recursive count, for every node")
    func shapes() throws {
        func reference(_ v: JSONValue) -> (depth: Int, widest: Int) {
            switch v {
            case .object(let members):
                let inner = members.map { reference($0.1) }
                return (1 + (inner.map(\.depth).max() ?? 0), max(members.count, inner.map(\.widest).max() ?? 0))
            case .array(let items):
                let inner = items.map { reference($0) }
                return (1 + (inner.map(\.depth).max() ?? 0), max(items.count, inner.map(\.widest).max() ?? 0))
            default: return (0, 0)
            }
        }
        let texts = [
            #"{"a":[1,2,3,{"b":{"c":[[],[[1]]]}}],"d":{},"e":"s","f":[{"g":1,"h":2,"i":3,"j":4,"k":5}]}"#,
            "[[[[[[1]]]]],[1,2,3,4,5,6,7],{}]", #""x""#, "7", "[]",
        ]
        for text in texts {
            let doc = try JSONDocument(Array(text.utf8))
            // Every node reachable from the root, checked against its own value.
            var pending = [doc.root]
            while let node = pending.popLast() {
                #expect(node.shape == reference(node.value), "\(text)")
                if let items = node.elements { pending += items }
                node.forEachMember { _, v in pending.append(v) }
            }
        }
    }

    @Test("Dense input (a node every two bytes) grows the node buffer past its first guess, and every node reads back")
    func denseNodes() throws {
        for n in [1, 7, 100, 10_000] {
            let text = "[" + (0..<n).map { "\($0 % 10)" }.joined(separator: ",") + "]"
            let doc = try JSONDocument(Array(text.utf8), limits: .init(maxMembers: 20_000))
            let items = try #require(doc.root.elements)
            #expect(items.count == n)
            #expect(items.enumerated().allSatisfy { $0.element.number == JSONNumber("\($0.offset % 10)") })
            #expect(doc.root.shape == (depth: 1, widest: n))
        }
        // A refusal after the buffer grew (the partial nodes are freed: ASan and LeakSanitizer run this).
        let broken = "[" + String(repeating: "0,", count: 5_000) + "}"
        #expect(throws: JSONValue.ParseError.self) {
            try JSONDocument(Array(broken.utf8), limits: .init(maxMembers: 20_000))
        }
    }
}
