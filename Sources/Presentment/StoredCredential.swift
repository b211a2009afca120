#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
import Synchronization

/// What the host app registers with the platform for one credential.
public struct RegistrationInfo: Sendable, Hashable {
    /// The credential's identifier.
    public let credentialID: String
    /// Its first (primary) docType.
    public let docType: String
    /// When the platform should invalidate the registration (the MSO's validUntil).
    public let invalidationDate: Date
}

/// A stored credential. What selection needs to rule it in or out (its docTypes, validity,
/// cancellation) is read with the snapshot; its IssuerSigned is parsed and indexed once, when a request
/// can first select it (every IssuerSignedItemBytes then a byte range found by (namespace, element)
/// without re-parsing). Immutable; a class so that handing it around (selection, planning) costs one
/// reference count, not one per field.
public final class StoredCredential: Sendable {
    /// The credential identifier from the context snapshot.
    public let id: String
    /// The docTypes it answers (the first is the MSO docType).
    public let docTypes: [String]
    /// The IssuerSigned bytes exactly as issued.
    public var issuerSignedBytes: [UInt8] { sourceRange == source.indices ? source : Array(source[sourceRange]) }
    /// Where those bytes are: `sourceRange` of `source`, the snapshot's buffer for a credential read
    /// from a snapshot (no copy is made of a credential, whether or not a request selects it; its
    /// index reads it in place).
    private let source: [UInt8]
    private let sourceRange: Range<Int>
    /// Names the device key for the `DeviceKeyResolver` (a key file, PKCS#11 label, keychain tag).
    public let deviceKeyReference: String
    /// True when the host app cancelled it.
    public let isCancelled: Bool
    /// The MSO's validFrom: before it the credential is not selected.
    public let validFrom: Date
    /// The MSO's validUntil: after it the credential is not selected.
    public let validUntil: Date
    /// SHA-256 of `issuerSignedBytes` as they passed the full check (item digests, issuerAuth, docType,
    /// validity): the record the snapshot keeps so that loading it does not check them again. Indexing
    /// bytes whose digest differs checks them in full.
    package let verifiedDigest: [UInt8]

    /// The MSO decoded from issuerAuth's payload (docType, validity, digests, deviceKey); indexes the
    /// credential if it was not yet (`issuerSignedInvalid`, `msoInvalid`, `itemDigestMismatch`,
    /// `issuerAuthInvalid`, `docTypesMismatch`, `validityMismatch`, `repeatedNamespace`, `repeatedElement`).
    public var mobileSecurityObject: MobileSecurityObject {
        get throws(PresentmentError) { try index().parsed!.mso }
    }
    /// The IssuerSigned parsed once, its items views into the stored bytes (indexing as above).
    public var issuerSigned: IssuerSigned {
        get throws(PresentmentError) { try index().parsed!.issuerSigned }
    }

    /// One issuer-signed item, located once at indexing time.
    struct IndexedItem: Sendable {
        let id: ElementID
        let range: Range<Int>
        let nameSpaceIndex: Int
        /// Position of the item in its namespace's `items` (`Index.nameSpaces`).
        let position: Int
    }

    /// The parsed and indexed credential, built once.
    final class Index: Sendable {
        /// The buffer holding the IssuerSigned bytes exactly as issued, which the item ranges index.
        let bytes: [UInt8]
        /// The IssuerSigned and its MSO; nil only in `Index.none`.
        let parsed: Parsed?

        /// The IssuerSigned and its MSO, boxed: read in place through one reference (as a tuple of the
        /// two structs, some twenty references, it was copied whole through the runtime's generic tuple
        /// witnesses at each read: twice on a cold holder's first request).
        final class Parsed: Sendable {
            let issuerSigned: IssuerSigned
            let mso: MobileSecurityObject
            init(_ issuerSigned: IssuerSigned, _ mso: MobileSecurityObject) {
                self.issuerSigned = issuerSigned
                self.mso = mso
            }
        }
        /// Every item, grouped by namespace with namespaces in deterministic (encoded-key) order and
        /// the issuer's order within a namespace. Selection and response building work on indices into it.
        let orderedItems: [IndexedItem]
        /// The parsed namespaces in that order, with their names (an item is
        /// `nameSpaces[nameSpaceIndex].items[position]`).
        let nameSpaces: [IssuerSigned.NameSpace]
        /// Element → index into `orderedItems`: the one map from an element to its item.
        let itemIndex: ElementIndex
        let issuerAuthRange: Range<Int>

