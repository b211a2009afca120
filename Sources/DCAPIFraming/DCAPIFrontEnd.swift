#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
@_spi(FrontEnd) import Presentment
import WebEncoding

/// One entry of a Digital Credentials API request, as the facade hands it to the front end that
/// answers its protocol.
package struct RequestEntry: Sendable {
    /// How the whole request was framed (a front end answers in the matching framing by default).
    package let framing: RequestFraming
    /// The entry's `protocol` member as read (nil for a bare `data` object): compared in place, so no
    /// `String` is made to route an entry.
    private let protocolMember: JSONNode?
    /// The entry's `data` member as parsed (an object, or a string older browsers sent); nil when absent.
    package let data: JSONNode?

    /// An entry whose `protocol` member is `protocolMember` (nil for a bare `data` object; a member that
    /// is not a string names no protocol).
    package init(framing: RequestFraming, protocolMember: JSONNode?, data: JSONNode?) {
        self.framing = framing
        self.protocolMember = protocolMember
        self.data = data
    }

    /// Whether the entry's `protocol` is `identifier` (false for a bare `data` object).
    package func names(protocol identifier: String) -> Bool { protocolMember?.isString(identifier) ?? false }

    /// The `data` member, a member older browsers sent as a JSON string parsed within `limits`.
    /// Throws `FramingRule.dataMissing` or `.dataNotJSON`.
    package func parsedData(limits: JSONValue.Limits) throws(PresentmentError) -> JSONNode {
        guard let data else { throw PresentmentError(FramingRule.dataMissing) }
        // The usual `data`, an object, is returned as it is (no optional string made and dropped).
        guard data.isString else { return data }
        var text = [UInt8]()
        _ = data.withStringBytes { text = Array($0) }
        do { return try JSONDocument(text, limits: limits).root } catch {
            throw PresentmentError(FramingRule.dataNotJSON, underlying: error)
        }
    }

    /// `parsedData(limits:)`, which must be a JSON object (else `FramingRule.dataNotObject`).
    package func dataObject(limits: JSONValue.Limits) throws(PresentmentError) -> JSONNode {
        let object = try parsedData(limits: limits)
        guard object.isObject else { throw PresentmentError(FramingRule.dataNotObject) }
        return object
    }
}

/// A front end for a protocol of the Digital Credentials API: its entries arrive in the API's JSON
/// framings (`RequestEnvelope`, read once by the facade).
package protocol DCAPIFrontEnd: PresentmentFrontEnd where Entry == RequestEntry {
    /// The Digital Credentials API protocol identifiers this front end answers, with its settings (an
    /// entry whose `protocol` is one of them, byte for byte, is routed to it). The facade's registry
    /// refuses two front ends claiming one identifier.
    var protocolIdentifiers: [String] { get }

    /// Whether a top-level object without a framing member is this protocol's bare `data` object (iOS
    /// `requestData`), recognised by members only this protocol's data has.
    static func isBareData(_ json: JSONNode) -> Bool
}

