/// A zero-knowledge document of a DeviceResponse's `zkDocuments` (the EUDI ZKP specification's copy of
/// the ISO/IEC 18013-5 2nd-edition draft, as deployed verifiers read it):
/// `{ "documentData": #6.24(bstr .cbor ZkDocumentData), "proof": bstr, * tstr => RFU }`.
public struct ZkDocument: Sendable {
    /// One disclosed claim: `{ "elementIdentifier", "elementValue" }` under its namespace.
    public struct Claim: Sendable {
        public let nameSpace: String
        public let identifier: String
        /// The value as encoded (a view into the document data).
        public let value: CBORItem
    }

    /// `docType`.
    public let docType: String
    /// `zkSystemId`: the reader's spec the proof was made for.
    public let zkSystemID: String
    /// `timestamp`: tag 0 text (`YYYY-MM-DDTHH:MM:SSZ`) as written; the proof's time.
    public let timestamp: String
    /// `issuerSigned`: the disclosed claims, in document order.
    public let claims: [Claim]
    /// `deviceSigned` is present and not the empty map.
    public let hasDeviceSignedClaims: Bool
    /// `msoX5chain`: the document signer's certificate first (DER), a single bstr or an array.
    public let msoX5chain: [[UInt8]]
    /// `proof`.
    public let proof: ArraySlice<UInt8>
    /// The ZkDocumentData bytes (inside the tag 24).
    public let documentDataBytes: ArraySlice<UInt8>

    /// Reads a ZkDocument; throws `MdocDataError` naming the field at fault.
    public init(_ item: CBORItem, options: CBORDecodingOptions = .default) throws(MdocDataError) {
        _ = try item.requireMap("ZkDocument")
        proof = try item.required("proof", "ZkDocument").bytes("ZkDocument.proof")
        let (bytes, data) = try item.required("documentData", "ZkDocument").embedded(
            "ZkDocument.documentData", options: options)
        documentDataBytes = bytes
        _ = try data.requireMap("ZkDocumentData")
        docType = try data.required("docType", "ZkDocumentData").text("ZkDocumentData.docType")
        zkSystemID = try data.required("zkSystemId", "ZkDocumentData").text("ZkDocumentData.zkSystemId")
        let t = try data.required("timestamp", "ZkDocumentData")
        guard t.type == .tag, t.argument == 0, let text = t.tagContent?.stringValue else {
            throw MdocDataError(.wrongType, "ZkDocumentData.timestamp")
        }
        timestamp = text
        var claims = [Claim]()
        if let signed = data[field: "issuerSigned"] {
            _ = try signed.requireMap("ZkDocumentData.issuerSigned")
            for (k, v) in signed.mapEntries {
                let ns = try k.text("ZkNameSpaces key")
                for e in try v.array("ZkNameSpaces value", nonEmpty: true) {
                    _ = try e.requireMap("ZkSignedItem")
                    claims.append(
                        Claim(
                            nameSpace: ns,
                            identifier: try e.required("elementIdentifier", "ZkSignedItem").text(
                                "ZkSignedItem.elementIdentifier"),
                            value: try e.required("elementValue", "ZkSignedItem")))
                }
            }
        }
        self.claims = claims
        if let d = data[field: "deviceSigned"] {
            _ = try d.requireMap("ZkDocumentData.deviceSigned")
            hasDeviceSignedClaims = d.count > 0
        } else {
            hasDeviceSignedClaims = false
        }
        if let chain = data["msoX5chain"] {
            if chain.type == .array {
                msoX5chain = try chain.array("ZkDocumentData.msoX5chain", nonEmpty: true).map {
                    (c) throws(MdocDataError) in Array(try c.bytes("ZkDocumentData.msoX5chain"))
                }
            } else {
                msoX5chain = [Array(try chain.bytes("ZkDocumentData.msoX5chain"))]
            }
        } else {
            msoX5chain = []
        }
    }
}
