internal import CryptoCore

/// A small strict JSON parser (RFC 8259) for request framings, request objects and JOSE headers:
/// bounded size, depth, member count and string length; duplicate object keys rejected; invalid
/// UTF-8, lone surrogates and control characters in strings rejected; no recursion beyond the depth
/// limit. Object members keep their received order.
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

    /// Why the input is not acceptable JSON: static text naming the rule, never input content.
    package struct ParseError: Error, Sendable {
        /// The rule broken, e.g. "duplicate JSON object key".
        package let what: String
    }

    /// Parses a complete JSON text (surrounding whitespace allowed, nothing after the value).
    package static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(ParseError) -> JSONValue {
        let r: Result<JSONValue, ParseError> = bytes.withUnsafeBufferPointer { b in
            Result { () throws(ParseError) in try parse(b, limits: limits) }
        }
        return try r.get()
    }

    /// Parses the bytes in place (for a request handed over as `Data`: no copy into an array).
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, limits: Limits = Limits()) throws(ParseError)
        -> JSONValue
    {
        guard bytes.count <= limits.maxBytes else { throw ParseError(what: "JSON larger than the limit") }
        var p = Parser(bytes: bytes, limits: limits)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == bytes.count else { throw ParseError(what: "trailing bytes after the JSON value") }
        return v
    }

    private struct Parser {
        /// The input, borrowed for the duration of `parse`.
        let bytes: UnsafeBufferPointer<UInt8>
        let limits: Limits
        var i = 0

        mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0a || bytes[i] == 0x0d {
                i += 1
            }
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard depth < limits.maxDepth else { throw ParseError(what: "JSON nested too deeply") }
            guard i < bytes.count else { throw ParseError(what: "JSON ends early") }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                var members = [(String, JSONValue)]()
                members.reserveCapacity(4)
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                        throw ParseError(what: "JSON object key is not a string")
                    }
                    let k = try key()
                    guard !members.contains(where: { $0.0 == k }) else {
                        throw ParseError(what: "duplicate JSON object key")
                    }
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
                        throw ParseError(what: "JSON object lacks ':'")
                    }
                    i += 1
                    skipSpace()
                    members.append((k, try value(depth: depth + 1)))
                    guard members.count <= limits.maxMembers else { throw ParseError(what: "too many JSON members") }
                    skipSpace()
                    guard i < bytes.count else { throw ParseError(what: "JSON ends early") }
                    if bytes[i] == UInt8(ascii: ",") {
                        i += 1
                        continue
                    }
                    if bytes[i] == UInt8(ascii: "}") {
                        i += 1
                        return .object(members)
                    }
                    throw ParseError(what: "JSON object lacks ',' or '}'")
                }
            case UInt8(ascii: "["):
                i += 1
                var items = [JSONValue]()
                items.reserveCapacity(2)
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(items)
                }
                while true {
                    skipSpace()
                    items.append(try value(depth: depth + 1))
                    guard items.count <= limits.maxMembers else {
                        throw ParseError(what: "too many JSON array elements")
                    }
                    skipSpace()
                    guard i < bytes.count else { throw ParseError(what: "JSON ends early") }
                    if bytes[i] == UInt8(ascii: ",") {
                        i += 1
                        continue
                    }
                    if bytes[i] == UInt8(ascii: "]") {
                        i += 1
                        return .array(items)
                    }
                    throw ParseError(what: "JSON array lacks ',' or ']'")
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            default:
                return .number(try number())
            }
        }

        mutating func literal(_ s: StaticString) throws(ParseError) {
            let n = s.utf8CodeUnitCount
            guard i + n <= bytes.count else { throw ParseError(what: "invalid JSON literal") }
            let lit = UnsafeBufferPointer(start: s.utf8Start, count: n)
            for k in 0..<n where bytes[i + k] != lit[k] { throw ParseError(what: "invalid JSON literal") }
            i += n
        }

        mutating func number() throws(ParseError) -> JSONNumber {
            let start = i
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 else {
                throw ParseError(what: "invalid JSON value")
            }
            if bytes[i] == 0x30 { i += 1 } else { while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 } }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                let d = i
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                guard i > d else { throw ParseError(what: "invalid JSON number") }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                let d = i
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                guard i > d else { throw ParseError(what: "invalid JSON number") }
            }
            guard i - start <= 64, let n = JSONNumber(String(decoding: bytes[start..<i], as: UTF8.self)) else {
                throw ParseError(what: "invalid JSON number")
            }
            return n
        }

        /// Member names of the request framings, as immortal literals: a key equal to one of them
        /// (and free of escapes) costs no allocation.
        private static let knownKeys: [StaticString] = [
            "deviceRequest", "encryptionInfo", "protocol", "data", "requests", "digital", "response", "Response",
        ]

        /// An object key: a known framing member name without allocating, else a decoded string.
        mutating func key() throws(ParseError) -> String {
            let start = i + 1
            let hit = Self.knownKeys.first { k in
                let n = k.utf8CodeUnitCount
                return start + n < bytes.count && bytes[start + n] == UInt8(ascii: "\"")
                    && memcmp(bytes.baseAddress! + start, k.utf8Start, n) == 0
            }
            if let hit {
                i = start + hit.utf8CodeUnitCount + 1
                return hit.description
            }
            return try string()
        }

        /// Where the escape-free run of string content starting at `start` ends: the closing quote's
        /// offset (found with memchr), or the first backslash or control character before it, or the
        /// end of the input.
        private func plainEnd(from start: Int) -> Int {
            let b = bytes
            guard start < b.count, let q = memchr(b.baseAddress! + start, 0x22, b.count - start) else { return b.count }
            let end = b.baseAddress!.distance(to: q.assumingMemoryBound(to: UInt8.self))
            // Eight bytes at a time: any byte < 0x20 or == 0x5c sends us to the slow path.
            var k = start
            let p = UnsafeRawPointer(b.baseAddress!)
            while k + 8 <= end {
                let w = p.loadUnaligned(fromByteOffset: k, as: UInt64.self)
                let ones: UInt64 = 0x0101_0101_0101_0101
                let highs: UInt64 = 0x8080_8080_8080_8080
                let below20 = (w &- ones &* 0x20) & ~w & highs
                let x = w ^ (ones &* 0x5c)
                let isBackslash = (x &- ones) & ~x & highs
                if below20 | isBackslash != 0 { break }
                k += 8
            }
            while k < end {
                if b[k] == 0x5c || b[k] < 0x20 { return k }
                k += 1
            }
            return end
        }

        mutating func string() throws(ParseError) -> String {
            i += 1  // opening quote
            // Fast path: no escapes (base64url members never have any) — find the closing quote with
            // memchr, check the span has no backslash or control character, validate and copy once.
            let j = plainEnd(from: i)
            if j < bytes.count, bytes[j] == UInt8(ascii: "\"") {
                guard j - i <= limits.maxStringBytes else {
                    throw ParseError(what: "JSON string longer than the limit")
                }
                let span = UnsafeBufferPointer(rebasing: bytes[i..<j])
                guard span.isEmpty || UTF8Check.isValid(span.baseAddress!, count: span.count) else {
                    throw ParseError(what: "invalid UTF-8 in JSON string")
                }
                let s = String(decoding: span, as: UTF8.self)
                i = j + 1
                return s
            }
            var out = [UInt8]()
            while true {
                guard i < bytes.count else { throw ParseError(what: "unterminated JSON string") }
                let b = bytes[i]
                if b == UInt8(ascii: "\"") {
                    i += 1
                    break
                }
                if b < 0x20 { throw ParseError(what: "control character in JSON string") }
                if b == UInt8(ascii: "\\") {
                    i += 1
                    guard i < bytes.count else { throw ParseError(what: "unterminated JSON string") }
                    switch bytes[i] {
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5c)
                    case UInt8(ascii: "/"): out.append(0x2f)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0c)
                    case UInt8(ascii: "n"): out.append(0x0a)
                    case UInt8(ascii: "r"): out.append(0x0d)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if scalar >= 0xD800 && scalar < 0xDC00 {
                            guard i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "\\"),
                                bytes[i + 2] == UInt8(ascii: "u")
                            else { throw ParseError(what: "lone surrogate in JSON string") }
                            i += 2
                            let low = try hex4()
                            guard low >= 0xDC00 && low < 0xE000 else {
                                throw ParseError(what: "lone surrogate in JSON string")
                            }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if scalar >= 0xDC00 && scalar < 0xE000 {
                            throw ParseError(what: "lone surrogate in JSON string")
                        }
                        out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                    default: throw ParseError(what: "invalid JSON escape")
                    }
                    i += 1
                } else {
                    out.append(b)
                    i += 1
                }
                guard out.count <= limits.maxStringBytes else {
                    throw ParseError(what: "JSON string longer than the limit")
                }
            }
            let valid = out.withUnsafeBufferPointer { buf in
                buf.isEmpty || UTF8Check.isValid(buf.baseAddress!, count: buf.count)
            }
            guard valid else { throw ParseError(what: "invalid UTF-8 in JSON string") }
            return String(decoding: out, as: UTF8.self)
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard i + 4 < bytes.count else { throw ParseError(what: "invalid JSON \\u escape") }
            var v: UInt32 = 0
            for k in 1...4 {
                let c = bytes[i + k]
                let d: UInt32
                switch c {
                case 0x30...0x39: d = UInt32(c - 0x30)
                case 0x41...0x46: d = UInt32(c - 0x41 + 10)
                case 0x61...0x66: d = UInt32(c - 0x61 + 10)
                default: throw ParseError(what: "invalid JSON \\u escape")
                }
                v = v << 4 | d
            }
            i += 4
            return v
        }
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
package struct JSONWriter: Sendable {
    /// The text written so far (UTF-8).
    package private(set) var bytes: [UInt8] = []

    /// Creates an empty writer with room for `capacity` bytes.
    package init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

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
        bytes.append(UInt8(ascii: "\""))
        data.withUnsafeBytes { Base64URL.encode($0, appendingTo: &bytes) }
        bytes.append(UInt8(ascii: "\""))
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
            let p = UnsafeRawPointer(u.baseAddress!)
            while i < n {
                // Eight bytes at a time: any byte < 0x20, == 0x22 or == 0x5c drops to the byte loop.
                while i + 8 <= n {
                    let w = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    let ones: UInt64 = 0x0101_0101_0101_0101
                    let highs: UInt64 = 0x8080_8080_8080_8080
                    let below20 = (w &- ones &* 0x20) & ~w & highs
                    let q = w ^ (ones &* 0x22)
                    let isQuote = (q &- ones) & ~q & highs
                    let x = w ^ (ones &* 0x5c)
                    let isBackslash = (x &- ones) & ~x & highs
                    if below20 | isQuote | isBackslash != 0 { break }
                    i += 8
                }
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
