import Foundation
import Testing
import TestSupport
@testable import MdocCBOR

@Suite("CBOR: RFC 8949 vectors")
struct CBORVectorTests {
    struct AppendixAEntry {
        let hex: String
        let roundtrip: Bool
        let decoded: Any?
        let diagnostic: String?
    }

    static func appendixA() throws -> [AppendixAEntry] {
        let arr = try SharedVectors.json("cbor/appendix_a.json") as! [[String: Any]]
        return arr.map {
            AppendixAEntry(
                hex: $0["hex"] as! String, roundtrip: $0["roundtrip"] as! Bool, decoded: $0["decoded"],
                diagnostic: $0["diagnostic"] as? String)
        }
    }

    /// Compares a decoded item with the JSON value from the vector file.
    static func matches(_ item: CBORItem, _ json: Any, hex: String) -> Bool {
        switch json {
        case let s as String: return item.stringValue == s
        case let a as [Any]:
            guard item.type == .array, item.count == a.count else { return false }
            return zip(item.children, a).allSatisfy { matches($0, $1, hex: hex) }
        case let m as [String: Any]:
            guard item.type == .map, item.count == m.count else { return false }
            for (k, v) in item.mapEntries {
                guard let ks = k.stringValue, let jv = m[ks], matches(v, jv, hex: hex) else { return false }
            }
            return true
        case is NSNull: return item.isNull
        case let n as NSNumber:
            if item.type == .simple { return item.boolValue != nil && item.boolValue == n.boolValue }
            if item.type == .float {
                // JSON readers may round long decimals; compare floats to 1e-15 relative.
                let a = item.doubleValue!
                let b = n.doubleValue
                return a == b || abs(a - b) <= 1e-15 * abs(a)
            }
            // Integers: JSON parsing may widen large ones to Double; compare exactly through the
            // textual form where possible.
            if item.type == .unsignedInt {
                if let u = UInt64(exactly: n.doubleValue), n.doubleValue < 1.8e19, Double(item.argument) == Double(u) {
                    return true
                }
                return n.stringValue == String(item.argument) || Double(item.argument) == n.doubleValue
            }
            if item.type == .negativeInt {
                let s = item.argument == UInt64.max ? "-18446744073709551616" : "-" + String(item.argument + 1)
                return n.stringValue == s || -Double(item.argument) - 1 == n.doubleValue
            }
            return false
        default: return false
        }
    }

    @Test(
        "Appendix A: every example decodes to its value; preferred ones re-encode byte for byte; diagnostics match",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func appendixAExamples() throws {
        let entries = try Self.appendixA()
        var decodedCount = 0
        var roundTrips = 0
        var diags = 0
        for e in entries {
            let bytes = try Hex.decode(e.hex)
            if e.hex == "f818" {
                // RFC 8949 removed simple(24) in two-byte form (erratum 5917); it is in Appendix F.1.
                #expect(throws: CBORError.self) { try CBORDocument(decoding: bytes) }
                continue
            }
            let doc = try CBORDocument(decoding: bytes)
            #expect(doc.root.byteRange == 0..<bytes.count)
            if let dec = e.decoded {
                // Bignums (tags 2/3) are compared through their hex, which the decode already covers.
                if doc.root.type != .tag {
                    #expect(Self.matches(doc.root, dec, hex: e.hex), "value mismatch for \(e.hex)")
                }
            }
            if let diag = e.diagnostic {
                #expect(CBORDiagnostic.describe(doc.root) == diag, "diagnostic mismatch for \(e.hex)")
                diags += 1
            }
            let reencoded = CBORValue(doc.root).encoded()
            if e.roundtrip {
                #expect(Hex.encode(reencoded) == e.hex, "re-encoding of \(e.hex)")
                // Preferred-form examples must also pass the strict decoder.
                #expect(throws: Never.self) {
                    try CBORDocument(decoding: bytes, options: .init(requirePreferredEncoding: true))
                }
                roundTrips += 1
            } else {
                // Non-preferred examples: the re-encoding differs, is preferred, and means the same.
                #expect(Hex.encode(reencoded) != e.hex)
                let again = try CBORDocument(decoding: reencoded, options: .init(requirePreferredEncoding: true))
                let same =
                    CBORValue(again.root).encoded() == CBORValue(doc.root).encoded()
                    || (doc.root.doubleValue?.isNaN ?? false)
                #expect(same, "meaning changed for \(e.hex)")
                #expect(throws: CBORError.self) {
                    try CBORDocument(decoding: bytes, options: .init(requirePreferredEncoding: true))
                }
            }
            decodedCount += 1
        }
        print(
            "Appendix A: \(decodedCount) decoded, \(roundTrips) re-encoded byte for byte, \(diags) diagnostics compared, 1 (f818) rejected per RFC 8949"
        )
        #expect(decodedCount == 81)
    }

    @Test(
        "Appendix F.1: all 94 not-well-formed inputs are rejected with the right error kind",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func appendixF1() throws {
        let root = try SharedVectors.json("cbor/rfc8949_appendix_f1_not_well_formed.json") as! [String: Any]
        let cats = root["categories"] as! [[String: Any]]
        var n = 0
        for c in cats {
            let kind = c["error_kind"] as! Int
            for hex in c["hex"] as! [String] {
                let bytes = try Hex.decode(hex)
                do {
                    _ = try CBORDocument(decoding: bytes)
                    Issue.record("accepted not-well-formed \(hex)")
                } catch {
                    if kind == 2 {
                        #expect(error.code == .truncated || error.code == .lengthExceedsInput, "\(hex): \(error)")
                    } else {
                        #expect(error.code != .truncated, "\(hex): \(error)")
                    }
                }
                n += 1
            }
        }
        print("Appendix F.1: \(n) not-well-formed inputs rejected")
        #expect(n == 94)
    }

    @Test(
        "Every truncation of every Appendix A example is rejected; every one-byte extension is trailing data",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func truncationsAndTrailing() throws {
        var n = 0
        for e in try Self.appendixA() where e.hex != "f818" {
            let bytes = try Hex.decode(e.hex)
            for cut in 0..<bytes.count {
                #expect(throws: CBORError.self) { try CBORDocument(decoding: Array(bytes[0..<cut])) }
                n += 1
            }
            do {
                _ = try CBORDocument(decoding: bytes + [0x00])
                Issue.record("trailing byte accepted after \(e.hex)")
            } catch {
                #expect(error.code == .trailingBytes)
                #expect(error.offset == bytes.count)
            }
        }
        print("Truncations rejected: \(n)")
    }
}
