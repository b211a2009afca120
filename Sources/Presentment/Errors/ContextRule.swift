/// The rules of the credential context: the store on disk (files, modes, the writer lock), the
/// snapshot's encoding, and each credential's validation when a snapshot is loaded or written.
public enum ContextRule: String, RefusalRule {
    case noContext
    case directoryMissing
    case directoryUnexaminable
    case directoryUncreatable
    case directoryNotDirectory
    case directoryNotOwned
    case directoryWritable
    case keyDirectoryNotDirectory
    case keyDirectoryUncreatable
    case pathIsLink
    case notRegularFile
    case fileUnopenable
    case fileUnexaminable
    case fileUnreadable
    case fileNotOwned
    case fileNotPrivate
    case fileTooLarge
    case lockFileUnavailable
    case lockFailed
    case busy
    case keyFileUnwritable
    case noFreeKeyFileName
    case temporaryFileUncreatable
    case fileUnwritable
    case contextFileUnwritable
    case snapshotNotCBOR
    case notASnapshot
    case versionMissing
    case versionUnsupported
    case credentialsMissing
    case entryShape
    case docTypeNotText
    case noDocTypes
    case readerTrustMissing
    case anchorsNotArray
    case anchorNotCertificate
    case authoritiesNotArray
    case authorityNotBytes
    case signerProfileUnknown
    case anchorPurposesInvalid
    case anchorCannotAnchor
    case configurationWidensStore
    case nextCredentialNumber
    case validityMismatch
    case duplicateID
    case credentialIDLength
    case issuerSignedInvalid
    case msoInvalid
    case itemDigestMismatch
    case issuerAuthInvalid
    case docTypesMismatch
    case repeatedNamespace
    case repeatedElement
    case duplicateCredential
    case unknownCredential
    case contextExists

    /// The domain of these rules.
    public static let domain = "context"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .noContext: (.contextUnavailable, "no context in this directory")
        case .directoryMissing: (.contextUnavailable, "context directory does not exist")
        case .directoryUnexaminable: (.contextUnavailable, "context directory cannot be examined")
        case .directoryUncreatable: (.contextUnavailable, "cannot create the context directory")
        case .directoryNotDirectory: (.contextInsecure, "context directory is not a directory (or is a symbolic link)")
        case .directoryNotOwned: (.contextInsecure, "context directory is not owned by this user")
        case .directoryWritable: (.contextInsecure, "context directory is writable by group or others")
        case .keyDirectoryNotDirectory:
            (.contextInsecure, "the key directory is not a directory (or is a symbolic link)")
        case .keyDirectoryUncreatable: (.contextUnavailable, "cannot create the key directory")
        case .pathIsLink: (.contextCorrupt, "context path is a symbolic link")
        case .notRegularFile: (.contextCorrupt, "context path is not a regular file")
        case .fileUnopenable: (.contextUnavailable, "context file cannot be opened")
        case .fileUnexaminable: (.contextUnavailable, "context file cannot be examined")
        case .fileUnreadable: (.contextUnavailable, "context file cannot be read")
        case .fileNotOwned: (.contextInsecure, "context file is not owned by this user")
        case .fileNotPrivate:
            (.contextInsecure, "context file is readable or writable by group or others (expected mode 0600)")
        case .fileTooLarge: (.contextCorrupt, "context file larger than the snapshot limit (64 MiB)")
        case .lockFileUnavailable: (.contextUnavailable, "cannot open the context lock file")
        case .lockFailed: (.contextUnavailable, "cannot lock the context")
        case .busy: (.contextBusy, "another writer holds the context lock (waited the configured time)")
        case .keyFileUnwritable: (.contextUnavailable, "cannot write the device key file")
        case .noFreeKeyFileName: (.contextUnavailable, "cannot find a free device key file name")
        case .temporaryFileUncreatable: (.contextUnavailable, "cannot create a temporary file in the context directory")
        case .fileUnwritable: (.contextUnavailable, "cannot write a file in the context directory")
        case .contextFileUnwritable: (.contextUnavailable, "cannot write the context file")
        case .snapshotNotCBOR: (.contextCorrupt, "snapshot is not well-formed CBOR")
        case .notASnapshot: (.contextCorrupt, "not a credential context snapshot")
        case .versionMissing: (.contextCorrupt, "snapshot version missing")
        case .versionUnsupported: (.contextCorrupt, "snapshot version is not supported (this engine reads version 1)")
        case .credentialsMissing: (.contextCorrupt, "credentials missing")
        case .entryShape: (.contextCorrupt, "credential entry lacks a field or has a wrong type")
        case .docTypeNotText: (.contextCorrupt, "credential docType is not text")
        case .noDocTypes: (.contextCorrupt, "credential has no docTypes")
        case .readerTrustMissing: (.contextCorrupt, "readerTrust missing")
        case .anchorsNotArray: (.contextCorrupt, "readerTrust.anchors is not an array")
        case .anchorNotCertificate: (.contextCorrupt, "reader trust anchor is not a DER certificate")
        case .authoritiesNotArray: (.contextCorrupt, "readerTrust.authorities is not an array")
        case .authorityNotBytes: (.contextCorrupt, "authority key identifier is not a byte string")
        case .signerProfileUnknown: (.contextCorrupt, "readerTrust.signerProfile is not a known profile")
        case .anchorPurposesInvalid:
            (
                .contextCorrupt,
                "readerTrust.anchorPurposes must list, per anchor, mdocReader, relyingParty or null"
            )
        case .configurationWidensStore:
            (
                .contextCorrupt,
                "the engine's configuration narrows the stored reader-trust policy and would now widen it (an anchor, authority or requirement it names changed in the store): reopen the engine with a configuration that fits"
            )
        case .anchorCannotAnchor:
            (
                .contextCorrupt,
                "a trust anchor must be a CA certificate (basicConstraints cA) whose keyUsage, when present, allows keyCertSign"
            )
        case .nextCredentialNumber: (.contextCorrupt, "nextCredentialNumber is not an unsigned integer")
        case .validityMismatch: (.contextCorrupt, "stored validity does not match the credential's MSO")
        case .duplicateID: (.contextCorrupt, "duplicate credential id")
        case .credentialIDLength: (.contextCorrupt, "credential id is empty or longer than 128 bytes")
        case .issuerSignedInvalid: (.contextCorrupt, "credential IssuerSigned does not parse")
        case .msoInvalid: (.contextCorrupt, "credential MSO does not parse")
        case .itemDigestMismatch: (.contextCorrupt, "a credential item does not match its MSO digest")
        case .issuerAuthInvalid:
            (.contextCorrupt, "credential issuerAuth does not verify with its document signer certificate")
        case .docTypesMismatch: (.contextCorrupt, "credential docTypes do not start with the MSO docType")
        case .repeatedNamespace: (.contextCorrupt, "credential repeats a namespace")
        case .repeatedElement: (.contextCorrupt, "credential holds an element twice")
        case .duplicateCredential: (.duplicateCredential, "the change adds a credential id that exists already")
        case .unknownCredential: (.unknownCredential, "the change names a credential that does not exist")
        case .contextExists: (.duplicateCredential, "a context already exists in that directory")
        }
    }
}
