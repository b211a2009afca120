internal import CryptoCore

/// A small strict JSON parser (RFC 8259) for request framings, request objects and JOSE headers:
/// bounded size, depth, member count and string length; duplicate object keys rejected; invalid
/// UTF-8, lone surrogates and control characters in strings rejected; read without recursion, and no
/// tree deeper than the depth limit. Object members keep their received order.
package enum JSONValue: Sendable, Equatable {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(JSONNumber)
    case bool(Bool)
    case null

    package static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)):
            x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.array(let x), .array(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        default: false
        }
    }

    /// The member named `key` of an object (nil for a missing member or a non-object).
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// The string, when this is a string.
    package var string: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The members, when this is an object.
    package var object: [(String, JSONValue)]? { if case .object(let m) = self { return m } else { return nil } }
    /// The elements, when this is an array.
    package var array: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    /// The boolean, when this is one.
    package var bool: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// True for `null`.
    package var isNull: Bool { if case .null = self { return true } else { return false } }

    /// Nesting depth (a scalar is 0, `{}` and `[]` are 1) and the largest member count of any
    /// container in the value. Iterative, so any depth the parser accepted is safe here.
    package var shape: (depth: Int, widest: Int) {
        var depth = 0
        var widest = 0
        var stack: [(JSONValue, Int)] = [(self, 1)]
        while let (v, d) = stack.popLast() {
            switch v {
            case .object(let m):
                depth = max(depth, d)
                widest = max(widest, m.count)
                for (_, c) in m { stack.append((c, d + 1)) }
            case .array(let a):
                depth = max(depth, d)
                widest = max(widest, a.count)
                for c in a { stack.append((c, d + 1)) }
            default:
                break
            }
        }
        return (depth, widest)
    }

    /// Bounds checked while parsing, before anything larger is allocated.
    package struct Limits: Sendable {
        /// The whole input, in bytes.
        package var maxBytes = 1 << 20
        /// Nesting levels: a value at level `maxDepth` is refused (the top-level value is level 0).
        package var maxDepth = 16
        /// Members of any one object or elements of any one array.
        package var maxMembers = 256
        /// Any one string after unescaping, in UTF-8 bytes.
        package var maxStringBytes = 1 << 20

        /// Creates limits (defaults: 1 MiB, depth 16, 256 members, 1 MiB strings).
        package init(
            maxBytes: Int = 1 << 20, maxDepth: Int = 16, maxMembers: Int = 256, maxStringBytes: Int = 1 << 20
        ) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
            self.maxMembers = maxMembers
            self.maxStringBytes = maxStringBytes
        }
    }

    /// Why the input is not acceptable JSON: the rule broken (a closed code), never input content.
    package struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The rules of strict JSON (RFC 8259) and of the configured bounds; `what` words each.
        package enum Code: String, Sendable, Hashable, CaseIterable {
            case tooLarge, endsEarly, tooDeep, trailingBytes, keyNotString, duplicateKey, missingColon,
                tooManyMembers, objectUnterminated, tooManyElements, arrayUnterminated, invalidLiteral, invalidValue,
                invalidNumber, stringTooLong, invalidUTF8, stringUnterminated, controlCharacter, loneSurrogate,
                invalidEscape, invalidUnicodeEscape

            /// The rule in words, e.g. "duplicate JSON object key".
            package var what: String {
                switch self {
                case .tooLarge: "JSON larger than the limit"
                case .endsEarly: "JSON ends early"
                case .tooDeep: "JSON nested too deeply"
                case .trailingBytes: "trailing bytes after the JSON value"
                case .keyNotString: "JSON object key is not a string"
                case .duplicateKey: "duplicate JSON object key"
                case .missingColon: "JSON object lacks ':'"
                case .tooManyMembers: "too many JSON members"
                case .objectUnterminated: "JSON object lacks ',' or '}'"
                case .tooManyElements: "too many JSON array elements"
                case .arrayUnterminated: "JSON array lacks ',' or ']'"
                case .invalidLiteral: "invalid JSON literal"
                case .invalidValue: "invalid JSON value"
                case .invalidNumber: "invalid JSON number"
                case .stringTooLong: "JSON string longer than the limit"
                case .invalidUTF8: "invalid UTF-8 in JSON string"
                case .stringUnterminated: "unterminated JSON string"
                case .controlCharacter: "control character in JSON string"
                case .loneSurrogate: "lone surrogate in JSON string"
                case .invalidEscape: "invalid JSON escape"
                case .invalidUnicodeEscape: "invalid JSON \\u escape"
                }
            }
        }

        /// The rule broken.
        package let code: Code

        package init(_ code: Code) { self.code = code }

        /// The rule in words.
        package var what: String { code.what }

        /// `JSON <code>: <what>`.
        package var description: String { "JSON \(code.rawValue): \(what)" }
    }

    /// Parses a complete JSON text (surrounding whitespace allowed, nothing after the value).
    package static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(ParseError) -> JSONValue {
        try JSONDocument(bytes, limits: limits).root.value
    }

    /// Parses bytes handed over in a buffer.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, limits: Limits = Limits()) throws(ParseError)
        -> JSONValue
    {
        try JSONDocument(bytes, limits: limits).root.value
    }

}

