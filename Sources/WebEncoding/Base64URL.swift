internal import CryptoCore
internal import CWebEncodingSIMD

/// base64url (RFC 4648 §5) without padding. Decoding accepts only the URL-safe alphabet and refuses
/// any `=` padding, as the platform and JOSE do. Both directions
/// work on raw buffers, three bytes ↔ four characters at a time.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Two output characters per 12 input bits, little-endian packed (first character in the low byte).
    private static let pairs: [UInt16] = {
        var t = [UInt16](repeating: 0, count: 4096)
        for i in 0..<4096 { t[i] = UInt16(alphabet[i >> 6]) | UInt16(alphabet[i & 63]) << 8 }
        return t
    }()
    /// Each character's 6-bit value, 0xff for characters outside the alphabet.
    static let table: [UInt8] = {
        var t = [UInt8](repeating: 0xff, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    /// Encodes without padding.
    public static func encode<C: Collection<UInt8>>(_ bytes: C) -> String {
        if let s = bytes.withContiguousStorageIfAvailable({ encode(UnsafeRawBufferPointer($0)) }) { return s }
        let copy = Array(bytes)
        return copy.withUnsafeBytes { encode($0) }
    }

    package static func encode(_ input: UnsafeRawBufferPointer) -> String {
        let outLen = encodedLength(input.count)
        if outLen == 0 { return "" }
        return String(unsafeUninitializedCapacity: outLen) { out in
            encode(input, into: out.baseAddress!)
            return outLen
        }
    }

    /// Length of the unpadded encoding of `n` bytes.
    package static func encodedLength(_ n: Int) -> Int { (n / 3) * 4 + [0, 2, 3][n % 3] }

    /// Appends the encoding of `input` to `output`, written where it lands (no intermediate string,
    /// no fill first).
    package static func encode(_ input: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) {
        output.appendInPlace(InPlaceBytes(count: encodedLength(input.count), writer: EncodeInput(input: input)))
    }

    /// Writes the encoding of `input` (the whole of it) where it lands.
    private struct EncodeInput: InPlaceWriter {
        let input: UnsafeRawBufferPointer
        func write(_ out: UnsafeMutablePointer<UInt8>) { Base64URL.encode(input, into: out) }
    }

    /// Writes exactly `encodedLength(input.count)` bytes at `out`: whole blocks with the widest vector
    /// instructions the CPU has (`mdoc_base64url_encode_blocks_at`), the rest below.
    package static func encode(_ input: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) {
        encode(input, into: out, vectorLevel: vectorLevel)
    }

    /// The vector code the encoder runs on this CPU: 2 AVX-512 VBMI (then AVX2), 1 AVX2, 0 none.
    package static var vectorLevel: Int { Int(mdoc_base64url_vector_level()) }

    /// `encode(_:into:)` with vector code up to `level` (0 portable only, 1 AVX2, 2 AVX-512 VBMI; at
    /// most `vectorLevel`): the tests and the benchmark run every level this CPU has.
    package static func encode(
        _ input: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>, vectorLevel level: Int
    ) {
        guard input.count > 0 else { return }
        let done = mdoc_base64url_encode_blocks_at(
            input.baseAddress!.assumingMemoryBound(to: UInt8.self), input.count, out, Int32(level))
        encodeScalar(UnsafeRawBufferPointer(rebasing: input[done...]), into: out + done / 3 * 4)
    }

    /// Writes the encoding of a message of `count` bytes that `pieces` hands over in order (one buffer
    /// per call of its argument) at `out`, which holds `encodedLength(count)` bytes: a message
    /// assembled from parts is encoded without first being copied into one buffer. A group of three
    /// bytes split between pieces is joined in a three-byte carry. Returns false, having written no
    /// more than `encodedLength(count)` bytes, when the pieces do not add up to `count`.
    package static func encode(
        count: Int, into out: UnsafeMutablePointer<UInt8>, pieces: ((UnsafeRawBufferPointer) -> Void) -> Void
    ) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: 3, alignment: 1) { carry in
            var carried = 0
            var total = 0
            var o = 0
            var fits = true
            pieces { piece in
                guard fits, piece.count > 0 else { return }
                guard piece.count <= count - total else {
                    fits = false
                    return
                }
                total += piece.count
                var rest = piece
                if carried > 0 {
                    let take = min(3 - carried, rest.count)
                    carry.baseAddress!.advanced(by: carried).copyMemory(from: rest.baseAddress!, byteCount: take)
                    carried += take
                    rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                    guard carried == 3 else { return }
                    encodeScalar(UnsafeRawBufferPointer(carry), into: out + o)
                    o += 4
                    carried = 0
                }
                let whole = rest.count / 3 * 3
                if whole > 0 {
                    encode(UnsafeRawBufferPointer(rebasing: rest[..<whole]), into: out + o)
                    o += whole / 3 * 4
                }
                carried = rest.count - whole
                if carried > 0 {
                    carry.baseAddress!.copyMemory(from: rest.baseAddress! + whole, byteCount: carried)
                }
            }
            guard fits, total == count else { return false }
            encodeScalar(UnsafeRawBufferPointer(rebasing: carry[..<carried]), into: out + o)
            return true
        }
    }

    /// The portable encoder (six bytes to eight characters per step); writes `encodedLength(input.count)` bytes.
    package static func encodeScalar(_ input: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) {
        let n = input.count
        guard n > 0 else { return }
        alphabet.withUnsafeBufferPointer { ab in
            pairs.withUnsafeBufferPointer { pb in
                let a = ab.baseAddress!
                let pt = pb.baseAddress!
                let p = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let raw = UnsafeMutableRawPointer(out)
                var i = 0
                var o = 0
                // Six input bytes → eight characters: one unaligned 8-byte load (so 8 bytes must be
                // readable), four pair lookups, one 8-byte store.
                @inline(__always) func six(_ i: Int, _ o: Int) {
                    let w = UInt64(bigEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
                    let a0 = UInt64(pt[Int(truncatingIfNeeded: (w >> 52) & 0xfff)])
                    let a1 = UInt64(pt[Int(truncatingIfNeeded: (w >> 40) & 0xfff)])
                    let a2 = UInt64(pt[Int(truncatingIfNeeded: (w >> 28) & 0xfff)])
                    let a3 = UInt64(pt[Int(truncatingIfNeeded: (w >> 16) & 0xfff)])
                    raw.storeBytes(
                        of: (a0 | a1 << 16 | a2 << 32 | a3 << 48).littleEndian, toByteOffset: o, as: UInt64.self)
                }
                // Two such steps per iteration (the second load ends at i + 14); limits computed once so
                // the loops carry no overflow checks.
                let limit12 = n &- 14
                let limit6 = n &- 8
                while i <= limit12 {
                    six(i, o)
                    six(i &+ 6, o &+ 8)
                    i &+= 12
                    o &+= 16
                }
                while i <= limit6 {
                    six(i, o)
                    i &+= 6
                    o &+= 8
                }
                while i + 3 <= n {
                    let v = Int(p[i]) << 16 | Int(p[i + 1]) << 8 | Int(p[i + 2])
                    raw.storeBytes(of: pt[v >> 12].littleEndian, toByteOffset: o, as: UInt16.self)
                    raw.storeBytes(of: pt[v & 0xfff].littleEndian, toByteOffset: o + 2, as: UInt16.self)
                    i &+= 3
                    o &+= 4
                }
                if n - i == 1 {
                    let v = UInt32(p[i]) << 16
                    out[o] = a[Int(v >> 18)]
                    out[o + 1] = a[Int((v >> 12) & 63)]
                } else if n - i == 2 {
                    let v = UInt32(p[i]) << 16 | UInt32(p[i + 1]) << 8
                    out[o] = a[Int(v >> 18)]
                    out[o + 1] = a[Int((v >> 12) & 63)]
                    out[o + 2] = a[Int((v >> 6) & 63)]
                }
            }
        }
    }

    /// Decodes strictly, as the platform does (Chrome refuses a padded `deviceRequest`; JOSE, RFC
    /// 7515 §2, forbids padding): nil for any `=`, a character outside the URL-safe alphabet, an
    /// impossible length, or non-zero trailing bits.
    public static func decode(_ s: String) -> [UInt8]? {
        withUTF8Bytes(s) { decode(UnsafeRawBufferPointer($0)) }
    }

    package static func decode(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        // Only a final "=" needs refusing here (the shared decoder would take it as padding); one
        // anywhere else is outside the alphabet, which the table refuses in the same pass.
        if let last = text.last, last == UInt8(ascii: "=") { return nil }
        return decode(text, table: table, vectorURLBlocks: true)
    }

    /// The decoder for either alphabet (`table` maps a character to its 6-bit value, 0xff if none).
    /// With `vectorURLBlocks` (the URL-safe table only), whole 32-character blocks are decoded with
    /// vector instructions where the CPU has them (`mdoc_base64url_decode_blocks`, which stops at the
    /// first block holding any other character); the loop below decodes and checks the rest.
    static func decode(_ text: UnsafeRawBufferPointer, table: [UInt8], vectorURLBlocks: Bool = false) -> [UInt8]? {
        var n = text.count
        var pad = 0
        while n > 0 && text[n - 1] == UInt8(ascii: "=") {
            n -= 1
            pad += 1
        }
        if pad > 2 { return nil }
        if pad > 0 && (n + pad) % 4 != 0 { return nil }
        guard let outLen = decodedLength(n) else { return nil }
        var ok = true  // stays true for empty text (`make` calls no fill for an empty array)
        // Public bytes (a request's text decoded): no cleansing of the stack copy.
        let out = ByteArrays.make(count: outLen, cleansing: false) { buf in
            ok = decode(text, count: n, table: table, vectorURLBlocks: vectorURLBlocks, into: buf)
            if !ok { buf.initialize(repeating: 0) }  // refused: the array is dropped
        }
        return ok ? out : nil
    }

    /// Decodes strictly (as `decode(_:)`) into `out`, which must be exactly the decoded length: false,
    /// with `out` zeroed, for text that does not decode or decodes to another length.
    package static func decode(_ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Bool {
        let n = text.count
        guard text.last != UInt8(ascii: "="), decodedLength(n) == out.count else {
            out.initializeMemory(as: UInt8.self, repeating: 0)
            return false
        }
        let buf = out.bindMemory(to: UInt8.self)
        guard decode(text, count: n, table: table, vectorURLBlocks: true, into: buf) else {
            buf.initialize(repeating: 0)
            return false
        }
        return true
    }

    /// The decoded length of `n` unpadded characters; nil for a length no encoding has (`n % 4 == 1`).
    private static func decodedLength(_ n: Int) -> Int? {
        n % 4 == 1 ? nil : (n / 4) * 3 + [0, 0, 1, 2][n % 4]
    }

    /// Decodes the first `n` characters of `text` (padding already taken off) into `buf`, which holds
    /// exactly their decoded length: false for a character outside `table` or non-zero trailing bits.
    private static func decode(
        _ text: UnsafeRawBufferPointer, count n: Int, table: [UInt8], vectorURLBlocks: Bool,
        into buf: UnsafeMutableBufferPointer<UInt8>
    ) -> Bool {
        table.withUnsafeBufferPointer { t -> Bool in
            var bad = false
            var i = 0
            var o = 0
            if vectorURLBlocks, n >= 32, let input = text.baseAddress, let output = buf.baseAddress {
                i = mdoc_base64url_decode_blocks(input.assumingMemoryBound(to: UInt8.self), n, output)
                o = i / 4 * 3
            }
            while i + 4 <= n {
                let a = t[Int(text[i])]
                let b = t[Int(text[i + 1])]
                let c = t[Int(text[i + 2])]
                let d = t[Int(text[i + 3])]
                if (a | b | c | d) & 0x80 != 0 {
                    bad = true
                    break
                }
                let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                buf[o] = UInt8(truncatingIfNeeded: v >> 16)
                buf[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                buf[o + 2] = UInt8(truncatingIfNeeded: v)
                i += 4
                o += 3
            }
            if !bad && n - i >= 2 {
                let a = t[Int(text[i])]
                let b = t[Int(text[i + 1])]
                let c: UInt8 = n - i == 3 ? t[Int(text[i + 2])] : 0
                if (a | b | c) & 0x80 != 0 {
                    bad = true
                } else {
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    buf[o] = UInt8(truncatingIfNeeded: v >> 16)
                    o += 1
                    if n - i == 3 {
                        buf[o] = UInt8(truncatingIfNeeded: v >> 8)
                        o += 1
                        if v & 0xff != 0 { bad = true }  // non-zero trailing bits
                    } else if v & 0xffff != 0 {
                        bad = true
                    }
                }
            }
            return !bad
        }
    }
}

/// base64 (RFC 4648 §4, the standard alphabet) with its padding required, as X.509 chains in JOSE
/// headers (`x5c`) use it. Decoding only: whitespace, the URL alphabet, missing or wrong padding and
/// non-zero trailing bits are refused.
package enum Base64 {
    private static let table: [UInt8] = {
        var t = [UInt8](repeating: 0xff, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            t[Int(c)] = UInt8(i)
        }
        return t
    }()

    /// Decodes padded standard base64; nil for anything else.
    package static func decode(_ s: String) -> [UInt8]? {
        withUTF8Bytes(s) { b in
            b.count % 4 == 0 ? Base64URL.decode(UnsafeRawBufferPointer(b), table: table) : nil
        }
    }

    /// Encodes with the standard alphabet and padding.
    package static func encode(_ bytes: [UInt8]) -> String {
        var s = Base64URL.encode(bytes)
        s = String(s.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        return s + String(repeating: "=", count: (4 - s.utf8.count % 4) % 4)
    }
}

/// What writes an in-place run: `write` initializes exactly the run's bytes at `out`. A struct of at
/// most three words, not a closure: it is held in the sequence without a closure context or an
/// existential box allocated on the heap.
protocol InPlaceWriter {
    func write(_ out: UnsafeMutablePointer<UInt8>)
}

/// A run of `count` bytes written where they land. As the sequence an array appends, its
/// `_copyContents(initializing:)` (the standard library's customization point for bulk
/// initialization, which `Array.append(contentsOf:)` calls with the array's uninitialized capacity
/// after reserving `underestimatedCount` more) hands the writer that capacity: nothing is filled
/// first and written over.
struct InPlaceBytes: Sequence {
    let count: Int
    let writer: any InPlaceWriter

    var underestimatedCount: Int { count }

    func makeIterator() -> EmptyCollection<UInt8>.Iterator { EmptyCollection<UInt8>().makeIterator() }

    func _copyContents(
        initializing buffer: UnsafeMutableBufferPointer<UInt8>
    ) -> (EmptyCollection<UInt8>.Iterator, Int) {
        precondition(buffer.count >= count, "in-place append without the reserved capacity")
        if count > 0 { writer.write(buffer.baseAddress!) }
        return (makeIterator(), count)
    }
}

extension Array where Element == UInt8 {
    /// Appends a run written in place, in the array's own storage (no fill first).
    mutating func appendInPlace(_ run: InPlaceBytes) {
        precondition(run.count >= 0)
        append(contentsOf: run)
    }
}
