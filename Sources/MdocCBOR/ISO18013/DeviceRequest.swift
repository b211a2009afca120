/// DeviceRequest (ISO/IEC 18013-5 §8.3.2.1.2.1; 2nd edition adds version 1.1 with
/// `deviceRequestInfo` and `readerAuthAll`). A zero-copy view: ItemsRequestBytes and
/// DeviceRequestInfoBytes keep their exact received bytes for reader authentication.
public struct DeviceRequest: Sendable {
    /// The `version` string as received ("1.0", "1.1").
    public let version: String
    /// Major and minor version numbers.
    public let versionNumber: (major: Int, minor: Int)
    /// The document requests, in order.
    public let docRequests: [DocRequest]
    /// `deviceRequestInfo` (honoured only when the version is at least 1.1; nil otherwise).
    public let deviceRequestInfo: DeviceRequestInfo?
    /// `readerAuthAll` signatures (only when the version is at least 1.1; empty otherwise).
    public let readerAuthAll: [COSESign1]
    /// True when the request carried 1.1-only fields that were ignored because the version is 1.0.
    public let ignoredNewerFields: Bool
    /// The decoded DeviceRequest map, whose ranges point into the input buffer.
    public let item: CBORItem

    /// The versions this view understands (major 1).
    public static let supportedMajorVersion = 1

    /// True when the version is at least 1.1.
    public var isVersion11OrLater: Bool { versionNumber.major > 1 || versionNumber.minor >= 1 }

    /// Parses a DeviceRequest from its encoding.
    public init(encoded bytes: [UInt8], options: CBORDecodingOptions = .default) throws(MdocDataError) {
        try self.init(decodeTop(bytes, "DeviceRequest", options: options), options: options)
    }

    /// Parses a DeviceRequest from a decoded item.
    public init(_ item: CBORItem, options: CBORDecodingOptions = .default) throws(MdocDataError) {
        _ = try item.requireMap("DeviceRequest")
        self.item = item
        version = try item.required("version", "DeviceRequest").text("DeviceRequest.version")
        guard let v = Self.parseVersion(version), v.major == Self.supportedMajorVersion else {
            throw MdocDataError(.unsupportedVersion, "DeviceRequest.version")
        }
        versionNumber = v
        var requests = [DocRequest]()
        for r in try item.required("docRequests", "DeviceRequest").array("DeviceRequest.docRequests", nonEmpty: true) {
            requests.append(try DocRequest(r, options: options))
        }
        docRequests = requests
        let newer = v.minor >= 1
        let infoItem = item[field: "deviceRequestInfo"]
        let allItem = item[field: "readerAuthAll"]
        ignoredNewerFields = !newer && (infoItem != nil || allItem != nil)
        if newer, let infoItem {
            deviceRequestInfo = try DeviceRequestInfo(infoItem, options: options)
        } else {
            deviceRequestInfo = nil
        }
        if newer, let allItem {
            var sigs = [COSESign1]()
            for s in try allItem.array("DeviceRequest.readerAuthAll", nonEmpty: true) {
                sigs.append(try cose("DeviceRequest.readerAuthAll") { () throws(COSEError) in try COSESign1(s) })
            }
            readerAuthAll = sigs
        } else {
            readerAuthAll = []
        }
        if let info = deviceRequestInfo {
            for uc in info.useCases {
                for set in uc.documentSets where set.contains(where: { $0 >= requests.count }) {
                    throw MdocDataError(.invalidValue, "UseCase.documentSets")
                }
            }
        }
    }

    /// Parses `"<major>.<minor>"` (digits only, no sign, no leading '+').
    public static func parseVersion(_ s: String) -> (major: Int, minor: Int)? {
        // The two parts read in place (no split, no arrays: this runs on every request).
        var s = s
        return s.withUTF8 { u in
            guard let dot = u.firstIndex(of: UInt8(ascii: ".")),
                let major = number(UnsafeBufferPointer(rebasing: u[..<dot])),
                let minor = number(UnsafeBufferPointer(rebasing: u[(dot + 1)...]))
            else { return nil }
            return (major, minor)
        }
    }