/// A JSON number as received: the exact text (one string, so a number costs a value no more room
/// than a string does), read as a double or, for an integer written without fraction or exponent
/// that fits, as the exact integer (compare integers through `int64`: a double cannot hold every
/// 64-bit value).
package struct JSONNumber: Sendable, Equatable, Hashable {
    /// The number's text exactly as it appeared in the input.
    package let text: String

    /// Takes an RFC 8259 number lexeme (the parser checked the grammar); nil when it is not finite.
    package init?(_ text: String) {
        guard let d = Double(text), d.isFinite else { return nil }
        self.text = text
    }

    /// An integer.
    package init(_ value: Int64) { text = String(value) }

    /// The nearest double.
    package var double: Double { Double(text) ?? .nan }

    /// The exact value for an integer literal (`-?digits`) within Int64; nil otherwise.
    package var int64: Int64? {
        text.utf8.allSatisfy { $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) } ? Int64(text) : nil
    }

    /// Equal when the values are equal (`1`, `1.0` and `10e-1` are one number).
    package static func == (a: JSONNumber, b: JSONNumber) -> Bool {
        if let x = a.int64, let y = b.int64 { return x == y }
        return a.double == b.double
    }

    /// Hashes the value (consistent with `==`: equal integers have equal doubles).
    package func hash(into h: inout Hasher) { h.combine(double) }
}

/// Writes JSON text deterministically into one buffer: members in the order written, no
/// whitespace, strings with the minimal RFC 8259 escapes (`"`, `\\` and control characters).
/// A message handed over in pieces, in order, that a writer encodes without joining it first.
package protocol PiecewiseBytes {
    /// The message's length in bytes.
    var count: Int { get }
    /// Calls `body` with each piece in order; the pieces add up to `count` bytes.
    func forEachPiece(_ body: (UnsafeRawBufferPointer) -> Void)
}

