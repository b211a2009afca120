#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore
import JOSE
import Presentment
import WebEncoding

/// The Authorization Request parameters this wallet acts on (OpenID4VP §5, Appendix A), checked in
/// order: `response_type`, `response_mode`, `nonce`, `transaction_data`, `scope`, `dcql_query`,
/// `client_metadata`, `verifier_info`, and a signed request's `expected_origins` against the origin.
struct AuthorizationParameters {
    let responseMode: OpenID4VPResponseMode
    /// As received.
    let nonce: String
    /// `dcql_query`, read by `DCQLQuery`.
    let dcqlQuery: JSONNode
    /// `client_metadata` (an object when present).
    let clientMetadata: JSONNode?
    /// `verifier_info` entries (kept to show; never trusted).
    let verifierInfo: [JSONNode]

    /// The parameters this reads, found in one walk of the request's keys.
    private static let members: [StaticString] = [
        "response_type", "response_mode", "nonce", "dcql_query", "client_metadata", "transaction_data", "scope",
        "verifier_info",
    ]

    init(_ object: RequestObject, origin: Origin) throws(PresentmentError) {
        let p = object.parameters
        // The members this reads, in one walk of the parameters' keys (checked in the order below).
        var responseType: JSONNode?
        var modeMember: JSONNode?
        var nonceMember: JSONNode?
        var dcql: JSONNode?
        var metadata: JSONNode?
        var transactionData: JSONNode?
        var scope: JSONNode?
        var verifierInfoMember: JSONNode?
        p.members(named: Self.members) { i, value in
            switch i {
            case 0: responseType = value
            case 1: modeMember = value
            case 2: nonceMember = value
            case 3: dcql = value
            case 4: metadata = value
            case 5: transactionData = value
            case 6: scope = value
            default: verifierInfoMember = value
            }
        }
        guard responseType?.isString("vp_token") == true else { throw PresentmentError(OpenID4VPRule.responseType) }
        // Compared in place with each mode's name (no `String` made).
        guard let modeMember,
            let mode = OpenID4VPResponseMode.allCases.first(where: { modeMember.isString($0.rawValue) })
        else { throw PresentmentError(OpenID4VPRule.responseMode) }
        guard let nonce = nonceMember?.string else { throw PresentmentError(OpenID4VPRule.nonceMissing) }
        guard !nonce.isEmpty, nonce.utf8.count <= 512, withUTF8Bytes(nonce, { $0.allSatisfy(Self.isURLSafe) }) else {
            throw PresentmentError(OpenID4VPRule.nonce)
        }
        if transactionData != nil { throw PresentmentError(OpenID4VPRule.transactionData) }
        if scope != nil { throw PresentmentError(OpenID4VPRule.scope) }
        guard let dcql else { throw PresentmentError(OpenID4VPRule.dcqlMissing) }
        if let metadata, !metadata.isObject { throw PresentmentError(OpenID4VPRule.clientMetadataNotObject) }
        var verifierInfo = [JSONNode]()
        if object.form == .multisigned {
            for s in object.signers { verifierInfo += try Self.verifierInfo(s.header.protected["verifier_info"]) }
        } else {
            verifierInfo = try Self.verifierInfo(verifierInfoMember)
        }
        // A signed request: expected_origins, compared with the one serialized origin (WHATWG), the
        // string the transcript and the consent model use.
        if object.form != .unsigned {
            guard let expected = p["expected_origins"]?.elements, !expected.isEmpty, expected.count <= 64,
                expected.allSatisfy({ $0.string != nil })
            else { throw PresentmentError(OpenID4VPRule.expectedOrigins) }
            guard expected.contains(where: { $0.string == origin.serialized }) else {
                throw PresentmentError(OpenID4VPRule.originNotExpected)
            }
        }
        responseMode = mode
        self.nonce = nonce
        dcqlQuery = dcql
        clientMetadata = metadata
        self.verifierInfo = verifierInfo
    }

    /// `[A-Za-z0-9-._~]` (§5.2 `nonce`): one bit per ASCII byte, `-` `.` `0-9` in the low word,
    /// `A-Z` `_` `a-z` `~` in the high one.
    static func isURLSafe(_ b: UInt8) -> Bool {
        let low: UInt64 = 0x3ff << 0x30 | 1 << 0x2d | 1 << 0x2e
        let high: UInt64 = 0x3ff_ffff << (0x41 - 64) | 1 << (0x5f - 64) | 0x3ff_ffff << (0x61 - 64) | 1 << (0x7e - 64)
        return b < 64 ? (low >> b) & 1 == 1 : b < 128 && (high >> (b &- 64)) & 1 == 1
    }

    /// `verifier_info`: a non-empty array of `{format, data, credential_ids?}` (kept to show).
    static func verifierInfo(_ v: JSONNode?) throws(PresentmentError) -> [JSONNode] {
        guard let v else { return [] }
        guard let list = v.elements, !list.isEmpty, list.count <= 16,
            list.allSatisfy({ $0["format"]?.string != nil && $0["data"] != nil })
        else { throw PresentmentError(OpenID4VPRule.verifierInfo) }
        return list
    }
}

