/// The rules of the credential context: the store on disk (files, modes, the writer lock), the
/// snapshot's encoding, and each credential's validation when a snapshot is loaded or written.
public enum ContextRule: String, RefusalRule {
    /// No context in this directory.
    case noContext
    /// Context directory does not exist.
    case directoryMissing
    /// Context directory cannot be examined.
    case directoryUnexaminable
    /// Cannot create the context directory.
    case directoryUncreatable
    /// Context directory is not a directory (or is a symbolic link).
    case directoryNotDirectory
    /// Context directory is not owned by this user.
    case directoryNotOwned
    /// Context directory is writable by group or others.
    case directoryWritable
    /// The key directory is not a directory (or is a symbolic link).
    case keyDirectoryNotDirectory
    /// Cannot create the key directory.
    case keyDirectoryUncreatable
    /// Context path is a symbolic link.
    case pathIsLink
    /// Context path is not a regular file.
    case notRegularFile
    /// Context file cannot be opened.
    case fileUnopenable
    /// Context file cannot be examined.
    case fileUnexaminable
    /// Context file cannot be read.
    case fileUnreadable
    /// Context file is not owned by this user.
    case fileNotOwned
    /// Context file is readable or writable by group or others (expected mode 0600).
    case fileNotPrivate
    /// Context file larger than the snapshot limit (64 MiB).
    case fileTooLarge
    /// Cannot open the context lock file.
    case lockFileUnavailable
    /// Cannot lock the context.
    case lockFailed
    /// Another writer holds the context lock (waited the configured time).
    case busy
    /// Cannot write the device key file.
    case keyFileUnwritable
    /// Cannot find a free device key file name.
    case noFreeKeyFileName
    /// Cannot create a temporary file in the context directory.
    case temporaryFileUncreatable
    /// Cannot write a file in the context directory.
    case fileUnwritable
    /// Cannot write the context file.
    case contextFileUnwritable
    /// Snapshot is not well-formed CBOR.
    case snapshotNotCBOR
    /// Not a credential context snapshot.
    case notASnapshot
    /// Snapshot version missing.
    case versionMissing
    /// Snapshot version is not supported (this engine reads version 1).
    case versionUnsupported
    /// Credentials missing.
    case credentialsMissing
    /// Credential entry lacks a field or has a wrong type.
    case entryShape
    /// Credential docType is not text.
    case docTypeNotText
    /// Credential has no docTypes.
    case noDocTypes
    /// ReaderTrust missing.
    case readerTrustMissing
    /// ReaderTrust.anchors is not an array.
    case anchorsNotArray
    /// Reader trust anchor is not a DER certificate.
    case anchorNotCertificate
    /// ReaderTrust.authorities is not an array.
    case authoritiesNotArray
    /// Authority key identifier is not a byte string.
    case authorityNotBytes
    /// ReaderTrust.signerProfile is not a known profile.
    case signerProfileUnknown
    /// NextCredentialNumber is not an unsigned integer.
    case nextCredentialNumber
    /// Stored validity does not match the credential's MSO.
    case validityMismatch
    /// Duplicate credential id.
    case duplicateID
    /// Credential id is empty or longer than 128 bytes.
    case credentialIDLength
    /// Credential IssuerSigned does not parse.
    case issuerSignedInvalid
    /// Credential MSO does not parse.
    case msoInvalid
    /// A credential item does not match its MSO digest.
    case itemDigestMismatch
    /// Credential issuerAuth does not verify with its document signer certificate.
    case issuerAuthInvalid
    /// Credential docTypes do not start with the MSO docType.
    case docTypesMismatch
    /// Credential repeats a namespace.
    case repeatedNamespace
    /// Credential holds an element twice.
    case repeatedElement
    /// The change adds a credential id that exists already.
    case duplicateCredential
    /// The change names a credential that does not exist.
    case unknownCredential
    /// A context already exists in that directory.
    case contextExists

