import Presentment
import WebEncoding

/// The one reader of the request framings, shared by every front end: the framing and, in order,
/// each entry's protocol identifier and `data` member. Entries that are not objects, or whose
/// `protocol` is not a string, are skipped (pages send every protocol they speak in one call, in
/// shapes this engine need not understand); an entry's `data` is kept as parsed, or nil when absent.
/// Which protocol an entry is for, and what its `data` must contain, is each front end's business.
package struct RequestEnvelope: Sendable {
    /// The framing found.
    package let framing: RequestFraming
    /// The entries, in order (exactly one for `.dataObject` and `.protocolAndData`).
    package let entries: [RequestEntry]

    /// Bounds for the whole envelope. Pages send every protocol they speak in one call, and an
    /// OpenID4VP entry's DCQL query nests 10 to 20 levels deep with arrays of claims: the envelope
    /// is read within the overall size limit and these generous bounds; each front end then applies
    /// its own, stricter bounds to its entry.
    package static let maxDepth = 64
    package static let maxMembers = 1024

    /// Reads `raw` in place.
    /// - Parameter isBareData: whether a top-level object without a framing member is a protocol's
    ///   data object (e.g. it has Annex C's `deviceRequest`).
    /// - Throws: a `FramingRule` refusal.
    package static func parse(
        // unsafe: the caller's buffer read in place (no copy of the request).
        _ raw: UnsafeBufferPointer<UInt8>, maxBytes: Int, isBareData: (JSONNode) -> Bool
    ) throws(PresentmentError) -> RequestEnvelope {
        let json: JSONNode
        do {
            json = try JSONDocument(
                raw,
                limits: .init(maxBytes: maxBytes, maxDepth: maxDepth, maxMembers: maxMembers, maxStringBytes: maxBytes)
            ).root
        } catch {
            if raw.count > maxBytes { throw PresentmentError(FramingRule.tooLarge) }
            throw PresentmentError(FramingRule.json, underlying: error)
        }
        guard json.isObject else { throw PresentmentError(FramingRule.notObject) }
        func list(_ value: JSONNode?, _ framing: RequestFraming) throws(PresentmentError) -> [RequestEntry] {
            guard let value, value.isArray else { throw PresentmentError(FramingRule.requestsNotArray) }
            var out = [RequestEntry]()
            value.forEachElement { item in
                guard item.isObject, let p = item["protocol"], p.isString else { return }
                out.append(RequestEntry(framing: framing, protocolMember: p, data: item["data"]))
            }
            return out
        }
        if isBareData(json) {
            return RequestEnvelope(
                framing: .dataObject, entries: [RequestEntry(framing: .dataObject, protocolMember: nil, data: json)]
            )
        }
        if let digital = json["digital"] {
            guard digital.isObject else { throw PresentmentError(FramingRule.digitalNotObject) }
            return RequestEnvelope(
                framing: .digitalRequestList, entries: try list(digital["requests"], .digitalRequestList))
        }
        if json["requests"] != nil {
            return RequestEnvelope(framing: .requestList, entries: try list(json["requests"], .requestList))
        }
        if let p = json["protocol"] {
            // A `protocol` that is not a string names no protocol: every front end declines the entry.
            return RequestEnvelope(
                framing: .protocolAndData,
                entries: [
                    RequestEntry(framing: .protocolAndData, protocolMember: p, data: json["data"])
                ])
        }
        throw PresentmentError(FramingRule.noFraming)
    }
}