        /// Whether an element's identifier and namespace are ASCII (where byte equality and `String`
        /// equality agree).
        static func isASCII(_ id: ElementID) -> Bool {
            id.identifier.utf8.allSatisfy { $0 < 0x80 } && id.nameSpace.utf8.allSatisfy { $0 < 0x80 }
        }

        /// The issuer-signed item at an index into `orderedItems`.
        func item(at i: Int) -> IssuerSignedItem {
            let o = orderedItems[i]
            return nameSpaces[o.nameSpaceIndex].items[o.position]
        }

        /// The issuer-signed item of an element, when held.
        func item(_ id: ElementID) -> IssuerSignedItem? { itemIndex[id].map(item(at:)) }

        /// issuerAuth's `x5chain` (DER, the document signer first) and its `alg`, from which the
        /// issuer facts are computed.
        private let x5chain: [[UInt8]]
        private let issuerAuthAlgorithm: Int64?
        /// What trust rules read of the issuer's certificates, computed on first use (by a request
        /// with `trusted_authorities` or `issuerauth_alg_values`), or at indexing when the credential
        /// was checked (which parses the document signer anyway): a certificate's first parse in a
        /// process costs ~100 µs in OpenSSL 3.0.
        private let issuerFacts = OnceReference<IssuerFacts>()

        final class IssuerFacts: Sendable {
            /// The AuthorityKeyIdentifiers of the certificates in `x5chain` (for DCQL
            /// `trusted_authorities` of type `aki`).
            let authorityKeyIDs: [[UInt8]]
            /// The COSE algorithm identifiers issuerAuth's signature satisfies (its `alg`, and the
            /// fully specified one for the document signer's curve).
            let algorithms: Set<Int64>

            init(chain: [[UInt8]], algorithm: Int64?, signerCurve: COSEKey.Curve?) {
                authorityKeyIDs = chain.compactMap { try? Certificate(der: $0).authorityKeyIdentifier }
                algorithms = algorithm.map { COSEAlgorithm.satisfied(by: $0, curve: signerCurve) } ?? []
            }

            /// The facts of a chain, parsing its document signer for its curve (nil if it does not parse).
            convenience init(chain: [[UInt8]], algorithm: Int64?) {
                let curve = chain.first.flatMap { (try? Certificate(der: $0).publicKey())?.curve }
                self.init(chain: chain, algorithm: algorithm, signerCurve: curve)
            }
        }

        /// The AuthorityKeyIdentifiers of the certificates in issuerAuth's `x5chain`.
        var issuerAuthorityKeyIDs: [[UInt8]] { facts.authorityKeyIDs }
        /// The COSE algorithm identifiers issuerAuth's signature satisfies.
        var issuerAuthAlgorithms: Set<Int64> { facts.algorithms }

        private var facts: IssuerFacts {
            if let f = issuerFacts.load() { return f }
            return issuerFacts.storeIfNil(IssuerFacts(chain: x5chain, algorithm: issuerAuthAlgorithm))
        }
        /// The COSE algorithm identifiers a device signature with the MSO's device key satisfies.
        let deviceAuthAlgorithms: Set<Int64>

        /// What an unindexed credential shows: nothing (it is never a candidate).
        static let none = Index()
        private init() {
            bytes = []
            parsed = nil
            orderedItems = []
            nameSpaces = []
            itemIndex = ElementIndex.make([]).index
            issuerAuthRange = 0..<0
            x5chain = []
            issuerAuthAlgorithm = nil
            deviceAuthAlgorithms = []
        }

        /// The reader's options for bytes matching a full check's record.
        static let recordedOptions = CBORDecodingOptions(rejectDuplicateKeys: false)

