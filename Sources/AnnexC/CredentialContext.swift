#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MdocCBOR
import Synchronization

/// One element a credential holds or a request names: (namespace, identifier).
public struct ElementID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// NameSpace.
    public let nameSpace: String
    /// DataElementIdentifier.
    public let identifier: String
    /// Creates an element reference.
    public init(_ nameSpace: String, _ identifier: String) {
        self.nameSpace = nameSpace
        self.identifier = identifier
    }
    /// `namespace/identifier`.
    public var description: String { "\(nameSpace)/\(identifier)" }
    /// Orders by namespace then identifier.
    public static func < (a: ElementID, b: ElementID) -> Bool { (a.nameSpace, a.identifier) < (b.nameSpace, b.identifier) }
    /// Hashes the identifier only (namespaces rarely differ for one identifier; equality checks both).
    public func hash(into h: inout Hasher) { h.combine(identifier) }
}

/// What the host app registers with the platform for one credential.
public struct RegistrationInfo: Sendable, Hashable {
    /// The credential's identifier.
    public let credentialID: String
    /// Its first (primary) docType.
    public let docType: String
    /// When the platform should invalidate the registration (the MSO's validUntil).
    public let invalidationDate: Date
}

/// A stored credential, indexed once when the context loads: every IssuerSignedItemBytes is a byte
/// range found by (namespace, element) without re-parsing. Immutable; a class so that handing it
/// around (selection, planning) costs one reference count, not one per field.
public final class StoredCredential: Sendable {
    /// The identifier.
    public let id: String
    /// The docTypes it answers (the first is the MSO docType).
    public let docTypes: [String]
    /// The IssuerSigned bytes exactly as issued.
    public let issuerSignedBytes: [UInt8]
    /// The device key reference.
    public let deviceKeyReference: String
    /// True when the host app cancelled it.
    public let isCancelled: Bool
    /// MSO validFrom.
    public let validFrom: Date
    /// MSO validUntil.
    public let validUntil: Date
    /// The MSO.
    public let mobileSecurityObject: MobileSecurityObject
    /// The parsed IssuerSigned.
    public let issuerSigned: IssuerSigned

    /// One issuer-signed item, located once at load time.
    struct IndexedItem: Sendable {
        let id: ElementID
        let range: Range<Int>
        let nameSpaceIndex: Int
    }

    /// Every item, grouped by namespace with namespaces in deterministic (encoded-key) order and the
    /// issuer's order within a namespace. Selection and response building work on indices into it.
    let orderedItems: [IndexedItem]
    /// Namespace names, in the same deterministic order.
    let nameSpaceNames: [String]
    /// Element → index into `orderedItems`.
    let itemIndex: ElementIndex
    let items: [ElementID: IssuerSignedItem]
    let issuerAuthRange: Range<Int>
    /// Where the device key comes from, and the signer once resolved (resolved on first use, so a
    /// context loads without touching any key, and a key that cannot be resolved refuses only the
    /// credential that needs it).
    private let resolver: any DeviceKeyResolver
    /// Set once, then read without a lock by every signing thread.
    private let resolved = AtomicLazyReference<ResolvedSigner>()

    /// A resolved signer, boxed for the lock-free once-only reference.
    private final class ResolvedSigner: Sendable {
        let signer: any COSESigner
        init(_ signer: any COSESigner) { self.signer = signer }
    }

    /// The elements the credential holds.
    public var elements: [ElementID] { items.keys.sorted() }

    /// The byte range of an element's IssuerSignedItemBytes in `issuerSignedBytes`.
    func itemRange(_ id: ElementID) -> Range<Int>? { itemIndex[id].map { orderedItems[$0].range } }

    /// The value of an element, decoded on demand (for display).
    public func element(_ id: ElementID) -> CBORItem? { items[id]?.elementValue }

    /// Registration metadata for the platform.
    public var registration: RegistrationInfo { RegistrationInfo(credentialID: id, docType: docTypes[0], invalidationDate: validUntil) }

    /// True when usable at `date`: not cancelled and within the MSO validity.
    public func isUsable(at date: Date) -> Bool { !isCancelled && date >= validFrom && date <= validUntil }

    /// The device key's signer, resolved through the context's `DeviceKeyResolver` on first use and
    /// kept: `keyUnavailable` when the reference does not resolve or the key is not the MSO's
    /// `deviceKey` (a failure is not kept; the next call tries again).
    public func signer() throws(AnnexCError) -> any COSESigner {
        if let box = resolved.load() { return box.signer }
        let s = try resolver.signer(for: deviceKeyReference)
        guard s.publicKey == mobileSecurityObject.deviceKey else { throw AnnexCError(.keyUnavailable, "device key does not match the MSO deviceKey") }
        // Two threads may resolve at once; the first stored wins and both use it.
        return resolved.storeIfNil(ResolvedSigner(s)).signer
    }

