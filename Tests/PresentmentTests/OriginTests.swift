import Foundation
import Testing
import TestSupport
import TestWorld
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import HPKE
import MdocCBOR

/// The requesting origin's serialization (WHATWG URL §4.2, host parsing §3.5): what goes into every
/// protocol's SessionTranscript.
@Suite("Origins")
struct OriginTests {
    struct OriginCase: CustomTestStringConvertible, Sendable {
        let input: String
        let expected: String?  // nil = refused
        var code: PresentmentError.Code = .invalidOrigin
        var testDescription: String { input.isEmpty ? "(empty)" : input }
    }

    static let origins: [OriginCase] = [
        .init(input: "https://example.com", expected: "https://example.com"),
        .init(input: "https://example.com/", expected: "https://example.com"),
        .init(input: "HTTPS://Example.COM", expected: "https://example.com"),
        .init(input: "https://example.com:443", expected: "https://example.com"),
        .init(input: "http://example.com:80/", expected: "http://example.com"),
        .init(input: "https://example.com:8443", expected: "https://example.com:8443"),
        .init(input: "http://127.0.0.1:3010", expected: "http://127.0.0.1:3010"),
        .init(input: "https://example.com:0443", expected: "https://example.com"),
        .init(input: "https://[::1]:8443", expected: "https://[::1]:8443"),
        .init(input: "https://[2001:DB8:0:0:0:0:0:1]", expected: "https://[2001:db8::1]"),
        .init(input: "https://xn--bcher-kva.example", expected: "https://xn--bcher-kva.example"),
        .init(input: "https://example.com:", expected: "https://example.com"),
        .init(input: "https://example.com", expected: "https://example.com"),
        .init(input: "https://Example.com:08443/", expected: "https://example.com:8443"),
        .init(input: "http://example.com:0080", expected: "http://example.com"),
        .init(input: "http://example.com:443", expected: "http://example.com:443"),
        .init(input: "https://example.com:80", expected: "https://example.com:80"),
        .init(input: "https://example.com.", expected: "https://example.com."),
        .init(input: "https://sub_domain.example-1.com:0", expected: "https://sub_domain.example-1.com:0"),
        .init(input: "https://a..b", expected: nil),
        .init(input: "https://:443", expected: nil),
        .init(input: "", expected: nil, code: .missingOrigin),
        .init(input: " https://example.com", expected: nil),
        .init(input: "https://example.com\n", expected: nil),
        .init(input: "https://exa\u{7}mple.com", expected: nil),
        .init(input: "https://example.com/path", expected: nil),
        .init(input: "https://example.com?x=1", expected: nil),
        .init(input: "https://example.com#frag", expected: nil),
        .init(input: "https://user:pw@example.com", expected: nil),
        .init(input: "https://bücher.example", expected: nil),
        .init(input: "ftp://example.com", expected: nil),
        .init(input: "javascript:alert(1)", expected: nil),
        .init(input: "file:///etc/passwd", expected: nil),
        .init(input: "https://", expected: nil),
        .init(input: "https://example.com:99999", expected: nil),
        .init(input: "https://example.com:-1", expected: nil),
        .init(input: "https://[::1", expected: nil),
        .init(input: "https://[zz::1]", expected: nil),
        .init(input: "https://a:b:c", expected: nil),
        .init(input: "https://.example.com", expected: nil),
        .init(input: "android:apk-key-hash:abc", expected: nil),
    ]

