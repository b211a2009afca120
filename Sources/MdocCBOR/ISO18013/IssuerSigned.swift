internal import CryptoCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// IssuerSigned: `{ ? "nameSpaces": { + ns => [+ IssuerSignedItemBytes] }, "issuerAuth": COSE_Sign1 }`.
/// Every IssuerSignedItemBytes keeps its exact bytes: the MSO digests cover them.
public struct IssuerSigned: Sendable {
    /// One namespace and its items, in received order.
    public struct NameSpace: Sendable {
        /// The NameSpace key, e.g. `org.iso.18013.5.1`.
        public let name: String
        /// The IssuerSignedItems in received order, each with its exact bytes.
        public let items: [IssuerSignedItem]
    }

    /// Namespaces (empty when the field is absent).
    public let nameSpaces: [NameSpace]
    /// The issuer's signature over the MobileSecurityObjectBytes.
    public let issuerAuth: COSESign1
    /// The decoded IssuerSigned map, whose ranges point into the input buffer.
    public let item: CBORItem

    /// Parses encoded IssuerSigned; throws `MdocDataError` naming the field and byte offset at fault.
    public init(encoded bytes: [UInt8], options: CBORDecodingOptions = .default) throws(MdocDataError) {
        try self.init(decodeTop(bytes, "IssuerSigned", options: options), options: options)
    }

    /// Parses the IssuerSigned spanning `range` of `bytes`, in place: its items' ranges are offsets
    /// into `bytes` (a credential read from inside a larger buffer, such as a context snapshot).
    package init(encoded bytes: [UInt8], range: Range<Int>, options: CBORDecodingOptions = .default)
        throws(MdocDataError)
    {
        try self.init(decodeTop(bytes, range: range, "IssuerSigned", options: options), options: options)
    }

    /// Parses from a decoded item.
    public init(_ item: CBORItem, options: CBORDecodingOptions = .default) throws(MdocDataError) {
        _ = try item.requireMap("IssuerSigned")
        self.item = item
        var spaces = [NameSpace]()
        if let ns = item[field: "nameSpaces"] {
            _ = try ns.requireMap("IssuerSigned.nameSpaces")
            guard ns.count > 0 else { throw MdocDataError(.invalidValue, "IssuerSigned.nameSpaces") }
            for (k, v) in ns.mapEntries {
                let name = try k.text("IssuerSigned.nameSpaces key")
                spaces.append(
                    NameSpace(
                        name: name,
                        items: try IssuerSignedItem.all(
                            try v.array("IssuerSigned.nameSpaces value", nonEmpty: true), options: options)))
            }
        }
        nameSpaces = spaces
        let auth = try item.required("issuerAuth", "IssuerSigned")
        issuerAuth = try cose("IssuerSigned.issuerAuth") { () throws(COSEError) in try COSESign1(auth) }
    }

    /// Decodes the MSO carried as issuerAuth's payload (without verifying the signature).
    public func mobileSecurityObject(options: CBORDecodingOptions = .default) throws(MdocDataError)
        -> MobileSecurityObject
    {
        try MobileSecurityObject(issuerAuth: issuerAuth, options: options)
    }

    /// Checks that every item's digest (over its exact IssuerSignedItemBytes) equals the MSO's
    /// valueDigests entry for its namespace and digestID.
    public func checkValueDigests(against mso: MobileSecurityObject) throws(MdocDataError) {
        guard let alg = mso.digest else { throw MdocDataError(.invalidValue, "MobileSecurityObject.digestAlgorithm") }
        for ns in nameSpaces {
            for i in ns.items {
                guard let expected = mso.valueDigest(nameSpace: ns.name, digestID: i.digestID) else {
                    throw MdocDataError(.digestMismatch, "IssuerSignedItem.digestID")
                }
                guard alg.hash(i.bytes).elementsEqual(expected) else {
                    throw MdocDataError(.digestMismatch, "IssuerSignedItemBytes")
                }
            }
        }
    }
}

/// IssuerSignedItem: `{ "digestID": uint, "random": bstr, "elementIdentifier": tstr, "elementValue": any }`,
/// with the exact `#6.24(bstr)` bytes it arrived in.
public struct IssuerSignedItem: Sendable {
    /// IssuerSignedItemBytes exactly as received (the whole tag-24 item).
    public let bytes: ArraySlice<UInt8>
    /// digestID: the key of this item's digest in the MSO's valueDigests for its namespace.
    public let digestID: UInt64
    /// The issuer's random salt (18013-5 asks for at least 16 bytes; not checked here: the digest is).
    public let random: ArraySlice<UInt8>
    /// DataElementIdentifier, e.g. `family_name`.
    public let elementIdentifier: String
    /// DataElementValue as encoded by the issuer (a view into `bytes`).
    public let elementValue: CBORItem

    /// The items of one namespace, each a `#6.24(bstr)`: their embedded maps decoded in order onto one
    /// tape (one storage for the namespace, not one per item), then each item read from its map.
    static func all(_ tagged: CBORItem.Children, options: CBORDecodingOptions) throws(MdocDataError)
        -> [IssuerSignedItem]
    {
        var ranges = [Range<Int>]()
        for t in tagged {
            guard t.type == .tag, t.tagNumber == 24, let r = t.embeddedRange else {
                throw MdocDataError(.wrongType, "IssuerSignedItemBytes", offset: t.byteRange.lowerBound)
            }
            ranges.append(r)
        }
        let decoded: (storage: CBORStorage, roots: [Int])
        do { decoded = try CBORValidator.decodeEach(tagged.storage.bytes, ranges: ranges, options: options) } catch {
            throw MdocDataError(.cbor, "IssuerSignedItemBytes", cbor: error)
        }
        var items = [IssuerSignedItem]()
        items.reserveCapacity(ranges.count)
        for (t, root) in zip(tagged, decoded.roots) {
            items.append(
                try IssuerSignedItem(bytes: t.encodedBytes, map: CBORItem(storage: decoded.storage, index: root)))
        }
        return items
    }

    /// The item whose `#6.24(bstr)` bytes are `b` and whose embedded map is `item`.
    private init(bytes b: ArraySlice<UInt8>, map item: CBORItem) throws(MdocDataError) {
        _ = try item.requireMap("IssuerSignedItem")
        // Every field read before any is stored: no partly made item to copy out or destroy.
        let digestID = try item.required("digestID", "IssuerSignedItem").uint("IssuerSignedItem.digestID")
        let random = try item.required("random", "IssuerSignedItem").bytes("IssuerSignedItem.random")
        let identifier = try item.required("elementIdentifier", "IssuerSignedItem").text(
            "IssuerSignedItem.elementIdentifier")
        let value = try item.required("elementValue", "IssuerSignedItem")
        self.init(bytes: b, digestID: digestID, random: random, elementIdentifier: identifier, elementValue: value)
    }

    private init(
        bytes: ArraySlice<UInt8>, digestID: UInt64, random: ArraySlice<UInt8>, elementIdentifier: String,
        elementValue: CBORItem
    ) {
        self.bytes = bytes
        self.digestID = digestID
        self.random = random
        self.elementIdentifier = elementIdentifier
        self.elementValue = elementValue
    }
}