    init(id: String, docTypes: [String]?, issuerSignedBytes: [UInt8], deviceKeyReference: String, isCancelled: Bool,
         resolver: any DeviceKeyResolver, validatingKey: Bool) throws(AnnexCError) {
        guard !id.isEmpty, id.utf8.count <= 128 else { throw AnnexCError(.contextCorrupt, "credential id is empty or longer than 128 bytes") }
        let parsed: IssuerSigned
        do { parsed = try IssuerSigned(encoded: issuerSignedBytes) } catch { throw AnnexCError(.contextCorrupt, "credential IssuerSigned does not parse (\(error))") }
        let mso: MobileSecurityObject
        do { mso = try parsed.mobileSecurityObject() } catch { throw AnnexCError(.contextCorrupt, "credential MSO does not parse (\(error))") }
        // Integrity: every item matches its MSO digest, and issuerAuth verifies with its own document
        // signer certificate (trust in the issuer is the verifier's business; corruption is ours).
        do { try parsed.checkValueDigests(against: mso) } catch { throw AnnexCError(.contextCorrupt, "a credential item does not match its MSO digest") }
        if let der = try? parsed.issuerAuth.headers.x5chain().first {
            guard let ds = try? Certificate(der: der), let key = try? ds.publicKey(), (try? parsed.issuerAuth.verify(key: key)) != nil else {
                throw AnnexCError(.contextCorrupt, "credential issuerAuth does not verify with its document signer certificate")
            }
        }
        let types = docTypes ?? [mso.docType]
        guard types.first == mso.docType else { throw AnnexCError(.contextCorrupt, "credential docTypes do not start with the MSO docType") }
        var items = [ElementID: IssuerSignedItem]()
        let spaces = parsed.nameSpaces.sorted { ResponseBuilder.encodedOrder($0.name, $1.name) }
        var ordered = [IndexedItem]()
        var index = [ElementID: Int]()
        for (nsIndex, ns) in spaces.enumerated() {
            guard nsIndex == 0 || spaces[nsIndex - 1].name != ns.name else { throw AnnexCError(.contextCorrupt, "credential repeats a namespace") }
            for item in ns.items {
                let key = ElementID(ns.name, item.elementIdentifier)
                guard items[key] == nil else { throw AnnexCError(.contextCorrupt, "credential holds an element twice") }
                items[key] = item
                index[key] = ordered.count
                ordered.append(IndexedItem(id: key, range: item.bytes.startIndex..<item.bytes.endIndex, nameSpaceIndex: nsIndex))
            }
        }
        self.id = id
        self.docTypes = types
        self.issuerSignedBytes = issuerSignedBytes
        self.deviceKeyReference = deviceKeyReference
        self.isCancelled = isCancelled
        self.validFrom = mso.validityInfo.validFrom
        self.validUntil = mso.validityInfo.validUntil
        self.mobileSecurityObject = mso
        self.issuerSigned = parsed
        self.orderedItems = ordered
        self.nameSpaceNames = spaces.map(\.name)
        self.itemIndex = ElementIndex(index.map { ($0.key, $0.value) })
        self.items = items
        self.issuerAuthRange = parsed.issuerAuth.item.byteRange
        self.resolver = resolver
        if validatingKey { _ = try signer() }
    }
}

/// The credential context snapshot the host app writes and the responder reads: credentials, the
/// holder's reader-trust policy, and where device keys are. Immutable; writing is all or nothing.
public struct CredentialContext: Sendable {
    /// The on-disk format identifier.
    public static let formatName = "mdoc-respond-context"
    /// The on-disk format version.
    public static let formatVersion: UInt64 = 1
    /// The snapshot's file name inside the context directory.
    public static let fileName = "context.cbor"
    /// The largest snapshot accepted.
    public static let maxFileSize = 64 << 20

    /// One credential as the host app registers it.
    public struct Entry: Sendable {
        /// Identifier.
        public var id: String
        /// docTypes (default: the MSO docType).
        public var docTypes: [String]?
        /// IssuerSigned as issued.
        public var issuerSigned: [UInt8]
        /// Device key reference for the resolver (e.g. `keys/mdl.pem`).
        public var deviceKeyReference: String
        /// Cancelled by the host app.
        public var isCancelled: Bool
        /// Creates an entry.
        public init(id: String, docTypes: [String]? = nil, issuerSigned: [UInt8], deviceKeyReference: String, isCancelled: Bool = false) {
            self.id = id
            self.docTypes = docTypes
            self.issuerSigned = issuerSigned
            self.deviceKeyReference = deviceKeyReference
            self.isCancelled = isCancelled
        }
    }