    /// Hosts in every form the WHATWG URL standard parses, with the origin a browser serializes:
    /// expected values are `new URL(input).origin` from Node.js 20's WHATWG URL implementation
    /// (nil: it throws). IPv6 keeps hex pieces (never a dotted IPv4 tail); IPv4 in any numeric form
    /// becomes dotted decimal; a host ending in a number that is no IPv4 address is refused.
    static let whatwgOrigins: [OriginCase] = [
        .init(input: "http://[::ffff:7f00:1]:3010", expected: "http://[::ffff:7f00:1]:3010"),
        .init(input: "http://[::ffff:127.0.0.1]:3010", expected: "http://[::ffff:7f00:1]:3010"),
        .init(input: "https://[0:0:0:0:0:0:0:1]", expected: "https://[::1]"),
        .init(input: "https://[::1]:8443", expected: "https://[::1]:8443"),
        .init(input: "https://[2001:DB8::1]", expected: "https://[2001:db8::1]"),
        .init(input: "https://[2001:db8:0:0:1:0:0:1]", expected: "https://[2001:db8::1:0:0:1]"),
        .init(input: "https://[2001:db8::1:0:0:1]", expected: "https://[2001:db8::1:0:0:1]"),
        .init(input: "https://[0:0:1:0:0:0:0:0]", expected: "https://[0:0:1::]"),
        .init(input: "https://[1:0:0:2:0:0:0:3]", expected: "https://[1:0:0:2::3]"),
        .init(input: "https://[::]", expected: "https://[::]"),
        .init(input: "https://[1::]", expected: "https://[1::]"),
        .init(input: "https://[::1.2.3.4]", expected: "https://[::102:304]"),
        .init(input: "https://[fe80::1%25eth0]", expected: nil),
        .init(input: "https://[::ffff:127.0.0.01]", expected: nil),
        .init(input: "https://[1:2:3:4:5:6:7:8:9]", expected: nil),
        .init(input: "https://[1:2:3:4:5:6:7]", expected: nil),
        .init(input: "https://[::1:]", expected: nil),
        .init(input: "https://[:1]", expected: nil),
        .init(input: "https://[1:::2]", expected: nil),
        .init(input: "https://[12345::]", expected: nil),
        .init(input: "https://[::1.2.3]", expected: nil),
        .init(input: "https://[::1.2.3.256]", expected: nil),
        .init(input: "https://[1:2:3:4:5:6:7:1.2.3.4]", expected: nil),
        .init(input: "http://127.1", expected: "http://127.0.0.1"),
        .init(input: "http://0x7f.0.0.1", expected: "http://127.0.0.1"),
        .init(input: "http://2130706433", expected: "http://127.0.0.1"),
        .init(input: "http://127.0.0.1.", expected: "http://127.0.0.1"),
        .init(input: "http://0177.0.0.1", expected: "http://127.0.0.1"),
        .init(input: "http://0x7f000001:8080", expected: "http://127.0.0.1:8080"),
        .init(input: "http://127.0.1", expected: "http://127.0.0.1"),
        .init(input: "http://1.2.3.4.5", expected: nil),
        .init(input: "http://256.0.0.1", expected: nil),
        .init(input: "http://1.256", expected: "http://1.0.1.0"),
        .init(input: "http://09", expected: nil),
        .init(input: "http://0x", expected: "http://0.0.0.0"),
        .init(input: "http://example.123", expected: nil),
        .init(input: "http://4294967295", expected: "http://255.255.255.255"),
        .init(input: "http://4294967296", expected: nil),
        .init(input: "http://0X7F.1", expected: "http://127.0.0.1"),
        .init(input: "http://1.2.3.0x", expected: "http://1.2.3.0"),
        .init(input: "http://127.0.0.1:00080", expected: "http://127.0.0.1"),
        .init(input: "http://a.example:0443", expected: "http://a.example:443"),
        .init(input: "https://a.example:0000443", expected: "https://a.example"),
        .init(input: "https://a.example:00000000000000000443", expected: "https://a.example"),
    ]

    @Test(
        "Origins serialize exactly as a browser's URL parser does: lower case, default port dropped, no path or slash, IPv6 pieces, IPv4 numeric forms, ports with leading zeros; refusals name no input",
        arguments: origins + whatwgOrigins)
    func origin(_ c: OriginCase) {
        // Origins with a zone identifier contain '%', which the engine refuses for any host.
        do {
            let o = try Origin(c.input)
            #expect(o.serialized == c.expected, "\(c.input)")
            // The serialization is a fixed point.
            #expect((try? Origin(o.serialized))?.serialized == o.serialized)
        } catch {
            #expect(c.expected == nil, "\(c.input) refused: \(error)")
            #expect(error.code == c.code)
            #expect(!error.detail.contains(c.input) || c.input.isEmpty)
        }
    }

