/// The rules of selection and consent: which stored credential answers, and that nothing leaves
/// beyond what the holder approved and the platform showed.
public enum SelectionRule: String, RefusalRule {
    case unknownCredentialID
    case chosenCredentialUnknown
    case noUsableCredential
    case nothingReleasable
    case mandatoryUseCase
    case noUseCase
    case notAnswered
    case requestNotShown
    case releaseNotShown
    case credentialWithdrawn
    case credentialNotValidNow

    /// The domain of these rules.
    public static let domain = "selection"

    /// Each rule's code and what it requires, in words.
    public var definition: (code: PresentmentError.Code, summary: String) {
        switch self {
        case .unknownCredentialID: (.noMatchingCredential, "no credential with the given id")
        case .chosenCredentialUnknown: (.noMatchingCredential, "the chosen credential is unknown")
        case .noUsableCredential: (.noMatchingCredential, "no usable credential for a requested docType")
        case .nothingReleasable: (.cannotSatisfyRequest, "nothing approved and held for a requested document")
        case .mandatoryUseCase:
            (.cannotSatisfyRequest, "a mandatory use case has no document set the wallet can answer")
        case .noUseCase: (.cannotSatisfyRequest, "no use case can be answered")
        case .notAnswered:
            (
                .cannotSatisfyRequest,
                "the request cannot be answered from this wallet (the refusal's reason is withheld by the error-disclosure policy)"
            )
        case .requestNotShown: (.consentMismatch, "the request asks for a document or element the user was not shown")
        case .releaseNotShown:
            (.consentMismatch, "the response would release an element (a substitute) the user was not shown")
        case .credentialWithdrawn:
            (
                .noMatchingCredential,
                "the chosen credential was cancelled, removed or replaced in the store after the request was read"
            )
        case .credentialNotValidNow:
            (.noMatchingCredential, "the chosen credential is outside its validity period at the time of answering")
        }
    }
}
