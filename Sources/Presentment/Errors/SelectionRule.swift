/// The rules of selection and consent: which stored credential answers, and that nothing leaves
/// beyond what the holder approved and the platform showed.
public enum SelectionRule: String, RefusalRule {
    /// No credential with the given id.
    case unknownCredentialID
    /// The chosen credential is unknown.
    case chosenCredentialUnknown
    /// No usable credential for a requested docType.
    case noUsableCredential
    /// Nothing approved and held for a requested document.
    case nothingReleasable
    /// A mandatory use case has no document set the wallet can answer.
    case mandatoryUseCase
    /// No use case can be answered.
    case noUseCase
    /// The request cannot be answered from this wallet (the refusal's reason is withheld by the error-disclosure policy).
    case notAnswered
    /// The request asks for a document or element the user was not shown.
    case requestNotShown
    /// The response would release an element (a substitute) the user was not shown.
    case releaseNotShown

    /// The domain of these rules.
    public static let domain = "selection"

    /// The code a refusal by this rule carries.
    public var code: PresentmentError.Code {
        switch self {
        case .unknownCredentialID, .chosenCredentialUnknown, .noUsableCredential: .noMatchingCredential
        case .nothingReleasable, .mandatoryUseCase, .noUseCase, .notAnswered: .cannotSatisfyRequest
        case .requestNotShown, .releaseNotShown: .consentMismatch
        }
    }

    /// What the rule requires, in words.
    public var summary: String {
        switch self {
        case .unknownCredentialID: "no credential with the given id"
        case .chosenCredentialUnknown: "the chosen credential is unknown"
        case .noUsableCredential: "no usable credential for a requested docType"
        case .nothingReleasable: "nothing approved and held for a requested document"
        case .mandatoryUseCase: "a mandatory use case has no document set the wallet can answer"
        case .noUseCase: "no use case can be answered"
        case .notAnswered:
            "the request cannot be answered from this wallet (the refusal's reason is withheld by the error-disclosure policy)"
        case .requestNotShown: "the request asks for a document or element the user was not shown"
        case .releaseNotShown: "the response would release an element (a substitute) the user was not shown"
        }
    }
}
