import Foundation
import Testing
import TestSupport
@testable import WebEncoding

@Suite("base64url")
struct Base64URLTests {
    static func reference(_ b: [UInt8]) -> String {
        Data(b).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("Encoding matches Foundation (URL alphabet, no padding) for every length 0…300, and decodes back")
    func roundTrip() {
        var rng = SystemRandomNumberGenerator()
        for n in 0...300 {
            let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let e = Base64URL.encode(b)
            #expect(e == Self.reference(b), "length \(n)")
            #expect(Base64URL.decode(e) == b, "length \(n)")
            var out = [UInt8](repeating: 7, count: 3)
            b.withUnsafeBytes { Base64URL.encode($0, appendingTo: &out) }
            #expect(Array(out.dropFirst(3)) == Array(e.utf8))
        }
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
    }

    @Test(
        "The vector steps (AVX2, and AVX-512 VBMI then AVX2, as the CPU has them) and the portable encoder agree with Foundation on every length to 600, every 6-bit value at every position, large inputs, and never write past the encoding"
    )
    func vectorSteps() {
        var rng = SystemRandomNumberGenerator()
        // Every vector level this CPU runs (AVX2 alone as well as AVX-512 VBMI then AVX2), and the
        // default entry point (the best level).
        let levels = Array(0...Base64URL.vectorLevel)
        func check(_ b: [UInt8], _ what: String) {
            let n = Base64URL.encodedLength(b.count)
            // Guard bytes after the output: no encoder may write past the encoding.
            var scalar = [UInt8](repeating: 0xee, count: n + 64)
            var best = [UInt8](repeating: 0xee, count: n + 64)
            b.withUnsafeBytes { input in
                scalar.withUnsafeMutableBufferPointer { Base64URL.encodeScalar(input, into: $0.baseAddress!) }
                best.withUnsafeMutableBufferPointer { Base64URL.encode(input, into: $0.baseAddress!) }
            }
            #expect(best == scalar, "\(what)")
            #expect(String(decoding: scalar.prefix(n), as: UTF8.self) == Self.reference(b), "\(what)")
            #expect(scalar.suffix(64).allSatisfy { $0 == 0xee }, "\(what): wrote past the encoding")
            for level in levels {
                var vector = [UInt8](repeating: 0xee, count: n + 64)
                b.withUnsafeBytes { input in
                    vector.withUnsafeMutableBufferPointer {
                        Base64URL.encode(input, into: $0.baseAddress!, vectorLevel: level)
                    }
                }
                #expect(vector == scalar, "\(what), vector level \(level)")
            }
        }
        for n in 0...600 { check((0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }, "length \(n)") }
        // Every 6-bit index in each of the 32 output positions of a vector step.
        for v in 0..<64 {
            for shift in 0..<4 {
                // Three bytes whose `shift`-th 6-bit field is v, the others 0, then 0x3f in the others.
                for fill: UInt32 in [0, 0x3f] {
                    var word: UInt32 = 0
                    for f in 0..<4 { word |= (f == shift ? UInt32(v) : fill) << UInt32(18 - 6 * f) }
                    let group = [UInt8(word >> 16 & 0xff), UInt8(word >> 8 & 0xff), UInt8(word & 0xff)]
                    check(Array((0..<20).map { _ in group }.joined()), "index \(v) in field \(shift)")
                }
            }
        }
        for n in [4095, 4096, 19_999, 65_536, 1 << 20] {
            check((0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }, "length \(n)")
        }
    }

    #if os(Linux) && arch(x86_64)
        @Test("The encoder runs the widest vector code the CPU's flags (/proc/cpuinfo) offer")
        func vectorLevelFollowsTheCPU() throws {
            let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
            let flags = Set(
                info.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init)
                    ?? [])
            let expected =
                !flags.contains("avx2") ? 0 : flags.isSuperset(of: ["avx512f", "avx512bw", "avx512vbmi"]) ? 2 : 1
            #expect(Base64URL.vectorLevel == expected)
        }
    #endif