    /// One to four ASCII digits as a number (a second dot, a sign or anything else: nil).
    private static func number(_ digits: UnsafeBufferPointer<UInt8>) -> Int? {
        guard (1...4).contains(digits.count) else { return nil }
        var v = 0
        for c in digits {
            guard c >= 0x30, c <= 0x39 else { return nil }
            v = v * 10 + Int(c - 0x30)
        }
        return v
    }
}

/// One DocRequest: `{ "itemsRequest": ItemsRequestBytes, ? "readerAuth": COSE_Sign1 }`.
public struct DocRequest: Sendable {
    /// ItemsRequestBytes exactly as received: the whole `#6.24(bstr)` item.
    public let itemsRequestBytes: ArraySlice<UInt8>
    /// The ItemsRequest decoded from `itemsRequestBytes` (views into the same buffer).
    public let itemsRequest: ItemsRequest
    /// The reader's signature over ReaderAuthentication, if present.
    public let readerAuth: COSESign1?

    init(_ item: CBORItem, options: CBORDecodingOptions) throws(MdocDataError) {
        _ = try item.requireMap("DocRequest")
        let (bytes, inner) = try item.required("itemsRequest", "DocRequest").embedded(
            "DocRequest.itemsRequest", options: options)
        itemsRequestBytes = bytes
        itemsRequest = try ItemsRequest(inner)
        if let ra = item[field: "readerAuth"] {
            readerAuth = try cose("DocRequest.readerAuth") { () throws(COSEError) in try COSESign1(ra) }
        } else {
            readerAuth = nil
        }
    }
}

/// ItemsRequest: `{ "docType": tstr, "nameSpaces": { + ns => { + elem => IntentToRetain } }, ? "requestInfo": … }`.
///
/// The requested elements are kept as one flat table of byte ranges over the request's own buffer
/// (no `String` per element): `forEachElement` hands them out without allocating, and `nameSpaces`
/// builds the typed lists when asked.
public struct ItemsRequest: Sendable {
    /// One requested element.
    public struct Element: Sendable, Hashable {
        /// DataElementIdentifier, e.g. `age_over_18`.
        public let identifier: String
        /// IntentToRetain (a UI hint).
        public let intentToRetain: Bool
    }

    /// One namespace with its requested elements, in received order.
    public struct NameSpace: Sendable {
        /// The NameSpace key, e.g. `org.iso.18013.5.1`.
        public let name: String
        /// The requested elements, in received order.
        public let elements: [Element]
    }

    /// One requested element: where its namespace and identifier (UTF-8 content) lie in `names`.
    struct Entry: Sendable {
        let nameSpace: Range<Int>
        let identifier: Range<Int>
        let intentToRetain: Bool
    }

    /// The requested document type.
    public let docType: String
    /// `requestInfo` (DocRequestInfo), if present.
    public let requestInfo: DocRequestInfo?
    /// The decoded ItemsRequest map.
    public let item: CBORItem
    /// Every requested element in received order (grouped by namespace, as received).
    let entries: [Entry]
    /// The buffer `entries` point into: the request's own buffer, or (only when some key is an
    /// indefinite-length string) a copy of it with those keys' joined chunks appended.
    let names: [UInt8]

    /// Total number of requested elements.
    public var elementCount: Int { entries.count }

    /// Namespaces in received order, each with its requested elements (built on each access).
    public var nameSpaces: [NameSpace] {
        names.withUnsafeBufferPointer { b in
            // Namespaces are runs of entries with the same namespace range.
            var runs = 0
            for k in entries.indices where k == 0 || entries[k].nameSpace != entries[k - 1].nameSpace { runs += 1 }
            var out = [NameSpace]()
            out.reserveCapacity(runs)
            var i = 0
            while i < entries.count {
                let ns = entries[i].nameSpace
                var j = i
                while j < entries.count && entries[j].nameSpace == ns { j += 1 }
                var elements = [Element]()
                elements.reserveCapacity(j - i)
                for e in entries[i..<j] {
                    elements.append(Element(identifier: Self.text(b, e.identifier), intentToRetain: e.intentToRetain))
                }
                out.append(NameSpace(name: Self.text(b, ns), elements: elements))
                i = j
            }
            return out
        }
    }