    /// The credentials, in registration order.
    public let credentials: [StoredCredential]
    /// The holder's reader-trust policy.
    public let readerTrust: ReaderTrustPolicy

    /// Builds and validates a context: every IssuerSigned and MSO parses, every item matches its MSO
    /// digest, issuerAuth verifies with its document signer certificate, docTypes start with the MSO
    /// docType, ids are unique, and (with `validatingKeys`, the default: what a writer checks) every
    /// device key resolves to the MSO deviceKey. Without it, each key is resolved when first used.
    public init(entries: [Entry], readerTrust: ReaderTrustPolicy = ReaderTrustPolicy(), keyResolver: any DeviceKeyResolver,
                validatingKeys: Bool = true) throws(AnnexCError) {
        try self.init(entries: entries, readerTrust: readerTrust, keyResolver: keyResolver, validatingKeys: validatingKeys, nextCredentialNumber: nil)
    }

    init(entries: [Entry], readerTrust: ReaderTrustPolicy, keyResolver: any DeviceKeyResolver, validatingKeys: Bool,
         nextCredentialNumber: UInt64?) throws(AnnexCError) {
        var seen = Set<String>()
        var creds = [StoredCredential]()
        for e in entries {
            guard seen.insert(e.id).inserted else { throw AnnexCError(.contextCorrupt, "duplicate credential id") }
            creds.append(try StoredCredential(id: e.id, docTypes: e.docTypes, issuerSignedBytes: e.issuerSigned, deviceKeyReference: e.deviceKeyReference,
                                              isCancelled: e.isCancelled, resolver: keyResolver, validatingKey: validatingKeys))
        }
        credentials = creds
        self.readerTrust = readerTrust
        // Never below one past the highest `credential-N` id present: a default id is never reused.
        let highest = creds.compactMap { c -> UInt64? in
            guard c.id.hasPrefix(Self.defaultIDPrefix) else { return nil }
            return UInt64(c.id.dropFirst(Self.defaultIDPrefix.count))
        }.max() ?? 0
        self.nextCredentialNumber = max(nextCredentialNumber ?? 1, highest == UInt64.max ? highest : highest + 1)
    }

    /// Default credential ids are `credential-N`.
    static let defaultIDPrefix = "credential-"
    /// The N of the next default id: stored in the snapshot and only ever increased, so an id is never
    /// handed out twice, even after its credential was removed.
    let nextCredentialNumber: UInt64

    /// The entries, for editing and rewriting.
    public var entries: [Entry] {
        credentials.map { Entry(id: $0.id, docTypes: $0.docTypes, issuerSigned: $0.issuerSignedBytes, deviceKeyReference: $0.deviceKeyReference, isCancelled: $0.isCancelled) }
    }

    /// Registration metadata for every credential.
    public var registrations: [RegistrationInfo] { credentials.map(\.registration) }

    /// The credential with `id`.
    public func credential(id: String) -> StoredCredential? { credentials.first { $0.id == id } }

    // MARK: Encoding

    /// The snapshot encoding (deterministic CBOR):
    /// `{"format", "version", "credentials": [{"id", "docTypes", "issuerSigned", "deviceKey", "cancelled", "validFrom", "validUntil"}],
    ///   "nextCredentialNumber": uint,
    ///   "readerTrust": {"anchors": [bstr], "authorities": null / [bstr], "requireReaderAuth": bool, "requireTrustedReader": bool}}`
    /// (`requireTrustedReader` absent in older snapshots: false).
    public func encoded() -> [UInt8] {
        let creds: [CBORValue] = credentials.map { c in
            .map([
                .init(.text("id"), .text(c.id)),
                .init(.text("docTypes"), .array(c.docTypes.map { .text($0) })),
                .init(.text("issuerSigned"), .bytes(c.issuerSignedBytes)),
                .init(.text("deviceKey"), .text(c.deviceKeyReference)),
                .init(.text("cancelled"), .bool(c.isCancelled)),
                .init(.text("validFrom"), .tagged(0, .text(MdocDate.formatDateTime(c.validFrom)))),
                .init(.text("validUntil"), .tagged(0, .text(MdocDate.formatDateTime(c.validUntil)))),
            ])
        }
        let authorities: CBORValue
        switch readerTrust.authorities {
        case .any: authorities = .null
        case .only(let list): authorities = .array(list.map { .bytes($0) })
        }
        return CBORValue.map([
            .init(.text("format"), .text(Self.formatName)),
            .init(.text("version"), .unsigned(Self.formatVersion)),
            .init(.text("credentials"), .array(creds)),
            .init(.text("nextCredentialNumber"), .unsigned(nextCredentialNumber)),
            .init(.text("readerTrust"), .map([
                .init(.text("anchors"), .array(readerTrust.trustAnchors.map { .bytes($0.der) })),
                .init(.text("authorities"), authorities),
                .init(.text("requireReaderAuth"), .bool(readerTrust.requireReaderAuthentication)),
                .init(.text("requireTrustedReader"), .bool(readerTrust.requireTrustedReader)),
            ])),
        ]).encoded()
    }

