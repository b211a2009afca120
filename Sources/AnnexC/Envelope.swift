import WebEncoding

/// The JSON framings a raw request arrives in.
public enum RequestFraming: String, Sendable, Hashable, CaseIterable {
    /// `{"deviceRequest", "encryptionInfo"}`: the `data` object (iOS `requestData`).
    case dataObject
    /// `{"protocol": "org-iso-mdoc", "data": {...}}`.
    case protocolAndData
    /// `{"requests": [{"protocol", "data"}, ...]}` (Android Credential Manager `requestJson`).
    case requestList
    /// `{"digital": {"requests": [...]}}` (the page's `navigator.credentials.get` argument).
    case digitalRequestList
}

/// The two base64url strings of an Annex C request, exactly as received, and where they came from.
struct Envelope: Sendable {
    let framing: RequestFraming
    /// The protocol identifier found (nil for the bare data object).
    let protocolIdentifier: String?
    /// `deviceRequest` as received.
    let deviceRequest: String
    /// `encryptionInfo` as received (hashed verbatim into the transcript).
    let encryptionInfo: String

    static let protocolIdentifier = "org-iso-mdoc"
    static let legacyAlias = "org.iso.mdoc"

    /// The bounds for the whole envelope. Pages send every protocol they speak in one call, and an
    /// OpenID4VP entry's DCQL query nests 10 to 20 levels deep with arrays of claims: entries of other
    /// protocols are skipped whatever their shape, within the overall size limit and these generous bounds.
    static let envelopeDepth = 64
    static let envelopeMembers = 1024
    /// The strict bounds of the `org-iso-mdoc` entry's `data` itself (its members are two strings;
    /// a few extension members are tolerated).
    static let dataDepth = 4
    static let dataMembers = 64

    /// Finds the framing and the two strings in `raw` (read in place; the strings are copied out).
    static func parse(_ raw: UnsafeBufferPointer<UInt8>, acceptLegacyAlias: Bool, maxBytes: Int)
        throws(PresentmentError) -> Envelope
    {
        let json: JSONValue
        do {
            json = try JSONValue.parse(
                raw,
                limits: .init(
                    maxBytes: maxBytes, maxDepth: envelopeDepth, maxMembers: envelopeMembers, maxStringBytes: maxBytes))
        } catch {
            if raw.count > maxBytes {
                throw PresentmentError(.limitExceeded, "request larger than the configured maximum")
            }
            throw PresentmentError(.malformedRequest, error.what)
        }
        guard case .object = json else { throw PresentmentError(.malformedRequest, "request is not a JSON object") }

        func isMdoc(_ p: JSONValue?) -> String? {
            guard let s = p?.string else { return nil }
            if s == protocolIdentifier || (acceptLegacyAlias && s == legacyAlias) { return s }
            return nil
        }
        func fromData(_ d: JSONValue, framing: RequestFraming, protocolName: String?) throws(PresentmentError)
            -> Envelope
        {
            var data = d
            if case .string(let s) = d {
                // Older Chrome handed `data` as a JSON string.
                do {
                    data = try JSONValue.parse(
                        Array(s.utf8),
                        limits: .init(maxBytes: maxBytes, maxDepth: 4, maxMembers: 64, maxStringBytes: maxBytes))
                } catch {
                    throw PresentmentError(.malformedRequest, "data string is not JSON")
                }
            }
            guard case .object = data else { throw PresentmentError(.malformedRequest, "data is not a JSON object") }
            if case .object(let members) = data,
                !members.allSatisfy({ if case .string = $0.1 { true } else { false } }) || members.count > dataMembers
            {
                // Only a data object with members other than strings needs its shape measured.
                let shape = data.shape
                guard shape.depth <= dataDepth else {
                    throw PresentmentError(.malformedRequest, "org-iso-mdoc data nested too deeply")
                }
                guard shape.widest <= dataMembers else {
                    throw PresentmentError(.malformedRequest, "org-iso-mdoc data has too many members")
                }
            }
            guard let dr = data["deviceRequest"] else {
                throw PresentmentError(.malformedRequest, "data.deviceRequest missing")
            }
            guard let ei = data["encryptionInfo"] else {
                throw PresentmentError(.malformedRequest, "data.encryptionInfo missing")
            }
            guard let drs = dr.string else {
                throw PresentmentError(.malformedRequest, "data.deviceRequest is not a string")
            }
            guard let eis = ei.string else {
                throw PresentmentError(.malformedRequest, "data.encryptionInfo is not a string")
            }
            guard !drs.isEmpty else { throw PresentmentError(.malformedRequest, "data.deviceRequest is empty") }
            guard !eis.isEmpty else { throw PresentmentError(.malformedRequest, "data.encryptionInfo is empty") }
            return Envelope(framing: framing, protocolIdentifier: protocolName, deviceRequest: drs, encryptionInfo: eis)
        }
        func fromList(_ list: JSONValue?, framing: RequestFraming) throws(PresentmentError) -> Envelope {
            guard case .array(let entries)? = list else {
                throw PresentmentError(.malformedRequest, "requests is not an array")
            }
            // Entries of other protocols, or of no recognisable shape, are skipped.
            for e in entries {
                guard case .object = e else { continue }
                if let p = isMdoc(e["protocol"]) {
                    guard let d = e["data"] else {
                        throw PresentmentError(.malformedRequest, "requests entry lacks data")
                    }
                    return try fromData(d, framing: framing, protocolName: p)
                }
            }
            throw PresentmentError(.unsupportedProtocol, "no org-iso-mdoc entry in requests")
        }

        if json["deviceRequest"] != nil || json["encryptionInfo"] != nil {
            return try fromData(json, framing: .dataObject, protocolName: nil)
        }
        if let digital = json["digital"] {
            guard case .object = digital else { throw PresentmentError(.malformedRequest, "digital is not an object") }
            return try fromList(digital["requests"], framing: .digitalRequestList)
        }
        if json["requests"] != nil {
            return try fromList(json["requests"], framing: .requestList)
        }
        if let p = json["protocol"] {
            guard let name = isMdoc(p) else {
                throw PresentmentError(.unsupportedProtocol, "protocol is not org-iso-mdoc")
            }
            guard let d = json["data"] else { throw PresentmentError(.malformedRequest, "data missing") }
            return try fromData(d, framing: .protocolAndData, protocolName: name)
        }
        throw PresentmentError(.malformedRequest, "no recognised request framing")
    }
}