    /// Calls `body` with each requested element's namespace and identifier (their UTF-8 bytes, valid
    /// only during the call) and IntentToRetain, in received order. Allocates nothing.
    public func forEachElement(
        _ body: (
            _ nameSpace: UnsafeBufferPointer<UInt8>, _ identifier: UnsafeBufferPointer<UInt8>, _ intentToRetain: Bool
        ) -> Void
    ) {
        names.withUnsafeBufferPointer { b in
            for e in entries {
                body(
                    UnsafeBufferPointer(rebasing: b[e.nameSpace]), UnsafeBufferPointer(rebasing: b[e.identifier]),
                    e.intentToRetain)
            }
        }
    }

    private static func text(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> String {
        let raw = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[r])
        return InternedText.lookup(raw) ?? String(decoding: raw, as: UTF8.self)
    }

    init(_ item: CBORItem) throws(MdocDataError) {
        _ = try item.requireMap("ItemsRequest")
        self.item = item
        docType = try item.required("docType", "ItemsRequest").text("ItemsRequest.docType")
        let ns = try item.required("nameSpaces", "ItemsRequest").requireMap("ItemsRequest.nameSpaces")
        guard ns.count > 0 else { throw MdocDataError(.invalidValue, "ItemsRequest.nameSpaces") }
        (entries, names) = try Self.table(ns)
        requestInfo = try item[field: "requestInfo"].map { (i) throws(MdocDataError) in try DocRequestInfo(i) }
    }

    /// Walks the nameSpaces map on the tape: every key a text string, every value a non-empty map of
    /// text keys to booleans.
    private static func table(_ nameSpaces: CBORItem) throws(MdocDataError) -> ([Entry], [UInt8]) {
        let storage = nameSpaces.storage
        var names = storage.bytes
        var entries = [Entry]()
        // Where a text key's content is: in place for a definite string; for an indefinite one, its
        // chunks joined and appended to a private copy of the buffer (the copy is made once, and only
        // for such a request).
        func content(_ n: UnsafeBufferPointer<Node>, _ k: Int) -> Range<Int> {
            if n[k].flags & Node.indefinite == 0 { return n[k].contentRange }
            let joined = storage.withBytes { CBORValidator.content($0.baseAddress!, n, k) }
            names.append(contentsOf: joined)
            return (names.count - joined.count)..<names.count
        }
        try storage.withNodes { (n: UnsafeBufferPointer<Node>) throws(MdocDataError) in
            // Every element takes at least two tape entries, so half the subtree bounds the count.
            entries.reserveCapacity(Int(n[nameSpaces.index].span) / 2)
            var x = nameSpaces.index + 1
            for _ in 0..<Int(n[nameSpaces.index].argument) {
                let key = x
                let value = x + Int(n[x].span)
                x = value + Int(n[value].span)
                guard n[key].type == .textString else { throw MdocDataError(.wrongType, "ItemsRequest.nameSpaces key") }
                guard n[value].type == .map else { throw MdocDataError(.wrongType, "ItemsRequest.nameSpaces value") }
                guard n[value].argument > 0 else { throw MdocDataError(.invalidValue, "ItemsRequest.nameSpaces value") }
                let ns = content(n, key)
                var e = value + 1
                for _ in 0..<Int(n[value].argument) {
                    let ek = e
                    let ev = e + Int(n[e].span)
                    e = ev + Int(n[ev].span)
                    guard n[ek].type == .textString else { throw MdocDataError(.wrongType, "DataElementIdentifier") }
                    let v = n[ev]
                    guard v.type == .simple, v.argument == 20 || v.argument == 21 else {
                        throw MdocDataError(.wrongType, "IntentToRetain")
                    }
                    entries.append(Entry(nameSpace: ns, identifier: content(n, ek), intentToRetain: v.argument == 21))
                }
            }
        }
        return (entries, names)
    }
}

