// The only file that touches libcbor. `cbor_stream_decode` reports one head per call; this file turns
// that event into a `Token`. One-byte heads (among them those libcbor 0.8 wrongly rejects: single-byte
// tags 0xc6–0xd4 and simple values 0xe0–0xf3, PJK/libcbor#307) and the two-byte simple values 0xf8 xx
// are handled in Swift before libcbor is called; libcbor reads every head with a following argument.
// `cbor_load` is never used on input; it is exposed only as the benchmark baseline.
internal import CLibCBOR

/// The kind of one head reported by the tokenizer.
enum TokenKind: UInt8 {
    case unsigned, negative, bytes, text, bytesStart, textStart, array, map, arrayStart, mapStart,
        tag, simple, half, single, double, breakCode, error
}

/// One decoded head. For definite strings, `payloadOffset` is where the content starts and `length`
/// (total bytes consumed, head + content) covers it.
struct Token {
    var kind: TokenKind = .error
    /// Integer value, negative-integer argument, string length, container count (pairs for maps),
    /// tag number, or simple value.
    var value: UInt64 = 0
    /// Total bytes consumed by this event (head and, for definite strings, payload).
    var length: Int = 0
    /// Head length in bytes.
    var headLength: Int = 0
    /// Set when the input ended inside this head or string.
    var truncated = false
}

/// Callback sink; the pointer to it is libcbor's `context`. libcbor's `size_t` lengths import as
/// `Int`: they are reinterpreted bit for bit, since a declared count of 2^63 or more would trap a
/// checked conversion.
private struct Sink {
    var kind: TokenKind = .error
    var value: UInt64 = 0
    var payload: UnsafeRawPointer? = nil
}

