internal import CryptoCore
/// Writes CBOR into one growable buffer with preferred (shortest) heads and definite lengths
/// (RFC 8949 §4.2.1). Map key order is the caller's: write keys in bytewise order of their
/// encodings for deterministic output, or encode a `CBORValue`, which sorts them.
public struct CBORWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// Creates a writer, reserving `capacity` bytes up front.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Continues writing after existing bytes.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Hands the bytes over and leaves the writer empty (no copy).
    public mutating func takeBytes() -> [UInt8] {
        let b = bytes
        bytes = []
        return b
    }

    /// The length of a head with argument `v` in the shortest form (1, 2, 3, 5 or 9 bytes).
    public static func headLength(_ v: UInt64) -> Int {
        v < 24 ? 1 : v <= 0xff ? 2 : v <= 0xffff ? 3 : v <= 0xffff_ffff ? 5 : 9
    }

    /// Writes a head in the shortest form at `p` (which has room for `headLength(v)` bytes), for
    /// callers that assemble a small encoding in a buffer of their own; returns its length.
    package static func writeHead(major: UInt8, argument v: UInt64, at p: UnsafeMutablePointer<UInt8>) -> Int {
        let n = headLength(v)
        let m = major << 5
        switch n {
        case 1: p[0] = m | UInt8(v)
        case 2: p[0] = m | 24
        case 3: p[0] = m | 25
        case 5: p[0] = m | 26
        default: p[0] = m | 27
        }
        var k = n - 1
        var x = v
        while k >= 1 {
            p[k] = UInt8(truncatingIfNeeded: x)
            x >>= 8
            k -= 1
        }
        return n
    }

    /// Writes a definite text string (head and UTF-8 bytes) at `p`; returns its length.
    package static func writeText(_ utf8: UnsafeBufferPointer<UInt8>, at p: UnsafeMutablePointer<UInt8>) -> Int {
        let h = writeHead(major: 3, argument: UInt64(utf8.count), at: p)
        if let base = utf8.baseAddress { (p + h).update(from: base, count: utf8.count) }
        return h + utf8.count
    }

    /// Writes a head: major type and argument in the shortest form.
    @inline(__always)
    public mutating func writeHead(major: UInt8, argument v: UInt64) {
        let m = major << 5
        if v < 24 {
            bytes.append(m | UInt8(v))
        } else if v <= 0xff {
            bytes.append(m | 24)
            bytes.append(UInt8(v))
        } else if v <= 0xffff {
            bytes.append(m | 25)
            bytes.append(UInt8(v >> 8))
            bytes.append(UInt8(v & 0xff))
        } else if v <= 0xffff_ffff {
            bytes.append(m | 26)
            for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((v >> UInt64(s)) & 0xff)) }
        } else {
            bytes.append(m | 27)
            for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((v >> UInt64(s)) & 0xff)) }
        }
    }

    /// Writes an unsigned integer (major type 0).
    public mutating func writeUnsigned(_ v: UInt64) { writeHead(major: 0, argument: v) }

    /// Writes a negative integer by its argument n (value −1 − n), covering down to −2^64.
    public mutating func writeNegative(argument n: UInt64) { writeHead(major: 1, argument: n) }

    /// Writes a signed integer.
    public mutating func writeInt(_ v: Int64) {
        if v >= 0 { writeHead(major: 0, argument: UInt64(v)) } else { writeHead(major: 1, argument: UInt64(-1 - v)) }
    }

    /// Writes a definite byte string.
    public mutating func writeBytes<C: Collection<UInt8>>(_ b: C) {
        writeHead(major: 2, argument: UInt64(b.count))
        bytes.append(contentsOf: b)
    }

    // Concrete overloads for the contiguous types callers in other modules pass: a generic call
    // across a module boundary runs unspecialized (witness-table calls and metadata lookups per call).

    /// Writes a definite byte string.
    public mutating func writeBytes(_ b: [UInt8]) { writeBytes(b[...]) }

    /// Writes a definite byte string.
    public mutating func writeBytes(_ b: ArraySlice<UInt8>) {
        writeHead(major: 2, argument: UInt64(b.count))
        bytes.append(contentsOf: b)
    }

    /// Writes a definite text string. (A literal argument goes to the `StaticString` overload.)
    @_disfavoredOverload
    public mutating func writeText(_ s: String) {
        withUTF8Bytes(s) { u in
            writeHead(major: 3, argument: UInt64(u.count))
            bytes.append(contentsOf: u)
        }
    }

    /// Writes a definite text string from its UTF-8 bytes, as they are (a string someone else sent,
    /// kept byte for byte).
    package mutating func writeText(utf8: UnsafeRawBufferPointer) {
        writeHead(major: 3, argument: UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Writes a definite text string given as a literal (a map key or a fixed value): its bytes are
    /// copied from the literal, with no `String` made or inspected.
    @usableFromInline package mutating func writeText(_ s: StaticString) {
        let n = s.utf8CodeUnitCount
        writeHead(major: 3, argument: UInt64(n))
        bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: n))
    }

    /// Writes a definite array header; `count` elements must follow.
    public mutating func writeArrayHeader(count: Int) { writeHead(major: 4, argument: UInt64(count)) }

    /// Writes a definite map header; `count` key/value pairs must follow.
    public mutating func writeMapHeader(count: Int) { writeHead(major: 5, argument: UInt64(count)) }

    /// Writes a tag head; exactly one item must follow.
    public mutating func writeTag(_ tag: UInt64) { writeHead(major: 6, argument: tag) }

    /// Writes `true` or `false`.
    public mutating func writeBool(_ b: Bool) { bytes.append(b ? 0xf5 : 0xf4) }

    /// Writes `null`.
    public mutating func writeNull() { bytes.append(0xf6) }

    /// Writes `undefined`.
    public mutating func writeUndefined() { bytes.append(0xf7) }

    /// Writes a simple value (0–19 or 32–255; 20–23 are false/true/null/undefined).
    public mutating func writeSimple(_ v: UInt8) {
        if v < 24 {
            bytes.append(0xe0 | v)
        } else {
            bytes.append(0xf8)
            bytes.append(v)
        }
    }

    /// Writes a float in the shortest of half/single/double that keeps the value (NaN as `f97e00`).
    public mutating func writeFloat(_ d: Double) {
        if let h = CBORFloat.toHalf(d) {
            bytes.append(0xf9)
            bytes.append(UInt8(h >> 8))
            bytes.append(UInt8(h & 0xff))
        } else if Double(Float(d)) == d {
            let b = Float(d).bitPattern
            bytes.append(0xfa)
            for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((b >> UInt32(s)) & 0xff)) }
        } else {
            let b = d.bitPattern
            bytes.append(0xfb)
            for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((b >> UInt64(s)) & 0xff)) }
        }
    }

    /// Splices already-encoded CBOR verbatim (issuer items, protected headers, tag-24 payloads).
    public mutating func writeRaw<C: Collection<UInt8>>(_ encoded: C) { bytes.append(contentsOf: encoded) }

    /// Splices already-encoded CBOR verbatim.
    public mutating func writeRaw(_ encoded: [UInt8]) { writeRaw(encoded[...]) }

    /// Splices already-encoded CBOR verbatim.
    public mutating func writeRaw(_ encoded: ArraySlice<UInt8>) { bytes.append(contentsOf: encoded) }

    /// Appends already-encoded CBOR verbatim from memory the caller holds (no slice of its array made).
    package mutating func writeRaw(_ encoded: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: encoded) }

    /// Writes `#6.24(bstr .cbor X)` around already-encoded bytes.
    public mutating func writeEmbedded<C: Collection<UInt8>>(_ encoded: C) {
        writeTag(24)
        writeBytes(encoded)
    }

    /// The deterministic map-key order (RFC 8949 §4.2.1, bytewise lexicographic order of the encoded
    /// keys) for two text keys, without encoding them: a shorter UTF-8 string's head sorts first (heads
    /// grow with the length), equal lengths compare bytewise. The order `write(_:)` gives a map's keys.
    public static func textKeyPrecedes(_ a: String, _ b: String) -> Bool {
        let la = a.utf8.count
        let lb = b.utf8.count
        if la != lb { return la < lb }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// Writes a value; maps are written with keys sorted bytewise by their encodings.
    public mutating func write(_ value: CBORValue) {
        switch value {
        case .unsigned(let v): writeUnsigned(v)
        case .negative(let n): writeNegative(argument: n)
        case .bytes(let b): writeBytes(b)
        case .text(let s): writeText(s)
        case .array(let a):
            writeArrayHeader(count: a.count)
            for e in a { write(e) }
        case .map(let entries):
            writeMapHeader(count: entries.count)
            if entries.count <= 1 {
                for e in entries {
                    write(e.key)
                    write(e.value)
                }
            } else {
                var encodedKeys: [(key: [UInt8], value: CBORValue)] = entries.map { e in
                    var w = CBORWriter(capacity: 16)
                    w.write(e.key)
                    return (w.bytes, e.value)
                }
                encodedKeys.sort { $0.key.lexicographicallyPrecedes($1.key) }
                for e in encodedKeys {
                    writeRaw(e.key)
                    write(e.value)
                }
            }
        case .tagged(let t, let inner):
            writeTag(t)
            write(inner)
        case .simple(let v): writeSimple(v)
        case .bool(let b): writeBool(b)
        case .null: writeNull()
        case .undefined: writeUndefined()
        case .float(let d): writeFloat(d)
        case .encoded(let raw): writeRaw(raw)
        }
    }
}
