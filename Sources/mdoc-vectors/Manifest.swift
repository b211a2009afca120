import DigitalCredentials
import AnnexCReader
import Foundation
import HPKE
import MdocCBOR

struct Case: Encodable {
    let id: String
    let file: String
    let origin: String
    let framing: String
    let version: String
    let readerAuth: String
    let readerKey: String
    let encryptionInfo: String
    let deviceRequest: String
    let documents: [[String: [String]]]
    /// alternativeDataElements of the (single) requested document: "ns/element" → alternative sets.
    let alternatives: [String: [[String]]]?
    /// Reader-trust policy switches applied to the built-in context for this case.
    let policy: [String: Bool]?
    let expected: ExpectedOutcome
}

/// What a case expects of the engine, in either protocol's manifest.
struct ExpectedOutcome: Encodable {
    /// `ok` or `refused`.
    let outcome: String
    /// The refusal's code.
    let error: String?
    /// Per document (Annex C: docType; OpenID4VP: credential query id), the disclosed "ns/element" names.
    let disclosed: [String: [String]]?
    /// Annex C: the request's reader verdict (notAuthenticated, trusted, or signedNotTrusted:<reason>).
    var readerVerdict: String? = nil
    /// OpenID4VP: the verifier's verdict, in the same words.
    var verifierVerdict: String? = nil

    /// An answer disclosing `disclosed`.
    static func ok(_ disclosed: [String: [String]], readerVerdict: String? = nil, verifierVerdict: String? = nil)
        -> ExpectedOutcome
    {
        ExpectedOutcome(
            outcome: "ok", error: nil, disclosed: disclosed, readerVerdict: readerVerdict,
            verifierVerdict: verifierVerdict)
    }

    /// A refusal with `code`.
    static func refused(_ code: PresentmentError.Code) -> ExpectedOutcome {
        ExpectedOutcome(outcome: "refused", error: code.rawValue, disclosed: nil)
    }
}