    @Test(
        "The vector decoder agrees with the portable one: every length to 600, every byte value in every position of two blocks, large inputs"
    )
    func vectorDecode() {
        var rng = SystemRandomNumberGenerator()
        func both(_ text: [UInt8]) -> (vector: [UInt8]?, scalar: [UInt8]?) {
            text.withUnsafeBytes {
                (
                    Base64URL.decode($0, table: Base64URL.table, vectorURLBlocks: true),
                    Base64URL.decode($0, table: Base64URL.table, vectorURLBlocks: false)
                )
            }
        }
        for n in 0...600 {
            let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let text = Array(Base64URL.encode(b).utf8)
            let (v, s) = both(text)
            #expect(v == b && s == b, "length \(n)")
        }
        // Every byte value at every position of a 64-character text (two vector blocks) and of a
        // 70-character one (two blocks and a tail): the same bytes, or nil from both.
        for length in [64, 70] {
            let base = Array(Base64URL.encode((0..<(length * 3 / 4)).map { UInt8(truncatingIfNeeded: $0 &* 37) }).utf8)
            #expect(base.count == length)
            for at in 0..<length {
                for value in 0...255 {
                    var text = base
                    text[at] = UInt8(value)
                    let (v, s) = both(text)
                    #expect(v == s, "length \(length), byte \(value) at \(at)")
                    if Base64URL.table[value] != 0xff, at < length - 2 { #expect(v != nil, "byte \(value) at \(at)") }
                }
            }
        }
        for n in [4095, 4096, 19_999, 65_536, 1 << 20] {
            let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(Base64URL.decode(Base64URL.encode(b)) == b, "length \(n)")
        }
    }

    /// `bytes` cut at `cuts` (ascending offsets, repeats allowed: empty pieces), encoded piece by piece
    /// into a buffer with guard bytes; nil when the encoder refused.
    static func encodedInPieces(_ bytes: [UInt8], cuts: [Int], count: Int? = nil) -> (text: [UInt8], guardIntact: Bool)?
    {
        let declared = count ?? bytes.count
        let n = Base64URL.encodedLength(declared)
        var out = [UInt8](repeating: 0xee, count: n + 16)
        let bounds = [0] + cuts + [bytes.count]
        let ok = bytes.withUnsafeBytes { b in
            out.withUnsafeMutableBufferPointer { o in
                Base64URL.encode(count: declared, into: o.baseAddress!) { piece in
                    for k in 0..<(bounds.count - 1) {
                        piece(UnsafeRawBufferPointer(rebasing: b[bounds[k]..<bounds[k + 1]]))
                    }
                }
            }
        }
        guard ok else { return nil }
        return (Array(out[..<n]), out[n...].allSatisfy { $0 == 0xee })
    }

    @Test(
        "Encoding a message handed over in pieces equals encoding it whole: every cut of every length to 40, two cuts to 24, random cuts of large inputs; pieces that do not add up are refused"
    )
    func pieces() {
        var rng = SystemRandomNumberGenerator()
        for n in 0...40 {
            let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let whole = Array(Base64URL.encode(b).utf8)
            for cut in 0...n {
                let r = Self.encodedInPieces(b, cuts: [cut])
                #expect(r?.text == whole && r?.guardIntact == true, "length \(n), cut at \(cut)")
            }
            if n <= 24 {
                for c1 in 0...n {
                    for c2 in c1...n {
                        #expect(
                            Self.encodedInPieces(b, cuts: [c1, c2])?.text == whole, "length \(n), cuts \(c1), \(c2)")
                    }
                }
            }
        }
        for n in [4095, 4096, 12_289, 100_003] {
            let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let cuts = (0..<7).map { _ in Int.random(in: 0...n, using: &rng) }.sorted()
            let r = Self.encodedInPieces(b, cuts: cuts)
            #expect(r?.text == Array(Base64URL.encode(b).utf8) && r?.guardIntact == true, "length \(n)")
        }
        // Pieces longer or shorter than the declared count: refused, nothing written past the declared length.
        let b = [UInt8](repeating: 0x5a, count: 30)
        #expect(Self.encodedInPieces(b, cuts: [10, 20], count: 29) == nil)
        #expect(Self.encodedInPieces(b, cuts: [10, 20], count: 31) == nil)
        #expect(Self.encodedInPieces(b, cuts: [], count: 0) == nil)
    }

    @Test("Decoding refuses bad alphabet, bad padding, impossible lengths and non-canonical trailing bits")
    func refusals() {
        // Padding refused, as the platform refuses it (Web Platform Tests, org-iso-mdoc validation).
        #expect(Base64URL.decode("AQ==") == nil)
        #expect(Base64URL.decode("AQI=") == nil)
        #expect(Base64URL.decode("AQ") == [1])
        #expect(Base64URL.decode("AQ") == [1])
        for bad in ["A", "AQ=", "AQ===", "A=Q=", "+/8", "AB", "AQ#", "AQID\n", "====", "AR"] {
            #expect(Base64URL.decode(bad) == nil, "\(bad)")
        }
        // Into a buffer of the decoded length: the same rules, and the length must match exactly; a
        // refusal leaves the buffer zeroed.
        for (text, length, expected) in [
            ("AQID", 3, [1, 2, 3] as [UInt8]?), ("AQI", 2, [1, 2]), ("AQ", 1, [1]), ("", 0, []), ("AQID", 2, nil),
            ("AQID", 4, nil), ("AQ==", 1, nil), ("AR", 1, nil), ("A+ID", 3, nil), ("A", 0, nil),
        ] {
            var out = [UInt8](repeating: 0xee, count: length)
            let ok = Array(text.utf8).withUnsafeBytes { t in
                out.withUnsafeMutableBytes { Base64URL.decode(t, into: $0) }
            }
            #expect(ok == (expected != nil) && out == (expected ?? [UInt8](repeating: 0, count: length)), "\(text)")
        }
        let long = Array(0..<200).map { UInt8($0) }
        var decoded = [UInt8](repeating: 0, count: long.count)
        #expect(
            Array(Base64URL.encode(long).utf8).withUnsafeBytes { t in
                decoded.withUnsafeMutableBytes { Base64URL.decode(t, into: $0) }
            } && decoded == long)
        // "=" in any position of any length is refused (at the end as padding, elsewhere as outside
        // the alphabet).
        let valid = Array(Base64URL.encode(Array(0..<40)).utf8)
        for length in 1...valid.count {
            for at in 0..<length {
                var text = Array(valid[..<length])
                text[at] = UInt8(ascii: "=")
                #expect(Base64URL.decode(String(decoding: text, as: UTF8.self)) == nil, "length \(length), at \(at)")
            }
        }
    }
}
