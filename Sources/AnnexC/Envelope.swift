import DCAPIFraming
import Presentment
import WebEncoding

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

    /// The strict bounds of the `org-iso-mdoc` entry's `data` itself (its members are two strings;
    /// a few extension members are tolerated).
    static let dataDepth = 4
    static let dataMembers = 64

    /// Finds the framing and the two strings in `raw` (read in place; the strings are copied out).
    static func parse(_ raw: UnsafeBufferPointer<UInt8>, acceptLegacyAlias: Bool, maxBytes: Int)
        throws(PresentmentError) -> Envelope
    {
        let envelope: RequestEnvelope
        var otherProtocol = false
        do {
            envelope = try RequestEnvelope.parse(
                raw, maxBytes: maxBytes,
                isBareData: { json in
                    otherProtocol = isOpenID4VPData(json)
                    return isBareData(json)
                })
        } catch {
            // A bare data object of the other protocol is an absent entry, not a malformed one: the
            // one entry point then considers the other protocol (a selection reason, not a refusal).
            if otherProtocol && error.code != .limitExceeded { throw PresentmentError(FramingRule.noEntry) }
            throw error
        }
        func isMdoc(_ p: String?) -> Bool {
            p == protocolIdentifier || (acceptLegacyAlias && p == legacyAlias)
        }
        switch envelope.framing {
        case .dataObject:
            return try fromData(envelope.entries[0].data!, framing: .dataObject, protocolName: nil, maxBytes: maxBytes)
        case .protocolAndData:
            let entry = envelope.entries[0]
            guard isMdoc(entry.protocolIdentifier) else {
                throw PresentmentError(FramingRule.noEntry)
            }
            guard let d = entry.data else { throw PresentmentError(FramingRule.dataMissing) }
            return try fromData(
                d, framing: .protocolAndData, protocolName: entry.protocolIdentifier, maxBytes: maxBytes)
        case .requestList, .digitalRequestList:
            guard let entry = envelope.entries.first(where: { isMdoc($0.protocolIdentifier) }) else {
                throw PresentmentError(FramingRule.noEntry)
            }
            guard let d = entry.data else { throw PresentmentError(FramingRule.dataMissing) }
            return try fromData(
                d, framing: envelope.framing, protocolName: entry.protocolIdentifier, maxBytes: maxBytes)
        }
    }

    /// A bare OpenID4VP data object (its request parameters or a request object).
    static func isOpenID4VPData(_ json: JSONNode) -> Bool {
        json["response_type"] != nil || json["dcql_query"] != nil || json["request"] != nil
            || (json["payload"] != nil && json["signatures"] != nil)
    }

    /// A bare Annex C data object: it has `deviceRequest` or `encryptionInfo`.
    static func isBareData(_ json: JSONNode) -> Bool { json["deviceRequest"] != nil || json["encryptionInfo"] != nil }

    /// The two strings of an `org-iso-mdoc` entry's `data`.
    private static func fromData(_ d: JSONNode, framing: RequestFraming, protocolName: String?, maxBytes: Int)
        throws(PresentmentError) -> Envelope
    {
        // Older Chrome handed `data` as a JSON string.
        let data = try RequestEnvelope.dataObject(
            d, limits: .init(maxBytes: maxBytes, maxDepth: 4, maxMembers: 64, maxStringBytes: maxBytes))
        guard data.isObject else { throw PresentmentError(FramingRule.dataNotObject) }
        var allStrings = true
        data.forEachMember { _, v in allStrings = allStrings && v.isString }
        if !allStrings || data.count > dataMembers {
            // Only a data object with members other than strings needs its shape measured.
            let shape = data.shape
            guard shape.depth <= dataDepth else {
                throw PresentmentError(AnnexCRule.dataTooDeep)
            }
            guard shape.widest <= dataMembers else {
                throw PresentmentError(AnnexCRule.dataTooWide)
            }
        }
        guard let dr = data["deviceRequest"] else {
            throw PresentmentError(AnnexCRule.deviceRequestMissing)
        }
        guard let ei = data["encryptionInfo"] else {
            throw PresentmentError(AnnexCRule.encryptionInfoMissing)
        }
        guard let drs = dr.string else {
            throw PresentmentError(AnnexCRule.deviceRequestNotString)
        }
        guard let eis = ei.string else {
            throw PresentmentError(AnnexCRule.encryptionInfoNotString)
        }
        guard !drs.isEmpty else { throw PresentmentError(AnnexCRule.deviceRequestEmpty) }
        guard !eis.isEmpty else { throw PresentmentError(AnnexCRule.encryptionInfoEmpty) }
        return Envelope(framing: framing, protocolIdentifier: protocolName, deviceRequest: drs, encryptionInfo: eis)
    }
}
