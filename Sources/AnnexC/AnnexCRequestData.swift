import DCAPIFraming
import Presentment
import WebEncoding

/// The `data` member of an `org-iso-mdoc` entry (ISO/IEC 18013-7 Annex C §C.2): its two base64url
/// strings exactly as received.
struct AnnexCRequestData: Sendable {
    /// `deviceRequest` as received (a JSON string: decoded from the request's own bytes, no `String` made).
    let deviceRequest: JSONNode
    /// `encryptionInfo` as received (a JSON string, hashed verbatim into the transcript; no `String` made).
    let encryptionInfo: JSONNode

    /// The strict bounds of the entry's `data` itself (its members are two strings; a few extension
    /// members are tolerated).
    static let dataDepth = 4
    static let dataMembers = 64

    /// A bare Annex C data object: it has `deviceRequest` or `encryptionInfo`.
    static func isBareData(_ json: JSONNode) -> Bool {
        json.containsKey { $0.spells("deviceRequest") || $0.spells("encryptionInfo") }
    }

    /// Reads the two strings of an entry's `data` (older Chrome sent `data` as a JSON string).
    init(_ entry: RequestEntry, maxBytes: Int) throws(PresentmentError) {
        let data = try entry.dataObject(
            limits: .init(
                maxBytes: maxBytes, maxDepth: Self.dataDepth, maxMembers: Self.dataMembers, maxStringBytes: maxBytes))
        var allStrings = true
        data.forEachMember { _, v in allStrings = allStrings && v.isString }
        if !allStrings || data.count > Self.dataMembers {
            // Only a data object with members other than strings needs its shape measured.
            let shape = data.shape
            guard shape.depth <= Self.dataDepth else { throw PresentmentError(AnnexCRule.dataTooDeep) }
            guard shape.widest <= Self.dataMembers else { throw PresentmentError(AnnexCRule.dataTooWide) }
        }
        guard let dr = data["deviceRequest"] else { throw PresentmentError(AnnexCRule.deviceRequestMissing) }
        guard let ei = data["encryptionInfo"] else { throw PresentmentError(AnnexCRule.encryptionInfoMissing) }
        guard dr.isString else { throw PresentmentError(AnnexCRule.deviceRequestNotString) }
        guard ei.isString else { throw PresentmentError(AnnexCRule.encryptionInfoNotString) }
        // Decided without unescaping (the front end decodes each string once, later).
        guard !dr.isEmptyString else { throw PresentmentError(AnnexCRule.deviceRequestEmpty) }
        guard !ei.isEmptyString else { throw PresentmentError(AnnexCRule.encryptionInfoEmpty) }
        deviceRequest = dr
        encryptionInfo = ei
    }
}