/// A request for a zero-knowledge proof in place of a plain presentation (`requestInfo.zkRequest`
/// of an ItemsRequest; the EUDI ZKP specification, copying the ISO/IEC 18013-5 2nd-edition draft):
/// `{ "systemSpecs": [+ ZkSystemSpec], "zkRequired": bool, * tstr => RFU }`.
public struct ZkRequest: Sendable {
    /// One proof system the reader accepts: `{ "zkSystemId": tstr, "system": tstr, "params": {…} }`.
    public struct SystemSpec: Sendable {
        /// `zkSystemId`, set by the reader and echoed in a ZK response.
        public let id: String
        /// `system`, e.g. `longfellow-libzk-v1`.
        public let system: String
        /// `params` as received.
        public let params: CBORItem
    }
    /// `systemSpecs`, in the reader's order.
    public let systemSpecs: [SystemSpec]
    /// `zkRequired`: only a zero-knowledge response satisfies the request.
    public let required: Bool

    init(_ item: CBORItem) throws(MdocDataError) {
        _ = try item.requireMap("ZkRequest")
        var specs = [SystemSpec]()
        for s in try item.required("systemSpecs", "ZkRequest").array("ZkRequest.systemSpecs", nonEmpty: true) {
            _ = try s.requireMap("ZkSystemSpec")
            let params = try s.required("params", "ZkSystemSpec")
            _ = try params.requireMap("ZkSystemSpec.params")
            specs.append(
                SystemSpec(
                    id: try s.required("zkSystemId", "ZkSystemSpec").text("ZkSystemSpec.zkSystemId"),
                    system: try s.required("system", "ZkSystemSpec").text("ZkSystemSpec.system"), params: params))
        }
        systemSpecs = specs
        required = try item.required("zkRequired", "ZkRequest").bool("ZkRequest.zkRequired")
    }
}

/// DocRequestInfo (2nd edition); unknown keys are kept in `item`.
public struct DocRequestInfo: Sendable {
    /// An alternative for one requested element.
    public struct AlternativeDataElements: Sendable {
        /// The element the alternatives stand in for (namespace, identifier).
        public let requestedElement: (nameSpace: String, identifier: String)
        /// Sets of elements, any one of which may replace it.
        public let alternativeElementSets: [[(nameSpace: String, identifier: String)]]
    }

    /// `alternativeDataElements`.
    public let alternativeDataElements: [AlternativeDataElements]
    /// `issuerIdentifiers` (AKI values of acceptable issuers).
    public let issuerIdentifiers: [ArraySlice<UInt8>]
    /// `uniqueDocSetRequired`.
    public let uniqueDocSetRequired: Bool?
    /// `maximumResponseSize` in bytes.
    public let maximumResponseSize: UInt64?
    /// `zkRequest`: the reader asks for (or requires) a zero-knowledge proof.
    public let zkRequest: ZkRequest?
    /// The whole map, including keys this view does not interpret.
    public let item: CBORItem

