import Foundation
import Testing
import TestSupport
@testable import MdocCBOR

/// DeviceRequest versions, the ItemsRequest element table and its rules, and the error shape.
extension DataModelTests {
    @Test("DeviceRequest versions: \"<major>.<minor>\", ASCII digits only, one to four each")
    func versionStrings() {
        let good: [(String, Int, Int)] = [
            ("1.0", 1, 0), ("1.1", 1, 1), ("10.25", 10, 25), ("0001.0001", 1, 1), ("9999.9999", 9999, 9999),
        ]
        for (s, major, minor) in good {
            let v = DeviceRequest.parseVersion(s)
            #expect(v?.major == major && v?.minor == minor, "\(s)")
        }
        for s in [
            "", "1", "1.", ".1", "1..0", "1.0.0", "+1.0", "-1.0", "1.-0", "1.0 ", " 1.0", "12345.0", "1.12345", "1,0",
            "\u{661}.\u{660}", "1.0\u{0}",
        ] {
            #expect(DeviceRequest.parseVersion(s) == nil, "\(s.debugDescription)")
        }
    }
    @Test(
        "ItemsRequest's element table: received order, namespaces grouped, chunked keys joined, same view from nameSpaces and forEachElement"
    )
    func itemsRequestElementTable() throws {
        // Hand-encoded so that keys can be indefinite-length text: "org.iso.18013.5.1" (definite) with
        // family_name (definite, true) and a chunked "age_" "over_18" (false); a chunked namespace
        // "x." "ns" with one chunked element "e" "1" (true).
        var w = CBORWriter()
        w.writeMapHeader(count: 2)
        w.writeText("docType")
        w.writeText(Self.docType)
        w.writeText("nameSpaces")
        w.writeMapHeader(count: 2)
        w.writeText(Self.ns)
        w.writeMapHeader(count: 2)
        w.writeText("family_name")
        w.writeBool(true)
        w.writeRaw([0x7f])
        w.writeText("age_")
        w.writeText("over_18")
        w.writeRaw([0xff])
        w.writeBool(false)
        w.writeRaw([0x7f])
        w.writeText("x.")
        w.writeText("ns")
        w.writeRaw([0xff])
        w.writeMapHeader(count: 1)
        w.writeRaw([0x7f])
        w.writeText("e")
        w.writeText("1")
        w.writeRaw([0xff])
        w.writeBool(true)
        let items = CBORValue.tagged(24, .bytes(w.bytes)).encoded()
        let r = try DeviceRequest(encoded: Self.request(version: "1.0", docRequests: [items]))
        let ir = r.docRequests[0].itemsRequest
        #expect(ir.elementCount == 3)
        let spaces = ir.nameSpaces
        #expect(spaces.map(\.name) == [Self.ns, "x.ns"])
        #expect(
            spaces[0].elements == [
                .init(identifier: "family_name", intentToRetain: true),
                .init(identifier: "age_over_18", intentToRetain: false),
            ])
        #expect(spaces[1].elements == [.init(identifier: "e1", intentToRetain: true)])
        var seen = [(String, String, Bool)]()
        ir.forEachElement { ns, id, retain in
            seen.append((String(decoding: ns, as: UTF8.self), String(decoding: id, as: UTF8.self), retain))
        }
        #expect(
            seen.map { "\($0.0)/\($0.1)/\($0.2)" } == [
                "\(Self.ns)/family_name/true", "\(Self.ns)/age_over_18/false", "x.ns/e1/true",
            ])
        // Definite keys only: the table points into the request's own buffer (no copy).
        let plain = try DeviceRequest(
            encoded: Self.request(version: "1.0", docRequests: [Self.itemsRequest(["a", "b", "c"])]))
        let pir = plain.docRequests[0].itemsRequest
        #expect(
            pir.names.withUnsafeBufferPointer { $0.baseAddress }
                == pir.item.buffer.withUnsafeBufferPointer { $0.baseAddress })
        #expect(pir.nameSpaces.flatMap(\.elements).map(\.identifier) == ["a", "b", "c"])
    }

    @Test("ItemsRequest nameSpaces rules: text keys, non-empty maps of text keys to booleans")
    func itemsRequestRules() {
        func attempt(_ nameSpaces: CBORValue) -> MdocDataError? {
            let items = CBORValue.embedded(
                .map([.init(.text("docType"), .text("d")), .init(.text("nameSpaces"), nameSpaces)])
            ).encoded()
            do {
                _ = try DeviceRequest(encoded: Self.request(version: "1.0", docRequests: [items]))
                return nil
            } catch { return error }
        }
        #expect(
            attempt(.map([.init(.unsigned(1), .map([.init(.text("e"), .bool(true))]))]))
                == MdocDataError(.wrongType, "ItemsRequest.nameSpaces key"))
        #expect(
            attempt(.map([.init(.text("n"), .array([]))])) == MdocDataError(.wrongType, "ItemsRequest.nameSpaces value")
        )
        #expect(
            attempt(.map([.init(.text("n"), .map([]))]))
                == MdocDataError(.invalidValue, "ItemsRequest.nameSpaces value"))
        #expect(
            attempt(.map([.init(.text("n"), .map([.init(.bytes([0x65]), .bool(true))]))]))
                == MdocDataError(.wrongType, "DataElementIdentifier"))
        #expect(
            attempt(.map([.init(.text("n"), .map([.init(.text("e"), .null)]))]))
                == MdocDataError(.wrongType, "IntentToRetain"))
        #expect(attempt(.array([])) == MdocDataError(.wrongType, "ItemsRequest.nameSpaces"))
        // The first rule broken, in received order, is the one reported (the encoder sorts keys: the
        // text key comes before the array key).
        #expect(
            attempt(.map([.init(.text("n"), .map([.init(.text("e"), .unsigned(0))])), .init(.array([]), .map([]))]))
                == MdocDataError(.wrongType, "IntentToRetain"))
        #expect(
            attempt(.map([.init(.text("n"), .map([.init(.text("e"), .bool(true))])), .init(.array([]), .map([]))]))
                == MdocDataError(.wrongType, "ItemsRequest.nameSpaces key"))
        #expect(
            attempt(
                .map([
                    .init(.text("n"), .map([.init(.text("e"), .bool(true))])),
                    .init(.text("m"), .map([.init(.text("f"), .bool(false))])),
                ])) == nil)
    }

    @Test(
        "One error shape: data-model and COSE errors carry a closed code, the rule, and the byte offset of what broke it"
    )
    func errorOffsets() throws {
        // {"version": "1.0", "docRequests": {}}: docRequests' value (a map, not an array) starts at byte 25.
        let bytes: [UInt8] =
            [0xa2, 0x67] + Array("version".utf8) + [0x63] + Array("1.0".utf8) + [0x6b] + Array("docRequests".utf8) + [
                0xa0
            ]
        do {
            _ = try DeviceRequest(encoded: bytes)
            Issue.record("accepted")
        } catch {
            #expect(
                error.code == .wrongType && error.field == "DeviceRequest.docRequests" && error.offset == 25, "\(error)"
            )
            #expect(error.description == "DeviceRequest.docRequests: wrongType at byte 25")
        }
        // A missing field names the map that lacks it (at byte 0).
        do {
            _ = try DeviceRequest(encoded: [0xa0])
            Issue.record("accepted")
        } catch {
            #expect(error.code == .missingField && error.offset == 0, "\(error)")
        }
        // A COSE_Sign1 cut short: the CBOR error's offset travels up.
        let sign1: [UInt8] = [0x84, 0x43, 0xa1, 0x01, 0x26, 0xa0, 0xf6, 0x58, 0x40, 0x01]
        do {
            _ = try COSESign1(encoded: sign1)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .cbor && error.cbor?.code == .truncated && error.offset != nil, "\(error)")
        }
        do {
            _ = try COSESign1(encoded: [0x83, 0x40, 0xa0, 0xf6])
            Issue.record("accepted")
        } catch {
            #expect(error == .malformed("COSE_Sign1 is not an array of 4") && error.code == .malformed)
        }
    }
}
