/// Who signed a request and what each signature covers, as the consent model shows it (recorded in
/// full only when `CheckEnvironment.consent`; `accept` needs only the refusals).
package struct ReaderAuthentication: Sendable {
    /// The request-level verdict a one-line summary may show.
    package let verdict: ReaderVerdict
    /// Each distinct reader certificate that signed, in signature order, with its verdict.
    package let readers: [ReaderVerdict]
    /// Every signature that verified, in request order.
    package let signatures: [RequestSignature]
    /// Per document, in request order: its verdict and the labels of the signatures covering it.
    /// Empty: every document has `verdict` and is covered by every signature.
    package let perDocument: [(verdict: ReaderVerdict, signatures: [String])]

    /// An unsigned request's (or one whose signatures were not recorded).
    package static let unsigned = ReaderAuthentication(verdict: .notAuthenticated, readers: [], signatures: [])

    /// Every document under the same verdict, covered by every signature.
    package init(
        verdict: ReaderVerdict, readers: [ReaderVerdict], signatures: [RequestSignature],
        perDocument: [(verdict: ReaderVerdict, signatures: [String])] = []
    ) {
        self.verdict = verdict
        self.readers = readers
        self.signatures = signatures
        self.perDocument = perDocument
    }

    /// Document `i`'s verdict.
    package func verdict(forDocument i: Int) -> ReaderVerdict { perDocument.isEmpty ? verdict : perDocument[i].verdict }

    /// The labels of the signatures covering document `i`.
    package func signatures(forDocument i: Int) -> [String] {
        perDocument.isEmpty ? signatures.map(\.label) : perDocument[i].signatures
    }
}

/// A reader or verifier signature over a request that verified, and who signed it: every verifier
/// identity a consent screen must show.
public struct RequestSignature: Sendable, Hashable {
    /// Which signature (`docRequests[0].readerAuth`, `readerAuthAll[0]`, `request`, `signatures[1]`).
    public let label: String
    /// The OpenID4VP `client_id` it authenticates (`x509_san_dns:…`, `x509_hash:…`); nil for Annex C.
    public let clientID: String?
    /// Subjects of its certificate chain, leaf first.
    public let certificateSubjects: [String]
    /// The signer's verdict under the holder's policy.
    public let verdict: ReaderVerdict

    package init(label: String, clientID: String?, certificateSubjects: [String], verdict: ReaderVerdict) {
        self.label = label
        self.clientID = clientID
        self.certificateSubjects = certificateSubjects
        self.verdict = verdict
    }
}
