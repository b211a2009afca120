import Testing
import LibCBORPeer
@testable import MdocCBOR

/// The engine's CBOR head decoder against libcbor 0.8's `cbor_stream_decode`, an independent peer:
/// every initial byte with several argument patterns at every length, then seeded random input. Where
/// libcbor 0.8 is known to be wrong (PJK/libcbor#307) the test asserts both sides of the difference.
@Suite("CBOR head decoder vs libcbor")
struct TokenizerPeerTests {
    static func ours(_ bytes: [UInt8]) -> Token {
        bytes.withUnsafeBufferPointer { Tokenizer.next($0.baseAddress!, offset: 0, end: $0.count) }
    }

    static func event(_ kind: TokenKind) -> String {
        switch kind {
        case .unsigned: "uint"
        case .negative: "negint"
        case .bytes: "bytes"
        case .text: "text"
        case .bytesStart: "bytesStart"
        case .textStart: "textStart"
        case .array: "array"
        case .map: "map"
        case .arrayStart: "arrayStart"
        case .mapStart: "mapStart"
        case .tag: "tag"
        case .simple: "simple"
        case .half: "half"
        case .single: "single"
        case .double: "double"
        case .breakCode: "break"
        case .error: "error"
        }
    }

    /// Returns a description of the first difference, or nil when both decoders agree on `bytes`.
    static func disagreement(_ bytes: [UInt8]) -> String? {
        let t = ours(bytes)
        let peer = LibCBORPeer.head(bytes)
        let b = bytes[0]
        // libcbor 0.8 refuses the well-formed single-byte tags 6–20 and simple values 0–19.
        if (0xc6...0xd4).contains(b) || (0xe0...0xf3).contains(b) {
            guard peer.status == .error, !t.truncated, t.kind == (b < 0xe0 ? .tag : .simple),
                t.value == UInt64(b & 0x1f), t.length == 1
            else { return "known libcbor 0.8 difference changed at \(bytes)" }
            return nil
        }
        if b == 0xf8 { return nil }  // two-byte simple values: asserted in `simpleValues`
        switch peer.status {
        case .needsMoreData:
            return t.truncated ? nil : "libcbor needs more data, ours \(t.kind) at \(bytes)"
        case .error:
            return !t.truncated && t.kind == .error ? nil : "libcbor refuses, ours \(t.kind) at \(bytes)"
        case .finished:
            guard !t.truncated, t.kind != .error else { return "libcbor reads, ours refuses at \(bytes)" }
            guard peer.event == event(t.kind), peer.read == t.length else {
                return "libcbor \(peer.event)/\(peer.read), ours \(event(t.kind))/\(t.length) at \(bytes)"
            }
            if [.half, .single, .double].contains(t.kind) {
                // libcbor widens floats; ours keeps the bits as written.
                var bits: UInt64 = 0
                for byte in bytes[1..<t.length] { bits = bits << 8 | UInt64(byte) }
                return t.value == bits && t.headLength == t.length ? nil : "float bits at \(bytes)"
            }
            guard peer.value == t.value else { return "libcbor value \(peer.value), ours \(t.value) at \(bytes)" }
            let head = t.kind == .bytes || t.kind == .text ? t.length - Int(t.value) : t.length
            return t.headLength == head ? nil : "head length \(t.headLength) at \(bytes)"
        }
    }

    @Test("every initial byte, argument patterns at every length: same verdict, value and length")
    func everyInitialByte() {
        let fillers: [[UInt8]] = [
            [UInt8](repeating: 0, count: 12), [UInt8](repeating: 0xff, count: 12), Array(1...12),
            [0x00, 0x00, 0x00, 0x03, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68],
            [0x05, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b],
            [0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
        ]
        var checked = 0
        var failures: [String] = []
        for first in 0...255 {
            for filler in fillers {
                for length in 0...filler.count {
                    let bytes = [UInt8(first)] + filler[..<length]
                    if let d = Self.disagreement(bytes) { failures.append(d) }
                    checked += 1
                }
            }
        }
        #expect(checked == 256 * 6 * 13)
        let sample = failures.prefix(5)
        #expect(failures.count == 0, "\(sample)")
    }

    @Test("seeded random input: same verdict, value and length")
    func randomInput() {
        var state: UInt64 = 0x6d64_6f63_2d63_626f
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var failures: [String] = []
        for _ in 0..<20_000 {
            let n = 1 + Int(next() % 16)
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: next()) }
            if let d = Self.disagreement(bytes) { failures.append(d) }
        }
        let sample = failures.prefix(5)
        #expect(failures.count == 0, "\(sample)")
    }

    @Test("two-byte simple values: 32–255 well-formed, 0–31 not (RFC 8949 §3.3), a missing byte truncated")
    func simpleValues() {
        for v in 0...255 {
            let t = Self.ours([0xf8, UInt8(v)])
            if v < 32 {
                #expect(t.kind == .error && !t.truncated && t.length == 2)
            } else {
                #expect(t.kind == .simple && t.value == UInt64(v) && t.length == 2 && t.headLength == 2)
            }
        }
        #expect(Self.ours([0xf8]).truncated)
    }

    @Test("a string longer than the address space is truncated, not a trap")
    func hugeLengths() {
        for first: UInt8 in [0x5b, 0x7b] {
            let t = Self.ours([first] + [UInt8](repeating: 0xff, count: 8) + [0x00])
            #expect(t.truncated)
        }
        let array = Self.ours([0x9b] + [UInt8](repeating: 0xff, count: 8))
        #expect(array.kind == .array && array.value == UInt64.max && array.length == 9)
    }
}