package struct JSONWriter: Sendable {
    /// The text written so far (UTF-8).
    package private(set) var bytes: [UInt8] = []

    /// Creates an empty writer with room for `capacity` bytes.
    package init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Hands the text over and leaves the writer empty (no copy: the array is the writer's buffer).
    package mutating func takeBytes() -> [UInt8] {
        let b = bytes
        bytes = []
        return b
    }

    /// Writes a value.
    package mutating func write(_ v: JSONValue) {
        switch v {
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (k, (name, value)) in members.enumerated() {
                if k > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(name)
                bytes.append(UInt8(ascii: ":"))
                write(value)
            }
            bytes.append(UInt8(ascii: "}"))
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item)
            }
            bytes.append(UInt8(ascii: "]"))
        case .string(let s): writeString(s)
        case .number(let n): bytes.append(contentsOf: n.text.utf8)
        case .bool(let b): bytes.append(contentsOf: (b ? "true" : "false").utf8)
        case .null: bytes.append(contentsOf: "null".utf8)
        }
    }

    /// Appends JSON text as is (punctuation written by the caller, which answers for its validity).
    package mutating func writeRaw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Writes the base64url encoding of `data` as a string literal (its alphabet needs no escapes).
    package mutating func writeBase64URLString(_ data: [UInt8]) {
        data.withUnsafeBytes { writeBase64URLString($0) }
    }

    /// Writes the base64url encoding of `data` as a string literal.
    package mutating func writeBase64URLString(_ data: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        Base64URL.encode(data, appendingTo: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes the base64url encoding of a message handed over in pieces (`PiecewiseBytes`) as a string
    /// literal, written where it lands (no fill first, the message not joined first). Returns false,
    /// leaving the text as it was, when the pieces do not add up to the message's `count`.
    package mutating func writeBase64URLString<M: PiecewiseBytes>(pieces message: M) -> Bool {
        let start = bytes.count
        var ok = false
        withUnsafePointer(to: message) { message in
            withUnsafeMutablePointer(to: &ok) { ok in
                bytes.appendInPlace(
                    InPlaceBytes(
                        count: Base64URL.encodedLength(message.pointee.count) + 2,
                        writer: QuotedPieces(message: message, ok: ok)))
            }
        }
        if !ok { bytes.removeSubrange(start...) }
        return ok
    }

    /// The base64url encoding of a message between quotes, written where it lands; `ok` says whether
    /// the pieces added up (when not, every byte is still written, to be dropped). Two pointers, so
    /// that it fits an existential's inline buffer.
    private struct QuotedPieces<M: PiecewiseBytes>: InPlaceWriter {
        let message: UnsafePointer<M>
        let ok: UnsafeMutablePointer<Bool>

        func write(_ out: UnsafeMutablePointer<UInt8>) {
            let m = message.pointee
            let length = Base64URL.encodedLength(m.count)
            out[0] = UInt8(ascii: "\"")
            ok.pointee = Base64URL.encode(count: m.count, into: out + 1) { m.forEachPiece($0) }
            if !ok.pointee { (out + 1).initialize(repeating: 0, count: length) }
            out[length + 1] = UInt8(ascii: "\"")
        }
    }

    /// Writes a string literal with its quotes. Runs that need no escape (base64url members are one
    /// long run) are copied in bulk.
    package mutating func writeString(_ s: String) {
        var s = s
        s.withUTF8 { u in
            bytes.reserveCapacity(bytes.count + u.count + 2)
            bytes.append(UInt8(ascii: "\""))
            var runStart = 0
            var i = 0
            let n = u.count
            guard n > 0, let base = u.baseAddress else {
                bytes.append(UInt8(ascii: "\""))
                return
            }
            let p = UnsafeRawPointer(base)
            while i < n {
                // Eight bytes at a time: any byte < 0x20, == 0x22 or == 0x5c drops to the byte loop.
                i = JSONScan.plainRun(p, from: i, to: n, stopAtQuote: true)
                guard i < n else { break }
                let b = u[i]
                if b < 0x20 || b == 0x22 || b == 0x5c {
                    if i > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[runStart..<i])) }
                    appendEscape(b)
                    runStart = i + 1
                }
                i += 1
            }
            if n > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[runStart...])) }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// The escape for one byte that needs one.
    private mutating func appendEscape(_ b: UInt8) {
        switch b {
        case 0x22: bytes.append(contentsOf: [0x5c, 0x22])
        case 0x5c: bytes.append(contentsOf: [0x5c, 0x5c])
        case 0x0a: bytes.append(contentsOf: [0x5c, UInt8(ascii: "n")])
        case 0x0d: bytes.append(contentsOf: [0x5c, UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [0x5c, UInt8(ascii: "t")])
        case 0x08: bytes.append(contentsOf: [0x5c, UInt8(ascii: "b")])
        case 0x0c: bytes.append(contentsOf: [0x5c, UInt8(ascii: "f")])
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [0x5c, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 15)]])
        }
    }
}

extension JSONValue {
    /// The deterministic JSON text of the value (see `JSONWriter`).
    package var serialized: [UInt8] {
        var w = JSONWriter()
        w.write(self)
        return w.bytes
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
