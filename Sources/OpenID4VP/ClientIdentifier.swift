internal import CryptoCore
import MdocCBOR
import Presentment
import WebEncoding

/// A `client_id` with its prefix (OpenID4VP §5.9). Only the two X.509 prefixes authenticate a request
/// over the Digital Credentials API here; every other prefix, and a `client_id` without one, is
/// refused distinctly (`unsupportedClientIdentifier`).
enum ClientIdentifier {
    case sanDNS(String)
    case hash([UInt8])

    init(_ clientID: String) throws(PresentmentError) {
        guard let colon = clientID.firstIndex(of: ":") else {
            throw PresentmentError(OpenID4VPRule.clientIDNoPrefix)
        }
        let prefix = clientID[..<colon]
        let rest = String(clientID[clientID.index(after: colon)...])
        switch prefix {
        case "x509_san_dns":
            guard !rest.isEmpty, rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                throw PresentmentError(OpenID4VPRule.sanDNSNotDNSName)
            }
            self = .sanDNS(rest)
        case "x509_hash":
            guard let h = Base64URL.decode(rest), h.count == 32 else {
                throw PresentmentError(OpenID4VPRule.hashNotSHA256)
            }
            self = .hash(h)
        case "redirect_uri":
            throw PresentmentError(OpenID4VPRule.redirectURIPrefix)
        case "origin":
            throw PresentmentError(OpenID4VPRule.originPrefix)
        case "decentralized_identifier", "verifier_attestation", "openid_federation":
            throw PresentmentError(OpenID4VPRule.prefixUnsupported)
        default:
            throw PresentmentError(OpenID4VPRule.prefixUnsupported)
        }
    }

    /// Whether the leaf certificate is the one the identifier names.
    func check(leaf: Certificate, label: String) throws(PresentmentError) {
        switch self {
        case .sanDNS(let name):
            guard leaf.dnsNames.contains(where: { $0.lowercased() == name.lowercased() }) else {
                throw PresentmentError(OpenID4VPRule.clientIDNotSAN, at: label)
            }
        case .hash(let h):
            guard DigestAlgorithm.sha256.hash(leaf.der) == h else {
                throw PresentmentError(OpenID4VPRule.clientIDNotHash, at: label)
            }
        }
    }
}