        /// Parses and indexes the IssuerSigned at `range` of `bytes` (all of them by default); with
        /// `checking`, also verifies every item against its MSO digest and issuerAuth with its own
        /// document signer certificate (trust in the issuer is the verifier's business; corruption is ours).
        init(_ bytes: [UInt8], range: Range<Int>? = nil, checking: Bool) throws(PresentmentError) {
            self.bytes = bytes
            // Bytes that match the record of a full check are read without its duplicate-key check
            // (every other rule of the reader still applies): they are the bytes that passed it.
            let options = checking ? CBORDecodingOptions.default : Self.recordedOptions
            let parsed: IssuerSigned
            do { parsed = try IssuerSigned(encoded: bytes, range: range ?? 0..<bytes.count, options: options) } catch {
                throw PresentmentError(ContextRule.issuerSignedInvalid, underlying: error)
            }
            let mso: MobileSecurityObject
            do { mso = try parsed.mobileSecurityObject(options: options) } catch {
                throw PresentmentError(ContextRule.msoInvalid, underlying: error)
            }
            if checking {
                do { try parsed.checkValueDigests(against: mso) } catch {
                    throw PresentmentError(ContextRule.itemDigestMismatch)
                }
            }
            let chain = (try? parsed.issuerAuth.headers.x5chain()) ?? []
            x5chain = chain
            issuerAuthAlgorithm = (try? parsed.issuerAuth.algorithm())?.rawValue
            if checking, let der = chain.first {
                // A credential not checked before: its document signer must verify issuerAuth.
                guard let ds = try? Certificate(der: der), let key = try? ds.publicKey(),
                    (try? parsed.issuerAuth.verify(key: key)) != nil
                else {
                    throw PresentmentError(ContextRule.issuerAuthInvalid)
                }
                _ = issuerFacts.storeIfNil(
                    IssuerFacts(chain: chain, algorithm: issuerAuthAlgorithm, signerCurve: key.curve))
            }
            let deviceAlgorithm: COSEAlgorithm? =
                switch mso.deviceKey.curve {
                case .p256: .es256
                case .p384: .es384
                case .p521: .es512
                case .ed25519: .edDSA
                default: nil
                }
            deviceAuthAlgorithms =
                deviceAlgorithm.map { COSEAlgorithm.satisfied(by: $0.rawValue, curve: mso.deviceKey.curve) } ?? []
            let spaces = parsed.nameSpaces.sorted { CBORWriter.textKeyPrecedes($0.name, $1.name) }
            var ordered = [IndexedItem]()
            ordered.reserveCapacity(spaces.reduce(0) { $0 + $1.items.count })
            for (nsIndex, ns) in spaces.enumerated() {
                guard nsIndex == 0 || spaces[nsIndex - 1].name != ns.name else {
                    throw PresentmentError(ContextRule.repeatedNamespace)
                }
                // Each item's fields read where they are (no copy of the item made per element).
                for position in ns.items.indices {
                    ordered.append(
                        IndexedItem(
                            id: ElementID(ns.name, ns.items[position].elementIdentifier),
                            range: ns.items[position].bytes.startIndex..<ns.items[position].bytes.endIndex,
                            nameSpaceIndex: nsIndex, position: position))
                }
            }
            // An element held twice: byte-equal identifiers (the index finds them), or, only possible
            // beyond ASCII, identifiers equal as Swift strings (canonically equivalent), which consent
            // and selection would not tell apart.
            let (index, repeatedBytes) = ElementIndex.make(ordered.indices.map { (ordered[$0].id, $0) })
            var repeated = repeatedBytes
            if !repeated, !ordered.allSatisfy({ Self.isASCII($0.id) }) {
                var seen = Set<ElementID>()
                repeated = !ordered.allSatisfy { seen.insert($0.id).inserted }
            }
            guard !repeated else { throw PresentmentError(ContextRule.repeatedElement) }
            self.parsed = Parsed(parsed, mso)
            self.orderedItems = ordered
            self.nameSpaces = spaces
            self.itemIndex = index
            self.issuerAuthRange = parsed.issuerAuth.item.byteRange
        }
    }