@inline(__always)
private func sink(_ ctx: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<Sink> {
    ctx.unsafelyUnwrapped.assumingMemoryBound(to: Sink.self)
}

/// Records a head with a value (an integer, a count, a tag number, a simple value).
@inline(__always)
private func record(_ ctx: UnsafeMutableRawPointer?, _ kind: TokenKind, _ value: UInt64) {
    let s = sink(ctx)
    s.pointee.kind = kind
    s.pointee.value = value
}

/// Records a definite string: its length (a `size_t` taken bit for bit) and where its content starts.
@inline(__always)
private func record(_ ctx: UnsafeMutableRawPointer?, _ kind: TokenKind, _ payload: UnsafePointer<UInt8>?, _ n: Int) {
    record(ctx, kind, UInt64(UInt(bitPattern: n)))
    sink(ctx).pointee.payload = UnsafeRawPointer(payload)
}

private let callbacksValue: cbor_callbacks = {
    var c = cbor_empty_callbacks
    c.uint8 = { ctx, v in record(ctx, .unsigned, UInt64(v)) }
    c.uint16 = { ctx, v in record(ctx, .unsigned, UInt64(v)) }
    c.uint32 = { ctx, v in record(ctx, .unsigned, UInt64(v)) }
    c.uint64 = { ctx, v in record(ctx, .unsigned, v) }
    c.negint8 = { ctx, v in record(ctx, .negative, UInt64(v)) }
    c.negint16 = { ctx, v in record(ctx, .negative, UInt64(v)) }
    c.negint32 = { ctx, v in record(ctx, .negative, UInt64(v)) }
    c.negint64 = { ctx, v in record(ctx, .negative, v) }
    c.byte_string = { ctx, p, n in record(ctx, .bytes, p, n) }
    c.byte_string_start = { ctx in sink(ctx).pointee.kind = .bytesStart }
    c.string = { ctx, p, n in record(ctx, .text, p, n) }
    c.string_start = { ctx in sink(ctx).pointee.kind = .textStart }
    c.array_start = { ctx, n in record(ctx, .array, UInt64(UInt(bitPattern: n))) }
    c.indef_array_start = { ctx in sink(ctx).pointee.kind = .arrayStart }
    c.map_start = { ctx, n in record(ctx, .map, UInt64(UInt(bitPattern: n))) }
    c.indef_map_start = { ctx in sink(ctx).pointee.kind = .mapStart }
    c.tag = { ctx, v in record(ctx, .tag, v) }
    c.float2 = { ctx, _ in sink(ctx).pointee.kind = .half }
    c.float4 = { ctx, _ in sink(ctx).pointee.kind = .single }
    c.float8 = { ctx, _ in sink(ctx).pointee.kind = .double }
    c.undefined = { ctx in record(ctx, .simple, 23) }
    c.null = { ctx in record(ctx, .simple, 22) }
    c.boolean = { ctx, b in record(ctx, .simple, b ? 21 : 20) }
    c.indef_break = { ctx in sink(ctx).pointee.kind = .breakCode }
    return c
}()

/// The callback table at a fixed address, so each call passes a pointer instead of copying the struct.
private nonisolated(unsafe) let callbackTable: UnsafeMutablePointer<cbor_callbacks> = {
    let p = UnsafeMutablePointer<cbor_callbacks>.allocate(capacity: 1)
    p.initialize(to: callbacksValue)
    return p
}()

enum Tokenizer {
    /// The callback table, as a value a validator fetches once and passes to every `next` call
    /// (reading the global costs a lazy-initialisation check each time).
    struct Callbacks {
        fileprivate let table: UnsafeMutablePointer<cbor_callbacks>
    }

    /// The callback table.
    static var callbacks: Callbacks { Callbacks(table: callbackTable) }

    /// Decodes the head at `offset` of `buffer` (which ends at `end`).
    @inline(__always)
    static func next(_ base: UnsafePointer<UInt8>, offset: Int, end: Int, callbacks: Callbacks) -> Token {
        var t = Token()
        let b = base[offset]
        // One-byte heads (argument below 24, RFC 8949 §3: the argument is the head's low five bits),
        // most heads of an mdoc structure, are decoded here without a call into libcbor; this also
        // covers the ones libcbor 0.8 mishandles (single-byte tags 6–20, simple values 0–19).
        let info = b & 0x1f
        if info < 24 {
            t.value = UInt64(info)
            t.length = 1
            t.headLength = 1
            switch b >> 5 {
            case 0: t.kind = .unsigned
            case 1: t.kind = .negative
            case 2, 3:
                // A definite string: its content must be there.
                guard offset + 1 + Int(info) <= end else {
                    t.truncated = true
                    return t
                }
                t.kind = b >> 5 == 2 ? .bytes : .text
                t.length = 1 + Int(info)
            case 4: t.kind = .array
            case 5: t.kind = .map
            case 6: t.kind = .tag
            default: t.kind = .simple  // 0–19 unassigned, 20 false, 21 true, 22 null, 23 undefined
            }
            return t
        }
        if b == 0xf8 {
            guard offset + 1 < end else {
                t.truncated = true
                return t
            }
            let v = base[offset + 1]
            guard v >= 32 else {
                t.kind = .error
                t.length = 2
                return t
            }
            t.kind = .simple
            t.value = UInt64(v)
            t.length = 2
            t.headLength = 2
            return t
        }
        var s = Sink()
        let r = withUnsafeMutablePointer(to: &s) { sp in
            cbor_stream_decode(base + offset, end - offset, callbacks.table, UnsafeMutableRawPointer(sp))
        }
        switch r.status {
        case CBOR_DECODER_FINISHED:
            t.kind = s.kind
            t.value = s.value
            t.length = r.read
            if let p = s.payload, s.kind == .bytes || s.kind == .text {
                t.headLength = UnsafeRawPointer(base + offset).distance(to: p)
            } else {
                t.headLength = r.read
            }
            if s.kind == .half || s.kind == .single || s.kind == .double {
                // Read the exact bits ourselves: libcbor 0.8 widens halves and drops NaN payloads.
                var bits: UInt64 = 0
                for i in 1..<r.read { bits = bits << 8 | UInt64(base[offset + i]) }
                t.value = bits
            }
        case CBOR_DECODER_NEDATA:
            t.truncated = true
        default:
            t.kind = .error
        }
        return t
    }
}

/// libcbor's own tree decoder, exposed only so the benchmark can compare against it.
/// Never used on untrusted input inside the engine.
package enum LibCBORBaseline {
    /// Runs `cbor_load` over `bytes` and frees the result; returns false if libcbor failed.
    package static func loadAndFree(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buf in
            var result = cbor_load_result()
            guard let item = cbor_load(buf.baseAddress, buf.count, &result) else { return false }
            var ref: UnsafeMutablePointer<cbor_item_t>? = item
            cbor_decref(&ref)
            return result.error.code == CBOR_ERR_NONE
        }
    }

    /// The libcbor version the package was built against, e.g. `0.8`.
    package static var version: String { "\(mdoc_cbor_major_version).\(mdoc_cbor_minor_version)" }
}
