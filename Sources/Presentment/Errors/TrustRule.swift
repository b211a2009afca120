/// The rules of the holder's reader-trust policy (`ReaderTrustPolicy`), the same in every protocol.
/// Signatures are a front end's; these decide who may ask once a signature has verified.
public enum TrustRule: String, RefusalRule {
    case authorityNotAllowed
    case readerNotTrusted
    case signatureRequired
    case documentNotCovered

    /// The domain of these rules.
    public static let domain = "trust"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .authorityNotAllowed:
            (.untrustedReader, "reader certificate authority is not in the holder's allowed authorities")
        case .readerNotTrusted:
            (.untrustedReader, "the holder's policy requires a trusted reader and this reader is not trusted")
        case .signatureRequired:
            (
                .readerAuthenticationRequired,
                "the holder's policy requires reader authentication and the request is not signed"
            )
        case .documentNotCovered:
            (
                .readerAuthenticationRequired,
                "the holder's policy requires reader authentication and this DocRequest is not covered by it"
            )
        }
    }
}