    /// The index once built; `Index.none` before (every caller below runs on candidates, which are indexed).
    @inline(__always) var indexed: Index { lazyIndex.load() ?? Index.none }
    var orderedItems: [IndexedItem] { indexed.orderedItems }
    /// The name of the namespace at an index of the deterministic order.
    func nameSpaceName(_ i: Int) -> String { indexed.nameSpaces[i].name }
    var itemIndex: ElementIndex { indexed.itemIndex }
    /// The issuer-signed item at an index into `orderedItems`.
    func item(at i: Int) -> IssuerSignedItem { indexed.item(at: i) }
    /// The byte range of issuerAuth in `indexedBytes`.
    var issuerAuthRange: Range<Int> { indexed.issuerAuthRange }
    /// The buffer the index reads the IssuerSigned from (a snapshot's whole buffer for a credential read
    /// from one): every range the index gives is an offset into it.
    var indexedBytes: [UInt8] { indexed.bytes }
    var issuerAuthorityKeyIDs: [[UInt8]] { indexed.issuerAuthorityKeyIDs }
    var issuerAuthAlgorithms: Set<Int64> { indexed.issuerAuthAlgorithms }
    var deviceAuthAlgorithms: Set<Int64> { indexed.deviceAuthAlgorithms }

    private let lazyIndex = OnceReference<Index>()

    /// Parses and indexes the credential on first use and keeps the result (a failure is not kept).
    /// Bytes that match `verifiedDigest` are not checked again; others are checked in full, and their
    /// docType and validity must be the ones the snapshot gave.
    func index() throws(PresentmentError) -> Index {
        if let i = lazyIndex.load() { return i }
        let i = try Index(
            source, range: sourceRange, checking: MdocDigest.sha256(source[sourceRange]) != verifiedDigest)
        // The MSO's fields read through the box (the MSO itself is not copied).
        let parsed = i.parsed!
        guard docTypes.first == parsed.mso.docType else { throw PresentmentError(ContextRule.docTypesMismatch) }
        guard parsed.mso.validityInfo.validFrom == validFrom, parsed.mso.validityInfo.validUntil == validUntil else {
            throw PresentmentError(ContextRule.validityMismatch)
        }
        return lazyIndex.storeIfNil(i)
    }

    /// Whether the credential was indexed (by a request that could select it, or by a writer).
    var isIndexed: Bool { lazyIndex.load() != nil }

    /// Whether the credential is indexed, indexing it if it was not (false when its bytes fail).
    var isIndexable: Bool { (try? index()) != nil }

    /// Where the device key comes from, and the signer once resolved (resolved on first use, so a
    /// context loads without touching any key, and a key that cannot be resolved refuses only the
    /// credential that needs it).
    private let resolver: any DeviceKeyResolver
    /// Set once, then read without a lock by every signing thread.
    private let resolved = OnceReference<ResolvedSigner>()

    /// A resolved signer, boxed for the lock-free once-only reference, with the record of the key
    /// material it came from (`KeyRecordingResolver`).
    private final class ResolvedSigner: Sendable {
        let signer: any COSESigner
        let keyRecord: [UInt8]?
        init(_ signer: any COSESigner, keyRecord: [UInt8]?) {
            self.signer = signer
            self.keyRecord = keyRecord
        }
    }

    /// The record a snapshot kept of this credential's device key as it last passed `signer()`'s
    /// checks (SHA-256 of the key file), handed to a recording resolver so that the same bytes are not
    /// checked again; nil when the snapshot had none.
    private let loadedKeyRecord: [UInt8]?

    /// The key record to keep in a snapshot: the one made when the key resolved and matched the MSO in
    /// this process, else the one the snapshot had (nil: none; the next load checks the key in full).
    var keyRecord: [UInt8]? {
        if let box = resolved.load() { return box.keyRecord }
        return loadedKeyRecord
    }

    /// The elements the credential holds (indexing it if it was not; throws as `mobileSecurityObject`).
    public var elements: [ElementID] {
        get throws(PresentmentError) { try index().orderedItems.map(\.id).sorted() }
    }

    /// The byte range of an element's IssuerSignedItemBytes in `indexedBytes`.
    func itemRange(_ id: ElementID) -> Range<Int>? { itemIndex[id].map { orderedItems[$0].range } }

    /// The value of an element, decoded on demand (for display); nil when not held or when the
    /// credential cannot be indexed.
    public func element(_ id: ElementID) -> CBORItem? { (try? index())?.item(id)?.elementValue }

    /// Registration metadata for the platform.
    public var registration: RegistrationInfo {
        RegistrationInfo(credentialID: id, docType: docTypes[0], invalidationDate: validUntil)
    }

