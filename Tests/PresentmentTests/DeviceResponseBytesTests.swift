import MdocCBOR
import Testing
@testable import Presentment

@Suite("DeviceResponse pieces")
struct DeviceResponseBytesTests {
    static func pieces(_ r: DeviceResponseBytes) -> [[UInt8]] {
        var out = [[UInt8]]()
        r.forEachPiece { out.append(Array($0)) }
        return out
    }

    @Test(
        "Verbatim pieces under the threshold are copied, from the threshold up referred to; the pieces come in order, skip empty ones and add up to count"
    )
    func verbatim() {
        let threshold = DeviceResponseBytes.referenceThreshold
        let small = [UInt8](repeating: 1, count: threshold - 1)
        let large = (0..<(threshold + 7)).map { UInt8(truncatingIfNeeded: $0) }
        let source = [UInt8](repeating: 9, count: 3) + large + small
        var out = DeviceResponseOutput(capacity: 16)
        out.writer.writeMapHeader(count: 1)
        out.writeVerbatim(source, 3..<(3 + large.count))  // referred to, right after the head
        out.writeVerbatim(source, (3 + large.count)..<source.count)  // copied
        out.writeVerbatim(source, 3..<(3 + large.count))  // referred to, at the end: adjacent to nothing
        out.writeVerbatim(large, large.indices)  // referred to, right after the previous reference
        let r = out.finish()
        #expect(r.references.map(\.at) == [1, 1 + small.count, 1 + small.count])
        #expect(r.own.count == 1 + small.count)
        let expected = [0xa1] + large + small + large + large
        #expect(r.count == expected.count && r.contiguous == expected)
        #expect(Self.pieces(r).map(\.count) == [1, large.count, small.count, large.count, large.count])

        // Nothing referred to: one piece, the builder's own buffer; an empty response has no piece.
        #expect(Self.pieces(DeviceResponseBytes([1, 2, 3])) == [[1, 2, 3]])
        #expect(Self.pieces(DeviceResponseBytes([])).isEmpty && DeviceResponseBytes([]).count == 0)
        // Only references (the builder's own buffer empty).
        let onlyRefs = DeviceResponseBytes(
            own: [], references: [.init(at: 0, source: large, range: 0..<5), .init(at: 0, source: large, range: 5..<9)])
        #expect(onlyRefs.contiguous == Array(large[0..<9]) && Self.pieces(onlyRefs).count == 2)
    }
}
