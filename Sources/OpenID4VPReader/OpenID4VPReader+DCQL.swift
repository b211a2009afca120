#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore
import AnnexCReader
import DCAPIFraming
import JOSE
import MdocCBOR
import OpenID4VP
import Presentment
import WebEncoding

extension OpenID4VPReader {
    /// Reads a DCQL query (as this library writes them) back into credential queries and sets.
    package static func queries(fromDCQL dcql: JSONValue) throws(PresentmentError) -> (
        [CredentialQuery], [CredentialSet]
    ) {
        func bad(_ what: String) -> PresentmentError {
            PresentmentError(OpenID4VPVerifierRule.dcqlUnreadable, at: what)
        }
        guard case .array(let list)? = dcql["credentials"] else { throw bad("credentials") }
        var queries = [CredentialQuery]()
        for q in list {
            guard let id = q["id"]?.string, let format = q["format"]?.string else { throw bad("id/format") }
            var claims: [Claim]?
            if case .array(let cs)? = q["claims"] {
                claims = []
                for c in cs {
                    guard case .array(let path)? = c["path"], path.count == 2, let ns = path[0].string,
                        let e = path[1].string
                    else { throw bad("path") }
                    var values: [ClaimValue]?
                    if case .array(let vs)? = c["values"] {
                        values = vs.compactMap { v in
                            switch v {
                            case .string(let s): .text(s)
                            case .bool(let b): .bool(b)
                            case .number(let n): n.int64.map { .integer($0) }
                            default: nil
                            }
                        }
                    }
                    claims!.append(
                        Claim(
                            ElementID(ns, e), id: c["id"]?.string, values: values,
                            intentToRetain: c["intent_to_retain"]?.bool))
                }
            }
            let sets = q["claim_sets"]?.array?.map { $0.array?.compactMap(\.string) ?? [] }
            var akis: [[UInt8]]?
            if case .array(let tas)? = q["trusted_authorities"] {
                akis = tas.flatMap { ($0["values"]?.array ?? []).compactMap { $0.string.flatMap(Base64URL.decode) } }
            }
            queries.append(
                CredentialQuery(
                    id: id, docType: q["meta"]?["doctype_value"]?.string ?? "", claims: claims, claimSets: sets,
                    multiple: q["multiple"]?.bool, trustedAuthorities: akis, format: format))
        }
        let sets: [CredentialSet] = (dcql["credential_sets"]?.array ?? []).map { s in
            CredentialSet(
                options: s["options"]?.array?.map { $0.array?.compactMap(\.string) ?? [] } ?? [],
                required: s["required"]?.bool)
        }
        return (queries, sets)
    }
}
