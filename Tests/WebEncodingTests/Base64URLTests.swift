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
    }
}
