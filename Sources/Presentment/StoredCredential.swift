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

/// A stored credential, indexed once when the context loads: every IssuerSignedItemBytes is a byte
/// range found by (namespace, element) without re-parsing. Immutable; a class so that handing it
/// around (selection, planning) costs one reference count, not one per field.
public final class StoredCredential: Sendable {
    /// The credential identifier from the context snapshot.
    public let id: String
    /// The docTypes it answers (the first is the MSO docType).
    public let docTypes: [String]
    /// The IssuerSigned bytes exactly as issued.
    public let issuerSignedBytes: [UInt8]
    /// Names the device key for the `DeviceKeyResolver` (a key file, PKCS#11 label, keychain tag).
    public let deviceKeyReference: String
    /// True when the host app cancelled it.
    public let isCancelled: Bool
    /// The MSO's validFrom: before it the credential is not selected.
    public let validFrom: Date
    /// The MSO's validUntil: after it the credential is not selected.
    public let validUntil: Date
    /// The MSO decoded from issuerAuth's payload (docType, validity, digests, deviceKey).
    public let mobileSecurityObject: MobileSecurityObject
    /// The IssuerSigned parsed once at load, its items views into the stored bytes.
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
    /// The AuthorityKeyIdentifiers of the certificates in issuerAuth's `x5chain` (for DCQL
    /// `trusted_authorities` of type `aki`).
    let issuerAuthorityKeyIDs: [[UInt8]]
    /// The COSE algorithm identifiers issuerAuth's signature satisfies (its `alg`, and the fully
    /// specified one for the document signer's curve).
    let issuerAuthAlgorithms: Set<Int64>
    /// The COSE algorithm identifiers a device signature with the MSO's device key satisfies.
    let deviceAuthAlgorithms: Set<Int64>
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
    public var registration: RegistrationInfo {
        RegistrationInfo(credentialID: id, docType: docTypes[0], invalidationDate: validUntil)
    }

    /// True when usable at `date`: not cancelled and within the MSO validity.
    public func isUsable(at date: Date) -> Bool { !isCancelled && date >= validFrom && date <= validUntil }

    /// The device key's signer (the response path's; behind SPI so no holder of a context gets a
    /// signing capability), resolved through the context's `DeviceKeyResolver` on first use and
    /// kept: `keyUnavailable` when the reference does not resolve or the key is not the MSO's
    /// `deviceKey` (a failure is not kept; the next call tries again).
    @_spi(Testing) public func signer() throws(PresentmentError) -> any COSESigner {
        if let box = resolved.load() { return box.signer }
        let s = try resolver.signer(for: deviceKeyReference)
        guard s.publicKey == mobileSecurityObject.deviceKey else {
            throw PresentmentError(KeyRule.keyMismatch)
        }
        // Two threads may resolve at once; the first stored wins and both use it.
        return resolved.storeIfNil(ResolvedSigner(s)).signer
    }

    init(
        id: String, docTypes: [String]?, issuerSignedBytes: [UInt8], deviceKeyReference: String, isCancelled: Bool,
        resolver: any DeviceKeyResolver, validatingKey: Bool
    ) throws(PresentmentError) {
        guard !id.isEmpty, id.utf8.count <= 128 else {
            throw PresentmentError(ContextRule.credentialIDLength)
        }
        let parsed: IssuerSigned
        do { parsed = try IssuerSigned(encoded: issuerSignedBytes) } catch {
            throw PresentmentError(ContextRule.issuerSignedInvalid, underlying: error)
        }
        let mso: MobileSecurityObject
        do { mso = try parsed.mobileSecurityObject() } catch {
            throw PresentmentError(ContextRule.msoInvalid, underlying: error)
        }
        // Integrity: every item matches its MSO digest, and issuerAuth verifies with its own document
        // signer certificate (trust in the issuer is the verifier's business; corruption is ours).
        do { try parsed.checkValueDigests(against: mso) } catch {
            throw PresentmentError(ContextRule.itemDigestMismatch)
        }
        var dsCurve: COSEKey.Curve?
        if let der = try? parsed.issuerAuth.headers.x5chain().first {
            guard let ds = try? Certificate(der: der), let key = try? ds.publicKey(),
                (try? parsed.issuerAuth.verify(key: key)) != nil
            else {
                throw PresentmentError(ContextRule.issuerAuthInvalid)
            }
            dsCurve = key.curve
        }
        let chain = (try? parsed.issuerAuth.headers.x5chain()) ?? []
        issuerAuthorityKeyIDs = chain.compactMap { try? Certificate(der: $0).authorityKeyIdentifier }
        issuerAuthAlgorithms =
            (try? parsed.issuerAuth.algorithm()).map { COSEAlgorithm.satisfied(by: $0.rawValue, curve: dsCurve) } ?? []
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
        let types = docTypes ?? [mso.docType]
        guard types.first == mso.docType else {
            throw PresentmentError(ContextRule.docTypesMismatch)
        }
        var items = [ElementID: IssuerSignedItem]()
        let spaces = parsed.nameSpaces.sorted { CBORWriter.textKeyPrecedes($0.name, $1.name) }
        var ordered = [IndexedItem]()
        var index = [ElementID: Int]()
        for (nsIndex, ns) in spaces.enumerated() {
            guard nsIndex == 0 || spaces[nsIndex - 1].name != ns.name else {
                throw PresentmentError(ContextRule.repeatedNamespace)
            }
            for item in ns.items {
                let key = ElementID(ns.name, item.elementIdentifier)
                guard items[key] == nil else {
                    throw PresentmentError(ContextRule.repeatedElement)
                }
                items[key] = item
                index[key] = ordered.count
                ordered.append(
                    IndexedItem(id: key, range: item.bytes.startIndex..<item.bytes.endIndex, nameSpaceIndex: nsIndex))
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
