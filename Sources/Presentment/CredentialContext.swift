#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
import Synchronization

/// The credential context snapshot the host app writes and the responder reads: credentials, the
/// holder's reader-trust policy, and where device keys are. Immutable; writing is all or nothing.
public struct CredentialContext: Sendable {
    /// The on-disk format identifier.
    package static let formatName = "mdoc-respond-context"
    /// The on-disk format version.
    package static let formatVersion: UInt64 = 1
    /// The snapshot's file name inside the context directory.
    public static let fileName = "context.cbor"
    /// The largest snapshot accepted.
    public static let maxFileSize = 64 << 20

    /// One credential as the host app registers it.
    public struct Entry: Sendable {
        /// The credential identifier, unique within the snapshot (writing a duplicate throws).
        public var id: String
        /// docTypes (default: the MSO docType).
        public var docTypes: [String]?
        /// IssuerSigned exactly as issued: its IssuerSignedItemBytes are released verbatim.
        public var issuerSigned: [UInt8]
        /// Device key reference for the resolver (e.g. `keys/mdl.pem`).
        public var deviceKeyReference: String
        /// Set by the host app when the credential is revoked or removed: never presented (still listed, marked cancelled).
        public var isCancelled: Bool
        /// Creates an entry.
        public init(
            id: String, docTypes: [String]? = nil, issuerSigned: [UInt8], deviceKeyReference: String,
            isCancelled: Bool = false
        ) {
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
    public init(
        entries: [Entry], readerTrust: ReaderTrustPolicy = ReaderTrustPolicy(), keyResolver: any DeviceKeyResolver,
        validatingKeys: Bool = true
    ) throws(PresentmentError) {
        try self.init(
            entries: entries, readerTrust: readerTrust, keyResolver: keyResolver, validatingKeys: validatingKeys,
            nextCredentialNumber: nil)
    }

    init(
        entries: [Entry], readerTrust: ReaderTrustPolicy, keyResolver: any DeviceKeyResolver, validatingKeys: Bool,
        nextCredentialNumber: UInt64?
    ) throws(PresentmentError) {
        var creds = [StoredCredential]()
        creds.reserveCapacity(entries.count)
        for e in entries {
            creds.append(
                try StoredCredential(
                    id: e.id, docTypes: e.docTypes, issuerSignedBytes: e.issuerSigned,
                    deviceKeyReference: e.deviceKeyReference,
                    isCancelled: e.isCancelled, resolver: keyResolver, validatingKey: validatingKeys))
        }
        try self.init(checking: creds, readerTrust: readerTrust, nextCredentialNumber: nextCredentialNumber)
    }

    /// A context over built credentials: ids unique, the default-id counter past every `credential-N`.
    init(checking creds: [StoredCredential], readerTrust: ReaderTrustPolicy, nextCredentialNumber: UInt64?)
        throws(PresentmentError)
    {
        // Ids unique: compared pairwise while there are few (no hashing, no set: a holder has a handful),
        // through a set beyond that, so the check stays linear in the number of credentials.
        if creds.count <= Self.pairwiseIDs {
            for i in creds.indices {
                for j in 0..<i where creds[j].id == creds[i].id { throw PresentmentError(ContextRule.duplicateID) }
            }
        } else {
            var seen = Set<String>(minimumCapacity: creds.count)
            for c in creds {
                guard seen.insert(c.id).inserted else { throw PresentmentError(ContextRule.duplicateID) }
            }
        }
        credentials = creds
        self.readerTrust = readerTrust
        // Never below one past the highest `credential-N` id present: a default id is never reused.
        var highest: UInt64 = 0
        for c in creds where c.id.hasPrefix(Self.defaultIDPrefix) {
            if let n = UInt64(c.id.dropFirst(Self.defaultIDPrefix.count)) { highest = max(highest, n) }
        }
        self.nextCredentialNumber = max(nextCredentialNumber ?? 1, highest == UInt64.max ? highest : highest + 1)
    }

    /// Up to this many credentials, ids are compared pairwise; more go through a set.
    static let pairwiseIDs = 32
    /// Default credential ids are `credential-N`.
    static let defaultIDPrefix = "credential-"
    /// The N of the next default id: stored in the snapshot and only ever increased, so an id is never
    /// handed out twice, even after its credential was removed.
    let nextCredentialNumber: UInt64

    /// The entries, for editing and rewriting.
    public var entries: [Entry] {
        credentials.map {
            Entry(
                id: $0.id, docTypes: $0.docTypes, issuerSigned: $0.issuerSignedBytes,
                deviceKeyReference: $0.deviceKeyReference, isCancelled: $0.isCancelled)
        }
    }

    /// Registration metadata for every credential.
    public var registrations: [RegistrationInfo] { credentials.map(\.registration) }

    /// Indexes every usable credential of the queries' docTypes (those a request can select), so a
    /// credential whose stored bytes fail is refused with its rule here rather than passed over.
    package func indexCandidates(_ queries: [DocumentQuery], at now: Date) throws(PresentmentError) {
        for c in credentials where c.isUsable(at: now) && queries.contains(where: { c.docTypes.contains($0.docType) }) {
            _ = try c.index()
        }
    }

    /// The credential with `id`.
    public func credential(id: String) -> StoredCredential? { credentials.first { $0.id == id } }
}