    init(_ item: CBORItem) throws(MdocDataError) {
        _ = try item.requireMap("DocRequestInfo")
        self.item = item
        func pair(_ i: CBORItem) throws(MdocDataError) -> (nameSpace: String, identifier: String) {
            guard i.type == .array, i.count == 2 else {
                throw MdocDataError(.wrongType, "DocRequestInfo.alternativeDataElements element")
            }
            return (
                try i[0]!.text("DocRequestInfo element namespace"), try i[1]!.text("DocRequestInfo element identifier")
            )
        }
        var alts = [AlternativeDataElements]()
        if let a = item[field: "alternativeDataElements"] {
            for e in try a.array("DocRequestInfo.alternativeDataElements", nonEmpty: true) {
                _ = try e.requireMap("AlternativeDataElementSet")
                let req = try pair(try e.required("requestedElement", "AlternativeDataElementSet"))
                var sets = [[(nameSpace: String, identifier: String)]]()
                for s in try e.required("alternativeElementSets", "AlternativeDataElementSet").array(
                    "AlternativeDataElementSet.alternativeElementSets", nonEmpty: true)
                {
                    var set = [(nameSpace: String, identifier: String)]()
                    for p in try s.array("AlternativeDataElementSet.alternativeElementSets[]", nonEmpty: true) {
                        set.append(try pair(p))
                    }
                    sets.append(set)
                }
                alts.append(AlternativeDataElements(requestedElement: req, alternativeElementSets: sets))
            }
        }
        alternativeDataElements = alts
        var ids = [ArraySlice<UInt8>]()
        if let a = item[field: "issuerIdentifiers"] {
            for e in try a.array("DocRequestInfo.issuerIdentifiers", nonEmpty: true) {
                ids.append(try e.bytes("DocRequestInfo.issuerIdentifiers[]"))
            }
        }
        issuerIdentifiers = ids
        uniqueDocSetRequired = try item[field: "uniqueDocSetRequired"].map { (i) throws(MdocDataError) in
            try i.bool("DocRequestInfo.uniqueDocSetRequired")
        }
        maximumResponseSize = try item[field: "maximumResponseSize"].map { (i) throws(MdocDataError) in
            try i.uint("DocRequestInfo.maximumResponseSize")
        }
        zkRequest = try item[field: "zkRequest"].map { (i) throws(MdocDataError) in try ZkRequest(i) }
    }
}

/// DeviceRequestInfo: `{ ? "useCases": [+ UseCase], * tstr => any }`, with its exact tag-24 bytes.
public struct DeviceRequestInfo: Sendable {
    /// One use case: which combinations of DocRequests satisfy it.
    public struct UseCase: Sendable {
        /// Whether the use case must be satisfied.
        public let mandatory: Bool
        /// Each set lists indices into `docRequests`; one satisfied set satisfies the use case.
        public let documentSets: [[Int]]
        /// Purpose hints (purpose code by registry identifier).
        public let purposeHints: [(String, Int64)]
    }

    /// DeviceRequestInfoBytes exactly as received (the whole tag-24 item).
    public let bytes: ArraySlice<UInt8>
    /// `useCases`, empty when absent.
    public let useCases: [UseCase]
    /// The decoded DeviceRequestInfo map (views into the request buffer).
    public let item: CBORItem

    init(_ tagged: CBORItem, options: CBORDecodingOptions) throws(MdocDataError) {
        let (b, item) = try tagged.embedded("DeviceRequest.deviceRequestInfo", options: options)
        bytes = b
        self.item = try item.requireMap("DeviceRequestInfo")
        var cases = [UseCase]()
        if let u = item[field: "useCases"] {
            for c in try u.array("DeviceRequestInfo.useCases", nonEmpty: true) {
                _ = try c.requireMap("UseCase")
                let mandatory = try c.required("mandatory", "UseCase").bool("UseCase.mandatory")
                var sets = [[Int]]()
                for s in try c.required("documentSets", "UseCase").array("UseCase.documentSets", nonEmpty: true) {
                    var set = [Int]()
                    for i in try s.array("UseCase.documentSets[]", nonEmpty: true) {
                        let v = try i.uint("UseCase.documentSets index")
                        guard v <= UInt64(Int32.max) else {
                            throw MdocDataError(.invalidValue, "UseCase.documentSets index")
                        }
                        set.append(Int(v))
                    }
                    sets.append(set)
                }
                var hints = [(String, Int64)]()
                if let p = c[field: "purposeHints"] {
                    _ = try p.requireMap("UseCase.purposeHints")
                    for (k, v) in p.mapEntries {
                        guard let n = v.int64Value else {
                            throw MdocDataError(.wrongType, "UseCase.purposeHints value")
                        }
                        hints.append((try k.text("UseCase.purposeHints key"), n))
                    }
                }
                cases.append(UseCase(mandatory: mandatory, documentSets: sets, purposeHints: hints))
            }
        }
        useCases = cases
    }
}