    @Test("App origins only when enabled")
    func appOrigins() throws {
        #expect(
            try Origin("android:apk-key-hash:Z2l0aHVi_-A", allowAppOrigins: true).serialized
                == "android:apk-key-hash:Z2l0aHVi_-A")
        #expect(
            try Origin("Android:APK-Key-Hash:Z2l0aHVi_-A", allowAppOrigins: true).serialized
                == "android:apk-key-hash:Z2l0aHVi_-A")
        expectRefusal(OriginRule.appHashNotBase64) {
            try Origin("android:apk-key-hash:", allowAppOrigins: true)
        }
    }

    @Test(
        "The shortcut for an already serialized https DNS origin only takes inputs the full parser keeps unchanged, and none of its near misses"
    )
    func serializedNameShortcut() throws {
        func fast(_ s: String) -> Bool {
            var t = s
            return t.withUTF8 { Origin.isSerializedHTTPSName($0) }
        }
        func parsedUnchanged(_ s: String) throws -> Bool {
            var t = s
            let r = t.withUTF8 { u in
                Result { () throws(PresentmentError) in try Origin.parse(u, allowAppOrigins: false) }
            }
            return try r.get() == nil
        }
        // Hosts built from every character the shortcut allows, labels of 1 to 63 bytes, up to 253 bytes.
        // A fixed linear congruential sequence (Knuth's MMIX constants): the same origins on every run.
        var state: UInt64 = 26
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789-".utf8)
        var taken = 0
        for round in 0..<2_000 {
            let labels = 1 + Int(next() % 5)
            var host = [String]()
            for l in 0..<labels {
                let length = 1 + Int(next() % (round % 10 == 0 ? 63 : 12))
                var label = (0..<length).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }
                if l == labels - 1, next() % 4 != 0 { label[0] = alphabet[Int(next() % 26)] }
                host.append(String(decoding: label, as: UTF8.self))
            }
            let origin = "https://" + host.joined(separator: ".")
            if fast(origin) {
                taken += 1
                #expect(try parsedUnchanged(origin), "\(origin)")
                #expect(try Origin(origin).serialized == origin)
            }
        }
        #expect(taken > 1_000)
        let longest = "https://" + Array(repeating: String(repeating: "a", count: 63), count: 4).joined(separator: ".")
        #expect(longest.utf8.count - 8 == 255)
        let at253 = String(longest.dropLast(2))
        #expect(fast(at253))
        #expect(try parsedUnchanged(at253))
        // Near misses: each left to the full parser (which rewrites, reads a number, or refuses).
        for miss in [
            "https://", "https://a..b", "https://.a", "https://a.", "https://1.2.3.4", "https://a.0x7f", "https://a.1",
            "https://a.-b", "https://Example.com", "https://a_b.com", "https://a.com:443", "https://a.com:8443",
            "https://a.com/", "https://a.com?", "https://a.com#", "http://a.com", "HTTPS://a.com", "https://u@a.com",
            "https://[::1]", "https://a.com ", String(at253.dropLast()) + "ab", "https://é.com",
        ] {
            #expect(!fast(miss), "\(miss)")
        }
        // The full parser's answer for near misses the shortcut leaves: unchanged, rewritten or refused.
        #expect(try parsedUnchanged("https://a.-b"))
        expectRefusal(OriginRule.hostNumberNotIPv4) { try Origin("https://a.1") }
        #expect(try Origin("https://1.2.3.4").serialized == "https://1.2.3.4")
        #expect(try Origin("https://a.com:443").serialized == "https://a.com")
        expectRefusal(OriginRule.hostEmptyLabel) { try Origin("https://a..b") }
    }
}
