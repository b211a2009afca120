/// The rules of the holder's reader-trust policy (`ReaderTrustPolicy`), the same in every protocol.
/// Signatures are a front end's; these decide who may ask once a signature has verified.
public enum TrustRule: String, RefusalRule {
    /// Reader certificate authority is not in the holder's allowed authorities.
    case authorityNotAllowed
    /// The holder's policy requires a trusted reader and this reader is not trusted.
    case readerNotTrusted
    /// The holder's policy requires reader authentication and the request is not signed.
    case signatureRequired
    /// The holder's policy requires reader authentication and this DocRequest is not covered by it.
    case documentNotCovered

    /// The domain of these rules.
    public static let domain = "trust"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .authorityNotAllowed, .readerNotTrusted: .untrustedReader
        case .signatureRequired, .documentNotCovered: .readerAuthenticationRequired
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .authorityNotAllowed: "reader certificate authority is not in the holder's allowed authorities"
        case .readerNotTrusted: "the holder's policy requires a trusted reader and this reader is not trusted"
        case .signatureRequired: "the holder's policy requires reader authentication and the request is not signed"
        case .documentNotCovered:
            "the holder's policy requires reader authentication and this DocRequest is not covered by it"
        }
    }
}