    /// Whether `other` is this credential as stored (the same object, or one read from a later snapshot
    /// with the same issuer data and device key reference).
    package func isSameCredential(as other: StoredCredential) -> Bool {
        self === other
            || (id == other.id && verifiedDigest == other.verifiedDigest
                && deviceKeyReference == other.deviceKeyReference)
    }

    /// True when usable at `date`: not cancelled and within the MSO validity.
    public func isUsable(at date: Date) -> Bool { !isCancelled && date >= validFrom && date <= validUntil }

    /// The device key's signer (the response path's; behind SPI so no holder of a context gets a
    /// signing capability), resolved through the context's `DeviceKeyResolver` on first use and
    /// kept: `keyUnavailable` when the reference does not resolve or the key is not the MSO's
    /// `deviceKey` (a failure is not kept; the next call tries again).
    @_spi(Testing) public func signer() throws(PresentmentError) -> any COSESigner {
        if let box = resolved.load() { return box.signer }
        let s: any COSESigner
        let record: [UInt8]?
        if let recording = resolver as? any KeyRecordingResolver {
            let r = try recording.recordedSigner(for: deviceKeyReference, recorded: loadedKeyRecord)
            (s, record) = (r.signer, r.record)
        } else {
            (s, record) = (try resolver.signer(for: deviceKeyReference), nil)
        }
        guard s.publicKey == (try index()).parsed!.mso.deviceKey else {
            throw PresentmentError(KeyRule.keyMismatch)
        }
        // Two threads may resolve at once; the first stored wins and both use it.
        return resolved.storeIfNil(ResolvedSigner(s, keyRecord: record)).signer
    }

    /// A credential checked in full now (what a writer registers): parsed, indexed, every item
    /// against its MSO digest, issuerAuth with its document signer, and (with `validatingKey`) its
    /// device key resolved and matched to the MSO's.
    convenience init(
        id: String, docTypes: [String]?, issuerSignedBytes: [UInt8], deviceKeyReference: String, isCancelled: Bool,
        resolver: any DeviceKeyResolver, validatingKey: Bool
    ) throws(PresentmentError) {
        guard Self.isValidID(id) else { throw PresentmentError(ContextRule.credentialIDLength) }
        let index = try Index(issuerSignedBytes, checking: true)
        let mso = index.parsed!.mso
        let types = docTypes ?? [mso.docType]
        guard types.first == mso.docType else {
            throw PresentmentError(ContextRule.docTypesMismatch)
        }
        try self.init(
            recorded: id, docTypes: types, issuerSignedBytes: issuerSignedBytes, range: 0..<issuerSignedBytes.count,
            deviceKeyReference: deviceKeyReference, isCancelled: isCancelled, validFrom: mso.validityInfo.validFrom,
            validUntil: mso.validityInfo.validUntil, verifiedDigest: MdocDigest.sha256(issuerSignedBytes),
            keyRecord: nil, resolver: resolver)
        _ = lazyIndex.storeIfNil(index)
        if validatingKey { _ = try signer() }
    }

    /// A credential as a snapshot recorded it after checking it in full: nothing is parsed until a
    /// request can select it (`index()`). Its IssuerSigned is `range` of `issuerSignedBytes`.
    init(
        recorded id: String, docTypes: [String], issuerSignedBytes: [UInt8], range: Range<Int>,
        deviceKeyReference: String,
        isCancelled: Bool, validFrom: Date, validUntil: Date, verifiedDigest: [UInt8], keyRecord: [UInt8]?,
        resolver: any DeviceKeyResolver
    ) throws(PresentmentError) {
        guard Self.isValidID(id) else { throw PresentmentError(ContextRule.credentialIDLength) }
        self.id = id
        self.docTypes = docTypes
        precondition(range.lowerBound >= 0 && range.upperBound <= issuerSignedBytes.count)
        self.source = issuerSignedBytes
        self.sourceRange = range
        self.deviceKeyReference = deviceKeyReference
        self.isCancelled = isCancelled
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.verifiedDigest = verifiedDigest
        self.loadedKeyRecord = keyRecord
        self.resolver = resolver
    }

    /// A credential id: 1 to 128 bytes.
    private static func isValidID(_ id: String) -> Bool { !id.isEmpty && id.utf8.count <= 128 }
}
