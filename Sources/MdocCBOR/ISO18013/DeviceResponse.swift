/// DeviceResponse (ISO/IEC 18013-5 §8.3.2.1.2.2).
public struct DeviceResponse: Sendable {
    /// `version`.
    public let version: String
    /// `documents` (empty when absent).
    public let documents: [Document]
    /// `zkDocuments` (empty when absent).
    public let zkDocuments: [ZkDocument]
    /// `documentErrors`: per entry, docType → error code.
    public let documentErrors: [[(docType: String, code: Int64)]]
    /// `status` (0 OK, 10 general error, 11 CBOR decoding error, 12 CBOR validation error).
    public let status: UInt64
    /// The decoded DeviceResponse map, whose ranges point into the input buffer.
    public let item: CBORItem

    /// Parses an encoded DeviceResponse; throws `MdocDataError` naming the field and byte offset at fault.
    public init(encoded bytes: [UInt8], options: CBORDecodingOptions = .default) throws(MdocDataError) {
        try self.init(decodeTop(bytes, "DeviceResponse", options: options), options: options)
    }

    /// Parses from a decoded item.
    public init(_ item: CBORItem, options: CBORDecodingOptions = .default) throws(MdocDataError) {
        _ = try item.requireMap("DeviceResponse")
        self.item = item
        version = try item.required("version", "DeviceResponse").text("DeviceResponse.version")
        guard let v = DeviceRequest.parseVersion(version), v.major == 1 else {
            throw MdocDataError(.unsupportedVersion, "DeviceResponse.version")
        }
        status = try item.required("status", "DeviceResponse").uint("DeviceResponse.status")
        var docs = [Document]()
        if let d = item[field: "documents"] {
            for e in try d.array("DeviceResponse.documents", nonEmpty: true) {
                docs.append(try Document(e, options: options))
            }
        }
        documents = docs
        var zk = [ZkDocument]()
        if let d = item[field: "zkDocuments"] {
            for e in try d.array("DeviceResponse.zkDocuments", nonEmpty: true) {
                zk.append(try ZkDocument(e, options: options))
            }
        }
        zkDocuments = zk
        var errs = [[(docType: String, code: Int64)]]()
        if let d = item[field: "documentErrors"] {
            for e in try d.array("DeviceResponse.documentErrors", nonEmpty: true) {
                _ = try e.requireMap("DocumentError")
                var list = [(docType: String, code: Int64)]()
                for (k, v) in e.mapEntries {
                    guard let c = v.int64Value else { throw MdocDataError(.wrongType, "DocumentError value") }
                    list.append((try k.text("DocumentError key"), c))
                }
                errs.append(list)
            }
        }
        documentErrors = errs
    }
}

/// Document: `{ "docType", "issuerSigned", "deviceSigned", ? "errors" }`.
public struct Document: Sendable {
    /// The docType (not checked against the MSO here: verifiers do that).
    public let docType: String
    /// Issuer-signed data.
    public let issuerSigned: IssuerSigned
    /// Device-signed data.
    public let deviceSigned: DeviceSigned
    /// `errors`: namespace → element → code.
    public let errors: [(nameSpace: String, element: String, code: Int64)]
    /// The decoded Document map, whose ranges point into the input buffer.
    public let item: CBORItem

    init(_ item: CBORItem, options: CBORDecodingOptions) throws(MdocDataError) {
        _ = try item.requireMap("Document")
        self.item = item
        docType = try item.required("docType", "Document").text("Document.docType")
        issuerSigned = try IssuerSigned(try item.required("issuerSigned", "Document"), options: options)
        deviceSigned = try DeviceSigned(try item.required("deviceSigned", "Document"), options: options)
        var errs = [(nameSpace: String, element: String, code: Int64)]()
        if let e = item[field: "errors"] {
            _ = try e.requireMap("Document.errors")
            for (ns, m) in e.mapEntries {
                let n = try ns.text("Document.errors key")
                _ = try m.requireMap("ErrorItems")
                for (el, c) in m.mapEntries {
                    guard let code = c.int64Value else { throw MdocDataError(.wrongType, "ErrorCode") }
                    errs.append((n, try el.text("ErrorItems key"), code))
                }
            }
        }
        errors = errs
    }
}

/// DeviceSigned: `{ "nameSpaces": DeviceNameSpacesBytes, "deviceAuth": DeviceAuth }`.
public struct DeviceSigned: Sendable {
    /// How the device authenticated the response.
    public enum DeviceAuth: Sendable {
        /// `deviceSignature`: COSE_Sign1 over DeviceAuthenticationBytes (detached).
        case signature(COSESign1)
        /// `deviceMac`: COSE_Mac0 over DeviceAuthenticationBytes (detached).
        case mac(COSEMac0)
    }

    /// DeviceNameSpacesBytes exactly as received (the whole tag-24 item).
    public let nameSpacesBytes: ArraySlice<UInt8>
    /// The decoded DeviceNameSpaces map.
    public let nameSpaces: CBORItem
    /// `deviceAuth`: a deviceSignature (COSE_Sign1) or a deviceMac (COSE_Mac0), detached payload.
    public let deviceAuth: DeviceAuth

    init(_ item: CBORItem, options: CBORDecodingOptions) throws(MdocDataError) {
        _ = try item.requireMap("DeviceSigned")
        let (b, ns) = try item.required("nameSpaces", "DeviceSigned").embedded(
            "DeviceSigned.nameSpaces", options: options)
        nameSpacesBytes = b
        nameSpaces = try ns.requireMap("DeviceNameSpaces")
        let da = try item.required("deviceAuth", "DeviceSigned").requireMap("DeviceAuth")
        switch (da[field: "deviceSignature"], da[field: "deviceMac"]) {
        case (let s?, nil):
            deviceAuth = .signature(try cose("DeviceAuth.deviceSignature") { () throws(COSEError) in try COSESign1(s) })
        case (nil, let m?):
            deviceAuth = .mac(try cose("DeviceAuth.deviceMac") { () throws(COSEError) in try COSEMac0(m) })
        case (nil, nil): throw MdocDataError(.missingField, "DeviceAuth")
        default: throw MdocDataError(.invalidValue, "DeviceAuth")
        }
    }
}
