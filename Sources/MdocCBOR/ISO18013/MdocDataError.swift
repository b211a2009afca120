/// A structural error in an ISO/IEC 18013-5 structure, in the module's one error shape: a closed
/// `code`, the structure and field as static text, and where known the byte `offset` of the offending
/// item in the decoded input. Never carries a value from the input.
public struct MdocDataError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The rule broken.
    public enum Code: String, Sendable, Hashable {
        /// The bytes are not well-formed CBOR (see `cbor`).
        case cbor
        /// A required field is absent.
        case missingField
        /// A field has the wrong CBOR type.
        case wrongType
        /// A field has a value outside what the structure allows (e.g. an empty list that must be non-empty).
        case invalidValue
        /// The structure's version is not supported.
        case unsupportedVersion
        /// A COSE structure inside is malformed (see `cose`).
        case cose
        /// A date is not a valid RFC 3339 tdate (tag 0) or full-date (tag 1004).
        case invalidDate
        /// An issuer-signed item does not match its digest in the MSO.
        case digestMismatch
    }

    /// The rule broken.
    public let code: Code
    /// The structure and field, e.g. `ItemsRequest.docType`.
    public let field: String
    /// The CBOR error, for `.cbor`.
    public let cbor: CBORError?
    /// The COSE error, for `.cose`.
    public let cose: COSEError?
    /// Byte offset in the decoded input of the item that broke the rule (or of the CBOR or COSE
    /// error), when known.
    public let offset: Int?

    /// Creates an error.
    public init(_ code: Code, _ field: String, cbor: CBORError? = nil, cose: COSEError? = nil, offset: Int? = nil) {
        self.code = code
        self.field = field
        self.cbor = cbor
        self.cose = cose
        self.offset = offset ?? cbor?.offset ?? cose?.offset
    }

    /// Equal when the rule is: code, field and any underlying CBOR or COSE error (the offset says
    /// where, not what).
    public static func == (a: MdocDataError, b: MdocDataError) -> Bool {
        a.code == b.code && a.field == b.field && a.cbor == b.cbor && a.cose == b.cose
    }

    /// Hashes what `==` compares.
    public func hash(into h: inout Hasher) {
        h.combine(code)
        h.combine(field)
    }

    /// One line naming the structure, field and rule.
    public var description: String {
        var s = "\(field): \(code.rawValue)"
        if let cbor { s += " (\(cbor))" }
        if let cose { s += " (\(cose))" }
        if cbor == nil, cose == nil, let offset { s += " at byte \(offset)" }
        return s
    }
}

extension CBORItem {
    func requireMap(_ field: String) throws(MdocDataError) -> CBORItem {
        guard type == .map else { throw MdocDataError(.wrongType, field, offset: byteRange.lowerBound) }
        return self
    }

    func required(_ key: StaticString, _ structure: String) throws(MdocDataError) -> CBORItem {
        guard let v = self[field: key] else {
            throw MdocDataError(.missingField, "\(structure).\(key)", offset: byteRange.lowerBound)
        }
        return v
    }

    func text(_ field: String) throws(MdocDataError) -> String {
        guard let s = stringValue else { throw MdocDataError(.wrongType, field, offset: byteRange.lowerBound) }
        return s
    }

    func uint(_ field: String) throws(MdocDataError) -> UInt64 {
        guard let v = unsignedValue else { throw MdocDataError(.wrongType, field, offset: byteRange.lowerBound) }
        return v
    }

    func bool(_ field: String) throws(MdocDataError) -> Bool {
        guard let v = boolValue else { throw MdocDataError(.wrongType, field, offset: byteRange.lowerBound) }
        return v
    }

    func bytes(_ field: String) throws(MdocDataError) -> ArraySlice<UInt8> {
        guard let v = byteStringSlice else { throw MdocDataError(.wrongType, field, offset: byteRange.lowerBound) }
        return v
    }

    func array(_ field: String, nonEmpty: Bool = false) throws(MdocDataError) -> Children {
        guard type == .array else { throw MdocDataError(.wrongType, field, offset: byteRange.lowerBound) }
        if nonEmpty && count == 0 { throw MdocDataError(.invalidValue, field, offset: byteRange.lowerBound) }
        return children
    }

    /// A `#6.24(bstr .cbor X)` item: returns the whole item's bytes and the decoded embedded item.
    func embedded(_ field: String, options: CBORDecodingOptions) throws(MdocDataError) -> (
        bytes: ArraySlice<UInt8>, item: CBORItem
    ) {
        guard type == .tag, tagNumber == 24, embeddedRange != nil else {
            throw MdocDataError(.wrongType, field, offset: byteRange.lowerBound)
        }
        do {
            let doc = try decodeEmbedded(options: options)
            return (encodedBytes, doc.root)
        } catch {
            throw MdocDataError(.cbor, field, cbor: error)
        }
    }
}

func decodeTop(_ bytes: [UInt8], _ structure: String, options: CBORDecodingOptions) throws(MdocDataError) -> CBORItem {
    try decodeTop(bytes, range: 0..<bytes.count, structure, options: options)
}

/// `decodeTop` of the item spanning `range` of `bytes` (its ranges are offsets into `bytes`).
func decodeTop(_ bytes: [UInt8], range: Range<Int>, _ structure: String, options: CBORDecodingOptions)
    throws(MdocDataError) -> CBORItem
{
    do { return try CBORDocument(decoding: bytes, range: range, options: options).root } catch {
        throw MdocDataError(.cbor, structure, cbor: error)
    }
}

func cose<T>(_ field: String, _ body: () throws(COSEError) -> T) throws(MdocDataError) -> T {
    do { return try body() } catch { throw MdocDataError(.cose, field, cose: error) }
}