/// The response envelope `{"protocol": "<identifier>", "data": <data object>}` (Android
/// `DigitalCredential`), written around a front end's data object.
package enum ResponseEnvelope {
    /// `{"protocol":"<identifier>","data":`.
    package static func prefix(protocolIdentifier: String) -> [UInt8] {
        var w = JSONWriter(capacity: protocolIdentifier.utf8.count + 24)
        w.writeRaw("{\"protocol\":")
        w.writeString(protocolIdentifier)
        w.writeRaw(",\"data\":")
        return w.bytes
    }

    /// The closing brace.
    package static let suffix = UInt8(ascii: "}")

    /// A response written once into an allocation of its exact size that becomes the returned `Data`:
    /// the envelope's opening when `protocolIdentifier` is given, a body of `bodyLength` bytes that
    /// `writeBody` writes in its place, and the envelope's closing brace. On a throw nothing is returned
    /// and the allocation is freed. An identifier with no byte JSON must escape (every registered one)
    /// is copied between the opening's two fixed pieces; any other is written by `prefix`.
    package static func response<E: Error>(
        // unsafe: the body written in place into the one allocation that becomes the returned Data.
        protocolIdentifier: String?, bodyLength: Int, _ writeBody: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(E) -> Data {
        guard var id = protocolIdentifier else {
            return try assemble(prefixLength: 0, closing: false, bodyLength: bodyLength, { _ in }, writeBody)
        }
        let plain = id.withUTF8 { u in
            u.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        }
        guard plain else {
            let prefix = self.prefix(protocolIdentifier: id)
            return try assemble(
                prefixLength: prefix.count, closing: true, bodyLength: bodyLength,
                // unsafe: the envelope's opening copied into place.
                { p in prefix.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }, writeBody
            )
        }
        let open: StaticString = "{\"protocol\":\""
        let close: StaticString = "\",\"data\":"
        let n = id.utf8.count  // O(1) for a native string
        return try assemble(
            prefixLength: open.utf8CodeUnitCount + n + close.utf8CodeUnitCount, closing: true, bodyLength: bodyLength,
            { p in
                p.copyMemory(from: open.utf8Start, byteCount: open.utf8CodeUnitCount)
                id.withUTF8 { u in
                    if let b = u.baseAddress {
                        p.advanced(by: open.utf8CodeUnitCount).copyMemory(from: b, byteCount: n)
                    }
                }
                p.advanced(by: open.utf8CodeUnitCount + n).copyMemory(
                    from: close.utf8Start, byteCount: close.utf8CodeUnitCount)
            }, writeBody)
    }

    /// Allocates the response, has `writePrefix` fill its first `prefixLength` bytes and `writeBody` the
    /// next `bodyLength`, closes the envelope when `closing`, and hands the allocation to `Data`.
    private static func assemble<E: Error>(
        // unsafe: the one allocation, handed out as views of its pieces; freed on a throw.
        prefixLength: Int, closing: Bool, bodyLength: Int, _ writePrefix: (UnsafeMutableRawPointer) -> Void,
        _ writeBody: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(E) -> Data {
        let total = prefixLength + bodyLength + (closing ? 1 : 0)
        // unsafe: allocated at its exact size and given to Data without a copy.
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: total, alignment: 1)
        writePrefix(out.baseAddress!)
        do {
            // unsafe: the body's part of the allocation.
            try writeBody(UnsafeMutableRawBufferPointer(rebasing: out[prefixLength..<prefixLength + bodyLength]))
        } catch {
            out.deallocate()
            throw error
        }
        if closing { out[total - 1] = suffix }
        return Data(bytesNoCopy: out.baseAddress!, count: total, deallocator: .custom { p, _ in p.deallocate() })
    }

    /// `response(protocolIdentifier:bodyLength:_:)` with the body a data object holding one string,
    /// `{"response":"<text>"}` (Annex C's base64url EncryptedResponse, OpenID4VP's JWE): `writeText`
    /// writes the `textLength` bytes of the string's content, which need no escaping.
    package static func responseString<E: Error>(
        // unsafe: the text written in place into the response.
        protocolIdentifier: String?, textLength: Int, _ writeText: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(E) -> Data {
        let open: StaticString = "{\"response\":\""
        let n = open.utf8CodeUnitCount
        return try response(protocolIdentifier: protocolIdentifier, bodyLength: n + textLength + 2) {
            body throws(E) in
            // unsafe: a literal's bytes copied into place.
            body.copyMemory(from: UnsafeRawBufferPointer(start: open.utf8Start, count: n))
            try writeText(UnsafeMutableRawBufferPointer(rebasing: body[n..<n + textLength]))
            body[n + textLength] = UInt8(ascii: "\"")
            body[n + textLength + 1] = UInt8(ascii: "}")
        }
    }
}
