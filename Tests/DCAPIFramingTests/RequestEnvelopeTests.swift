import Presentment
import TestWorld
import Testing
import WebEncoding

@testable import DCAPIFraming

/// The one envelope reader of the Digital Credentials API framings, on its own: which framing, which
/// entries, and each refusal by its rule.
@Suite("DC API framing: the request envelope")
struct RequestEnvelopeTests {
    static func parse(_ text: String, bare: Bool = false) throws(PresentmentError) -> RequestEnvelope {
        let bytes = Array(text.utf8)
        var result: Result<RequestEnvelope, PresentmentError>!
        bytes.withUnsafeBufferPointer { raw in
            result = Result { () throws(PresentmentError) in
                try RequestEnvelope.parse(raw, maxBytes: 1 << 16, isBareData: { bare && $0["deviceRequest"] != nil })
            }
        }
        return try result.get()
    }

    @Test("Each framing is recognised, entries kept in order with their protocol compared byte for byte")
    func framings() throws {
        let digital = try Self.parse(
            #"{"digital":{"requests":[{"protocol":"a","data":{}},{"protocol":"org-iso-mdoc","data":"{}"}]}}"#)
        #expect(digital.framing == .digitalRequestList && digital.entries.count == 2)
        #expect(
            digital.entries[1].names(protocol: "org-iso-mdoc") && !digital.entries[0].names(protocol: "org-iso-mdoc"))
        let list = try Self.parse(#"{"requests":[{"protocol":"org-iso-md\u006fc","data":{}}]}"#)
        #expect(list.framing == .requestList && list.entries[0].names(protocol: "org-iso-mdoc"))
        // No case folding, no trimming: only the exact identifier names it.
        let near = try Self.parse(#"{"requests":[{"protocol":"ORG-ISO-MDOC"},{"protocol":"org-iso-mdoc "}]}"#)
        #expect(near.entries.allSatisfy { !$0.names(protocol: "org-iso-mdoc") })
        let single = try Self.parse(#"{"protocol":"org-iso-mdoc","data":{}}"#)
        #expect(single.framing == .protocolAndData && single.entries.count == 1)
        let bare = try Self.parse(#"{"deviceRequest":"x","encryptionInfo":"y"}"#, bare: true)
        #expect(bare.framing == .dataObject && !bare.entries[0].names(protocol: "org-iso-mdoc"))
        // Entries without a string protocol are not entries.
        let skipped = try Self.parse(#"{"requests":[{"protocol":1},"x",{"data":{}},{"protocol":"p"}]}"#)
        #expect(skipped.entries.count == 1)
    }

    @Test("A data member sent as a JSON string is parsed; one that is not JSON, or not an object, is refused")
    func dataMembers() throws {
        let e = try Self.parse(
            #"{"requests":[{"protocol":"p","data":"{\"a\":1}"},{"protocol":"p","data":"[1"},{"protocol":"p","data":[1]},{"protocol":"p"}]}"#
        ).entries
        let limits = JSONValue.Limits()
        #expect(try e[0].dataObject(limits: limits)["a"] != nil)
        expectRefusal(FramingRule.dataNotJSON) { _ = try e[1].dataObject(limits: limits) }
        expectRefusal(FramingRule.dataNotObject) { _ = try e[2].dataObject(limits: limits) }
        expectRefusal(FramingRule.dataMissing) { _ = try e[3].dataObject(limits: limits) }
    }

    @Test("Malformed envelopes are refused by their rule")
    func refusals() {
        expectRefusal(FramingRule.json) { _ = try Self.parse("{") }
        expectRefusal(FramingRule.notObject) { _ = try Self.parse("[]") }
        expectRefusal(FramingRule.digitalNotObject) { _ = try Self.parse(#"{"digital":[]}"#) }
        expectRefusal(FramingRule.requestsNotArray) { _ = try Self.parse(#"{"digital":{"requests":{}}}"#) }
        expectRefusal(FramingRule.requestsNotArray) { _ = try Self.parse(#"{"requests":"x"}"#) }
        let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
        expectRefusal(FramingRule.json) { _ = try Self.parse(#"{"requests":"# + deep + "}") }
    }
}
