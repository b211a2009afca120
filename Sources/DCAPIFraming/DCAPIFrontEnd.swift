@_spi(FrontEnd) import Presentment
import WebEncoding

/// One entry of a Digital Credentials API request, as the facade hands it to the front end that
/// answers its protocol.
package struct RequestEntry: Sendable {
    /// How the whole request was framed (a front end answers in the matching framing by default).
    package let framing: RequestFraming
    /// The entry's `protocol` member; nil for a bare `data` object.
    package let protocolIdentifier: String?
    /// The entry's `data` member as parsed (an object, or a string older browsers sent); nil when absent.
    package let data: JSONNode?

    package init(framing: RequestFraming, protocolIdentifier: String?, data: JSONNode?) {
        self.framing = framing
        self.protocolIdentifier = protocolIdentifier
        self.data = data
    }

    /// The `data` member, a member older browsers sent as a JSON string parsed within `limits`.
    /// Throws `FramingRule.dataMissing` or `.dataNotJSON`.
    package func parsedData(limits: JSONValue.Limits) throws(PresentmentError) -> JSONNode {
        guard let data else { throw PresentmentError(FramingRule.dataMissing) }
        guard let s = data.string else { return data }
        do { return try JSONDocument(Array(s.utf8), limits: limits).root } catch {
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
}