    /// Decodes a snapshot and validates every credential (see `init(entries:readerTrust:keyResolver:validatingKeys:)`);
    /// device keys are resolved when first used unless `validatingKeys`.
    public init(encoded bytes: [UInt8], keyResolver: any DeviceKeyResolver, validatingKeys: Bool = false) throws(AnnexCError) {
        let root: CBORItem
        do { root = try CBORDocument(decoding: bytes, options: .init(maxDepth: 16, maxInputSize: Self.maxFileSize)).root } catch {
            throw AnnexCError(.contextCorrupt, "snapshot is not well-formed CBOR (\(error.code.rawValue) at byte \(error.offset))")
        }
        guard root.type == .map, root["format"]?.isText(Self.formatName) == true else { throw AnnexCError(.contextCorrupt, "not a credential context snapshot") }
        guard let v = root["version"]?.unsignedValue else { throw AnnexCError(.contextCorrupt, "snapshot version missing") }
        guard v == Self.formatVersion else { throw AnnexCError(.contextCorrupt, "snapshot version \(v) is not supported (expected \(Self.formatVersion))") }
        guard let list = root["credentials"], list.type == .array else { throw AnnexCError(.contextCorrupt, "credentials missing") }
        var entries = [Entry]()
        for c in list.children {
            guard c.type == .map, let id = c["id"]?.stringValue, let is_ = c["issuerSigned"]?.byteStringValue,
                  let key = c["deviceKey"]?.stringValue, let cancelled = c["cancelled"]?.boolValue,
                  let types = c["docTypes"], types.type == .array else {
                throw AnnexCError(.contextCorrupt, "credential entry lacks a field or has a wrong type")
            }
            var docTypes = [String]()
            for t in types.children {
                guard let s = t.stringValue else { throw AnnexCError(.contextCorrupt, "credential docType is not text") }
                docTypes.append(s)
            }
            guard !docTypes.isEmpty else { throw AnnexCError(.contextCorrupt, "credential has no docTypes") }
            entries.append(Entry(id: id, docTypes: docTypes, issuerSigned: is_, deviceKeyReference: key, isCancelled: cancelled))
        }
        guard let rt = root["readerTrust"], rt.type == .map else { throw AnnexCError(.contextCorrupt, "readerTrust missing") }
        var anchors = [Certificate]()
        if let a = rt["anchors"] {
            guard a.type == .array else { throw AnnexCError(.contextCorrupt, "readerTrust.anchors is not an array") }
            for d in a.children {
                guard let der = d.byteStringValue, let cert = try? Certificate(der: der) else { throw AnnexCError(.contextCorrupt, "reader trust anchor is not a DER certificate") }
                anchors.append(cert)
            }
        }
        var authorities = AuthorityPolicy.any
        if let au = rt["authorities"], !au.isNull {
            guard au.type == .array else { throw AnnexCError(.contextCorrupt, "readerTrust.authorities is not an array") }
            var list = [[UInt8]]()
            for k in au.children {
                guard let b = k.byteStringValue else { throw AnnexCError(.contextCorrupt, "authority key identifier is not a byte string") }
                list.append(b)
            }
            authorities = .only(list)
        }
        let require = rt["requireReaderAuth"]?.boolValue ?? false
        let requireTrusted = rt["requireTrustedReader"]?.boolValue ?? false
        var next: UInt64?
        if let n = root["nextCredentialNumber"] {
            guard let v = n.unsignedValue else { throw AnnexCError(.contextCorrupt, "nextCredentialNumber is not an unsigned integer") }
            next = v
        }
        try self.init(entries: entries, readerTrust: ReaderTrustPolicy(trustAnchors: anchors, authorities: authorities, requireReaderAuthentication: require,
                                                                       requireTrustedReader: requireTrusted),
                      keyResolver: keyResolver, validatingKeys: validatingKeys, nextCredentialNumber: next)
        // The stored validity must agree with the MSOs (it is what the host app registered).
        for (c, raw) in zip(credentials, list.children) {
            guard raw["validUntil"]?.dateValue == c.validUntil, raw["validFrom"]?.dateValue == c.validFrom else {
                throw AnnexCError(.contextCorrupt, "stored validity does not match the credential's MSO")
            }
        }
    }
}
