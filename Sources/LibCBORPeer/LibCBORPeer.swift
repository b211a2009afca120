// libcbor 0.8 (Debian 12's libcbor-dev) as an independent peer: the tests check the engine's CBOR head
// decoder (MdocCBOR/CBOR/Tokenizer.swift) against `cbor_stream_decode`, and the benchmark measures
// `cbor_load` beside the engine's decoder. Not part of any product: nothing shipped links libcbor.
internal import CLibCBOR

/// One head as libcbor's streaming decoder reports it.
package struct LibCBORHead: Equatable, Sendable {
    /// `cbor_stream_decode`'s three outcomes.
    package enum Status: Equatable, Sendable { case finished, needsMoreData, error }
    package var status: Status
    /// Bytes consumed (head, and a definite string's content); 0 unless `finished`.
    package var read: Int
    /// The callback libcbor called: "uint", "negint", "bytes", "text", "bytesStart", "textStart",
    /// "array", "map", "arrayStart", "mapStart", "tag", "simple", "half", "single", "double", "break".
    package var event: String
    /// The integer, count, length, tag number or simple value the callback received (0 for floats
    /// and for events without one).
    package var value: UInt64
}

private final class Sink {
    var event = ""
    var value: UInt64 = 0
}

private func sink(_ ctx: UnsafeMutableRawPointer?) -> Sink {
    Unmanaged<Sink>.fromOpaque(ctx!).takeUnretainedValue()
}

private func record(_ ctx: UnsafeMutableRawPointer?, _ event: String, _ value: UInt64 = 0) {
    let s = sink(ctx)
    s.event = event
    s.value = value
}

private func callbacks() -> cbor_callbacks {
    var c = cbor_empty_callbacks
    c.uint8 = { ctx, v in record(ctx, "uint", UInt64(v)) }
    c.uint16 = { ctx, v in record(ctx, "uint", UInt64(v)) }
    c.uint32 = { ctx, v in record(ctx, "uint", UInt64(v)) }
    c.uint64 = { ctx, v in record(ctx, "uint", v) }
    c.negint8 = { ctx, v in record(ctx, "negint", UInt64(v)) }
    c.negint16 = { ctx, v in record(ctx, "negint", UInt64(v)) }
    c.negint32 = { ctx, v in record(ctx, "negint", UInt64(v)) }
    c.negint64 = { ctx, v in record(ctx, "negint", v) }
    c.byte_string = { ctx, _, n in record(ctx, "bytes", UInt64(UInt(bitPattern: n))) }
    c.byte_string_start = { ctx in record(ctx, "bytesStart") }
    c.string = { ctx, _, n in record(ctx, "text", UInt64(UInt(bitPattern: n))) }
    c.string_start = { ctx in record(ctx, "textStart") }
    c.array_start = { ctx, n in record(ctx, "array", UInt64(UInt(bitPattern: n))) }
    c.indef_array_start = { ctx in record(ctx, "arrayStart") }
    c.map_start = { ctx, n in record(ctx, "map", UInt64(UInt(bitPattern: n))) }
    c.indef_map_start = { ctx in record(ctx, "mapStart") }
    c.tag = { ctx, v in record(ctx, "tag", v) }
    c.float2 = { ctx, _ in record(ctx, "half") }
    c.float4 = { ctx, _ in record(ctx, "single") }
    c.float8 = { ctx, _ in record(ctx, "double") }
    c.undefined = { ctx in record(ctx, "simple", 23) }
    c.null = { ctx in record(ctx, "simple", 22) }
    c.boolean = { ctx, b in record(ctx, "simple", b ? 21 : 20) }
    c.indef_break = { ctx in record(ctx, "break") }
    return c
}

/// libcbor's streaming decoder and tree loader.
package enum LibCBORPeer {
    /// The first head of `bytes` as `cbor_stream_decode` reads it.
    package static func head(_ bytes: [UInt8]) -> LibCBORHead {
        var table = callbacks()
        let s = Sink()
        let ctx = Unmanaged.passUnretained(s).toOpaque()
        let r = withExtendedLifetime(s) {
            bytes.withUnsafeBufferPointer { cbor_stream_decode($0.baseAddress, $0.count, &table, ctx) }
        }
        switch r.status {
        case CBOR_DECODER_FINISHED: return LibCBORHead(status: .finished, read: r.read, event: s.event, value: s.value)
        case CBOR_DECODER_NEDATA: return LibCBORHead(status: .needsMoreData, read: 0, event: "", value: 0)
        default: return LibCBORHead(status: .error, read: 0, event: "", value: 0)
        }
    }

    /// Runs `cbor_load` over `bytes` and frees the result; false if libcbor failed. The benchmark's
    /// baseline; never given untrusted input.
    package static func loadAndFree(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buf in
            var result = cbor_load_result()
            guard let item = cbor_load(buf.baseAddress, buf.count, &result) else { return false }
            var ref: UnsafeMutablePointer<cbor_item_t>? = item
            cbor_decref(&ref)
            return result.error.code == CBOR_ERR_NONE
        }
    }

    /// The libcbor version the peer was built against, e.g. `0.8`.
    package static var version: String { "\(mdoc_cbor_major_version).\(mdoc_cbor_minor_version)" }
}