    /// The domain of these rules.
    public static let domain = "context"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .noContext, .directoryMissing, .directoryUnexaminable, .directoryUncreatable, .keyDirectoryUncreatable,
            .fileUnopenable, .fileUnexaminable, .fileUnreadable, .lockFileUnavailable, .lockFailed, .keyFileUnwritable,
            .noFreeKeyFileName, .temporaryFileUncreatable, .fileUnwritable, .contextFileUnwritable:
            .contextUnavailable
        case .directoryNotDirectory, .directoryNotOwned, .directoryWritable, .keyDirectoryNotDirectory, .fileNotOwned,
            .fileNotPrivate:
            .contextInsecure
        case .pathIsLink, .notRegularFile, .fileTooLarge, .snapshotNotCBOR, .notASnapshot, .versionMissing,
            .versionUnsupported, .credentialsMissing, .entryShape, .docTypeNotText, .noDocTypes, .readerTrustMissing,
            .anchorsNotArray, .anchorNotCertificate, .authoritiesNotArray, .authorityNotBytes, .signerProfileUnknown,
            .nextCredentialNumber, .validityMismatch, .duplicateID, .credentialIDLength, .issuerSignedInvalid,
            .msoInvalid, .itemDigestMismatch, .issuerAuthInvalid, .docTypesMismatch, .repeatedNamespace,
            .repeatedElement:
            .contextCorrupt
        case .busy: .contextBusy
        case .duplicateCredential, .contextExists: .duplicateCredential
        case .unknownCredential: .unknownCredential
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .noContext: "no context in this directory"
        case .directoryMissing: "context directory does not exist"
        case .directoryUnexaminable: "context directory cannot be examined"
        case .directoryUncreatable: "cannot create the context directory"
        case .directoryNotDirectory: "context directory is not a directory (or is a symbolic link)"
        case .directoryNotOwned: "context directory is not owned by this user"
        case .directoryWritable: "context directory is writable by group or others"
        case .keyDirectoryNotDirectory: "the key directory is not a directory (or is a symbolic link)"
        case .keyDirectoryUncreatable: "cannot create the key directory"
        case .pathIsLink: "context path is a symbolic link"
        case .notRegularFile: "context path is not a regular file"
        case .fileUnopenable: "context file cannot be opened"
        case .fileUnexaminable: "context file cannot be examined"
        case .fileUnreadable: "context file cannot be read"
        case .fileNotOwned: "context file is not owned by this user"
        case .fileNotPrivate: "context file is readable or writable by group or others (expected mode 0600)"
        case .fileTooLarge: "context file larger than the snapshot limit (64 MiB)"
        case .lockFileUnavailable: "cannot open the context lock file"
        case .lockFailed: "cannot lock the context"
        case .busy: "another writer holds the context lock (waited the configured time)"
        case .keyFileUnwritable: "cannot write the device key file"
        case .noFreeKeyFileName: "cannot find a free device key file name"
        case .temporaryFileUncreatable: "cannot create a temporary file in the context directory"
        case .fileUnwritable: "cannot write a file in the context directory"
        case .contextFileUnwritable: "cannot write the context file"
        case .snapshotNotCBOR: "snapshot is not well-formed CBOR"
        case .notASnapshot: "not a credential context snapshot"
        case .versionMissing: "snapshot version missing"
        case .versionUnsupported: "snapshot version is not supported (this engine reads version 1)"
        case .credentialsMissing: "credentials missing"
        case .entryShape: "credential entry lacks a field or has a wrong type"
        case .docTypeNotText: "credential docType is not text"
        case .noDocTypes: "credential has no docTypes"
        case .readerTrustMissing: "readerTrust missing"
        case .anchorsNotArray: "readerTrust.anchors is not an array"
        case .anchorNotCertificate: "reader trust anchor is not a DER certificate"
        case .authoritiesNotArray: "readerTrust.authorities is not an array"
        case .authorityNotBytes: "authority key identifier is not a byte string"
        case .signerProfileUnknown: "readerTrust.signerProfile is not a known profile"
        case .nextCredentialNumber: "nextCredentialNumber is not an unsigned integer"
        case .validityMismatch: "stored validity does not match the credential's MSO"
        case .duplicateID: "duplicate credential id"
        case .credentialIDLength: "credential id is empty or longer than 128 bytes"
        case .issuerSignedInvalid: "credential IssuerSigned does not parse"
        case .msoInvalid: "credential MSO does not parse"
        case .itemDigestMismatch: "a credential item does not match its MSO digest"
        case .issuerAuthInvalid: "credential issuerAuth does not verify with its document signer certificate"
        case .docTypesMismatch: "credential docTypes do not start with the MSO docType"
        case .repeatedNamespace: "credential repeats a namespace"
        case .repeatedElement: "credential holds an element twice"
        case .duplicateCredential: "the change adds a credential id that exists already"
        case .unknownCredential: "the change names a credential that does not exist"
        case .contextExists: "a context already exists in that directory"
        }
    }
}