/// The verifier's response encryption key and the content encryption chosen for it. A copy retains
/// one reference: the key (a `JWK` is a class).
struct ResponseKey: Sendable {
    let key: JWK
    let encryption: JWEEncryption
}

/// `client_metadata` as this wallet reads it: the response encryption key and content encryption
/// (`dc_api.jwt`), and whether the verifier's `vp_formats_supported` accepts `mso_mdoc` and with which
/// algorithms.
struct ClientMetadata {
    /// The verifier's encryption key and content encryption (`dc_api.jwt` only).
    let responseKey: ResponseKey?
    /// False when `vp_formats_supported` lists no `mso_mdoc` (no mdoc query can then match).
    let formatsAccepted: Bool
    /// `issuerauth_alg_values` and `deviceauth_alg_values`, when given.
    let issuerAuthAlgorithms: [Int64]?
    let deviceAuthAlgorithms: [Int64]?

    init(_ metadata: JSONNode?, mode: OpenID4VPResponseMode, preferA256GCM: Bool) throws(PresentmentError) {
        responseKey = mode == .dcAPIJWT ? try Self.encryptionKey(metadata, preferA256GCM: preferA256GCM) : nil
        (formatsAccepted, issuerAuthAlgorithms, deviceAuthAlgorithms) = try Self.formats(metadata)
    }

    /// The verifier's response encryption key (`client_metadata.jwks`: the first EC key for `ECDH-ES`
    /// whose `use` is absent or `enc`; keys of other types are passed over, an EC key that is not
    /// valid refuses) and content encryption (`encrypted_response_enc_values_supported`, default
    /// `A128GCM`).
    static func encryptionKey(_ metadata: JSONNode?, preferA256GCM: Bool) throws(PresentmentError)
        -> ResponseKey
    {
        guard let keys = metadata?["jwks"]?["keys"], keys.isArray, keys.count > 0, keys.count <= 16 else {
            throw PresentmentError(OpenID4VPRule.jwksMissing)
        }
        var chosen: JWK?
        // The first usable entry is the key; entries after it are not read.
        try keys.forEachElement { k throws(PresentmentError) in
            guard chosen == nil else { return }
            guard k.isObject else { throw PresentmentError(OpenID4VPRule.jwksKeyNotObject) }
            let use = k["use"]
            guard use == nil || use?.spells("enc") == true, k["alg"]?.spells("ECDH-ES") == true,
                k["kty"]?.spells("EC") == true
            else { return }
            do { chosen = try JWK(k) } catch {
                throw PresentmentError(OpenID4VPRule.encryptionKeyInvalid, underlying: error)
            }
        }
        guard let key = chosen else {
            throw PresentmentError(OpenID4VPRule.noEncryptionKey)
        }
        // Which of this wallet's two encryptions the verifier offers (names compared as JSON text).
        var offers128 = true
        var offers256 = false
        if let v = metadata?["encrypted_response_enc_values_supported"] {
            guard v.isArray, v.count > 0, v.count <= 16 else { throw PresentmentError(OpenID4VPRule.encValues) }
            offers128 = false
            try v.forEachElement { e throws(PresentmentError) in
                guard e.isString else { throw PresentmentError(OpenID4VPRule.encValues) }
                if e.spells("A128GCM") { offers128 = true } else if e.spells("A256GCM") { offers256 = true }
            }
        }
        // The preferred one when offered, else the other.
        if preferA256GCM && offers256 { return ResponseKey(key: key, encryption: .a256gcm) }
        if offers128 { return ResponseKey(key: key, encryption: .a128gcm) }
        if offers256 { return ResponseKey(key: key, encryption: .a256gcm) }
        throw PresentmentError(OpenID4VPRule.noSupportedEnc)
    }

    /// `client_metadata.vp_formats_supported`: whether `mso_mdoc` is accepted (true when the member
    /// is absent) and its algorithm lists.
    static func formats(_ metadata: JSONNode?) throws(PresentmentError) -> (Bool, [Int64]?, [Int64]?) {
        guard let formats = metadata?["vp_formats_supported"] else { return (true, nil, nil) }
        guard formats.isObject else {
            throw PresentmentError(OpenID4VPRule.formatsNotObject)
        }
        guard let mdoc = formats["mso_mdoc"] else { return (false, nil, nil) }
        guard mdoc.isObject else {
            throw PresentmentError(OpenID4VPRule.mdocFormatNotObject)
        }
        func list(_ name: StaticString) throws(PresentmentError) -> [Int64]? {
            guard let v = mdoc[name] else { return nil }
            guard v.isArray, v.count > 0, v.count <= 32 else {
                throw PresentmentError(OpenID4VPRule.algorithmListShape, at: name.description)
            }
            var out = [Int64]()
            out.reserveCapacity(v.count)
            try v.forEachElement { item throws(PresentmentError) in
                guard let n = item.number, let i = n.int64 else {
                    throw PresentmentError(OpenID4VPRule.algorithmNotInteger, at: name.description)
                }
                out.append(i)
            }
            return out
        }
        return (true, try list("issuerauth_alg_values"), try list("deviceauth_alg_values"))
    }
}
