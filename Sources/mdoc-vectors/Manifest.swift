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
    let expected: Expected
    struct Expected: Encodable {
        let outcome: String
        let error: String?
        let disclosed: [String: [String]]?
        /// The request's reader verdict: notAuthenticated, trusted, or signedNotTrusted:<reason>.
        var readerVerdict: String? = nil
    }
}
