import CryptoCore
import WebEncoding

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// The JWS algorithms verified here (RFC 7518 §3.4): ECDSA with the curve and hash the name fixes.
/// `none`, HMAC, RSA, RSA-PSS and EdDSA are refused (`unsupportedAlgorithm`).
package enum JWSAlgorithm: String, Sendable, Hashable, CaseIterable {
    case es256 = "ES256"
    case es384 = "ES384"
    case es512 = "ES512"

    /// The curve the key must be on.
    package var curve: Curve {
        switch self {
        case .es256: .p256
        case .es384: .p384
        case .es512: .p521
        }
    }

    /// The algorithm for a key's curve.
    package init(curve: Curve) {
        switch curve {
        case .p256: self = .es256
        case .p384: self = .es384
        case .p521: self = .es512
        }
    }
}

/// Bounds on what a JWS may contain, checked before anything larger is built.
package struct JOSELimits: Sendable {
    /// The whole serialization, in bytes.
    package var maxBytes: Int
    /// A header's JSON: nesting levels and members per object.
    package var headerDepth = 8
    /// Members of any header object or elements of any header array.
    package var headerMembers = 64
    /// Signatures in a JWS JSON serialization.
    package var maxSignatures = 8
    /// Certificates in an `x5c` chain.
    package var maxChain = 8

    /// Creates limits for a serialization of at most `maxBytes` bytes.
    package init(maxBytes: Int = 256 * 1024) { self.maxBytes = maxBytes }
}

/// One signature's header: the protected header as received and its parsed members, merged with
/// the unprotected `header` of the JSON serializations (names must be disjoint, RFC 7515 §7.2.1).
package struct JWSHeader: Sendable {
    /// The base64url protected header exactly as received (part of the signing input).
    package let protectedEncoded: String
    /// The protected header's members.
    package let protected: JSONNode
    /// The unprotected `header` members (JSON serializations only), or nil.
    package let unprotected: JSONNode?
    /// `alg`, which must be in the protected header.
    package let algorithm: JWSAlgorithm

    /// A header parameter, protected first.
    package subscript(name: StaticString) -> JSONNode? { protected[name] ?? unprotected?[name] }

    /// A protected header parameter's string value (nil when absent or not a string).
    package func protectedString(_ name: StaticString) -> String? { protected[name]?.string }

    /// `x5c` from the protected header: DER certificates, leaf first (RFC 7515 §4.1.6: standard
    /// base64, not base64url). Nil when absent.
    /// - Throws: `malformed` for an `x5c` that is not a non-empty array of base64 strings within the
    ///   chain bound, or one found only in the unprotected header (a chain must be signed over).
    package func certificateChain(limits: JOSELimits) throws(JOSEError) -> [[UInt8]]? {
        if protected["x5c"] == nil {
            if unprotected?["x5c"] != nil { throw JOSEError(.malformed, "x5c is not in the protected header") }
            return nil
        }
        guard let items = protected["x5c"]?.elements, !items.isEmpty, items.count <= limits.maxChain else {
            throw JOSEError(.malformed, "x5c is not a non-empty array within the chain bound")
        }
        var chain = [[UInt8]]()
        for item in items {
            guard let s = item.string, let der = Base64.decode(s), !der.isEmpty else {
                throw JOSEError(.malformed, "x5c entry is not standard base64")
            }
            chain.append(der)
        }
        return chain
    }

    init(protectedEncoded: String, unprotected: JSONNode?, limits: JOSELimits) throws(JOSEError) {
        guard let bytes = Base64URL.decode(protectedEncoded), !bytes.isEmpty else {
            throw JOSEError(.malformed, "JWS protected header is not base64url")
        }
        let json: JSONNode
        do {
            json = try JSONDocument(
                bytes,
                limits: .init(
                    maxBytes: limits.maxBytes, maxDepth: limits.headerDepth, maxMembers: limits.headerMembers,
                    maxStringBytes: limits.maxBytes)
            ).root
        } catch { throw JOSEError(.malformed, "JWS protected header: \(error.what)") }
        guard json.isObject else {
            throw JOSEError(.malformed, "JWS protected header is not a JSON object")
        }
        if let unprotected {
            guard unprotected.isObject else {
                throw JOSEError(.malformed, "JWS unprotected header is not a JSON object")
            }
            let shape = unprotected.shape
            guard shape.depth <= limits.headerDepth, shape.widest <= limits.headerMembers else {
                throw JOSEError(.malformed, "JWS unprotected header exceeds the bounds")
            }
            var both = false
            unprotected.forEachMember { k, _ in both = both || (k.string.map { json.member($0) != nil } ?? false) }
            if both {
                throw JOSEError(.malformed, "JWS header parameter in both protected and unprotected headers")
            }
            if unprotected["alg"] != nil { throw JOSEError(.malformed, "JWS alg is not in the protected header") }
            if unprotected["crit"] != nil { throw JOSEError(.malformed, "JWS crit is not in the protected header") }
        }
        guard let algName = json["alg"]?.string else { throw JOSEError(.malformed, "JWS alg missing") }
        guard let alg = JWSAlgorithm(rawValue: algName) else {
            throw JOSEError(.unsupportedAlgorithm, Self.refusal(for: algName))
        }
        // RFC 7515 §4.1.11: every name in crit must be understood; this layer understands none.
        if let crit = json["crit"] {
            guard let names = crit.elements, !names.isEmpty, names.allSatisfy({ $0.string != nil }) else {
                throw JOSEError(.malformed, "JWS crit is not a non-empty array of names")
            }
            throw JOSEError(.unsupportedCritical, "JWS crit names a parameter not understood")
        }
        self.protectedEncoded = protectedEncoded
        self.protected = json
        self.unprotected = unprotected
        self.algorithm = alg
    }

    /// The refusal text for an algorithm outside ES256/384/512 (static per family: the name is
    /// attacker-chosen and is not echoed).
    static func refusal(for name: String) -> String {
        switch name {
        case "none": "JWS alg none is refused"
        case "HS256", "HS384", "HS512": "JWS alg HMAC is refused"
        case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512": "JWS alg RSA is not supported"
        case "EdDSA", "Ed25519", "Ed448": "JWS alg EdDSA is not supported"
        default: "JWS alg not supported"
        }
    }
}

/// A JWS in the compact (RFC 7515 §7.1) or a JSON serialization (§7.2, general or flattened): the
/// payload and each signature with the exact signing input `ASCII(protected "." payload)`.
package struct JWS: Sendable {
    /// One signature.
    package struct Signature: Sendable {
        /// Its header.
        package let header: JWSHeader
        /// The raw `r ‖ s` signature, exactly twice the curve's coordinate size.
        package let signature: [UInt8]
        /// `ASCII(BASE64URL(protected) "." BASE64URL(payload))` as received.
        package let signingInput: [UInt8]

        /// Verifies the signature with `key`.
        /// - Throws: `invalidKey` when the key is not on the algorithm's curve, `signatureInvalid`
        ///   when the signature does not verify.
        package func verify(with key: PublicKey) throws(JOSEError) {
            guard case .ec(let curve) = key.kind, curve == header.algorithm.curve else {
                throw JOSEError(.invalidKey, "JWS algorithm does not match the key")
            }
            let ok: Bool
            do { ok = try key.verifyECDSA(signature: signature, message: signingInput, digest: curve.digest) } catch {
                throw JOSEError(.signatureInvalid, "JWS signature does not verify")
            }
            guard ok else { throw JOSEError(.signatureInvalid, "JWS signature does not verify") }
        }
    }

    /// The base64url payload exactly as received.
    package let payloadEncoded: String
    /// The decoded payload.
    package let payload: [UInt8]
    /// The signatures, in order (one for the compact serialization).
    package let signatures: [Signature]

    /// Parses the compact serialization `header.payload.signature`.
    /// - Throws: `malformed` for anything but three non-empty base64url segments with a JSON object
    ///   header (an empty payload segment is refused: detached content is not used here),
    ///   `unsupportedAlgorithm` / `unsupportedCritical` from the header.
    package init(compact: String, limits: JOSELimits = JOSELimits()) throws(JOSEError) {
        guard compact.utf8.count <= limits.maxBytes else { throw JOSEError(.malformed, "JWS larger than the limit") }
        // The segments found in one pass over the contiguous UTF-8 (memchr for each dot; at most five
        // looked for, enough to tell a JWE apart); the signing input is the text up to the second dot.
        var text = compact
        let split: (dots: Int, h: String, p: String, s: String, signingInput: [UInt8]) = text.withUTF8 { u in
            var at = [Int]()
            var from = 0
            while at.count < 5, from < u.count,
                let hit = memchr(u.baseAddress! + from, Int32(UInt8(ascii: ".")), u.count - from)
            {
                let k = u.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                at.append(k)
                from = k + 1
            }
            guard at.count == 2 else { return (at.count, "", "", "", []) }
            func text(_ r: Range<Int>) -> String {
                String(decoding: UnsafeBufferPointer(rebasing: u[r]), as: UTF8.self)
            }
            return (
                2, text(0..<at[0]), text(at[0] + 1..<at[1]), text(at[1] + 1..<u.count),
                Array(UnsafeBufferPointer(rebasing: u[..<at[1]]))
            )
        }
        guard split.dots == 2 else {
            throw JOSEError(
                .malformed, split.dots == 4 ? "a JWE where a JWS is expected" : "JWS is not three segments")
        }
        let header = try JWSHeader(protectedEncoded: split.h, unprotected: nil, limits: limits)
        guard !split.p.isEmpty, let payload = Base64URL.decode(split.p) else {
            throw JOSEError(.malformed, "JWS payload is not base64url")
        }
        let signature = try Self.signatureBytes(split.s, header.algorithm)
        payloadEncoded = split.p
        self.payload = payload
        signatures = [Signature(header: header, signature: signature, signingInput: split.signingInput)]
    }

    /// Parses a JWS JSON serialization: general (`payload`, `signatures: [{protected, header?,
    /// signature}]`) or flattened (`payload`, `protected`, `header?`, `signature`).
    /// - Throws: `malformed` for a missing or mistyped member, an empty or oversized signature list,
    ///   both forms at once; the header errors of `init(compact:)`.
    package init(json: JSONValue, limits: JOSELimits = JOSELimits()) throws(JOSEError) {
        let node: JSONNode
        do { node = try JSONDocument(json.serialized).root } catch {
            throw JOSEError(.malformed, "JWS JSON is not JSON")
        }
        try self.init(json: node, limits: limits)
    }

    /// `init(json:limits:)` over a parsed document (the request path).
    package init(json: JSONNode, limits: JOSELimits = JOSELimits()) throws(JOSEError) {
        guard json.isObject else { throw JOSEError(.malformed, "JWS JSON is not an object") }
        guard let p = json["payload"]?.string, !p.isEmpty, let payload = Base64URL.decode(p) else {
            throw JOSEError(.malformed, "JWS JSON payload missing or not base64url")
        }
        let entries: [JSONNode]
        if let list = json["signatures"] {
            guard json["signature"] == nil, json["protected"] == nil, json["header"] == nil else {
                throw JOSEError(.malformed, "JWS JSON mixes the general and flattened forms")
            }
            guard let items = list.elements, !items.isEmpty, items.count <= limits.maxSignatures else {
                throw JOSEError(.malformed, "JWS JSON signatures is not a non-empty array within the bound")
            }
            entries = items
        } else {
            entries = [json]
        }
        var signatures = [Signature]()
        for e in entries {
            guard e.isObject else { throw JOSEError(.malformed, "JWS JSON signature is not an object") }
            guard let h = e["protected"]?.string else {
                throw JOSEError(.malformed, "JWS JSON signature lacks a protected header")
            }
            guard let s = e["signature"]?.string else { throw JOSEError(.malformed, "JWS JSON signature missing") }
            let header = try JWSHeader(protectedEncoded: h, unprotected: e["header"], limits: limits)
            let signature = try Self.signatureBytes(s, header.algorithm)
            signatures.append(Signature(header: header, signature: signature, signingInput: Array((h + "." + p).utf8)))
        }
        payloadEncoded = p
        self.payload = payload
        self.signatures = signatures
    }

    private static func signatureBytes(_ s: String, _ alg: JWSAlgorithm) throws(JOSEError) -> [UInt8] {
        guard let sig = Base64URL.decode(s) else {
            throw JOSEError(.malformed, "JWS signature is not base64url")
        }
        guard sig.count == 2 * alg.curve.coordinateSize else {
            throw JOSEError(.malformed, "JWS signature is not the algorithm's size")
        }
        return sig
    }

    // MARK: Signing (verifiers, tests)

    /// Signs `payload` in the compact serialization with `key` (ES256/384/512 by the key's curve).
    /// `header` members come first in the given order, `alg` is added when absent.
    package static func signCompact(payload: [UInt8], header: [(String, JSONValue)], key: PrivateKey)
        throws(JOSEError) -> String
    {
        let (h, sig) = try sign(payload: Base64URL.encode(payload), header: header, key: key)
        return h + "." + Base64URL.encode(payload) + "." + Base64URL.encode(sig)
    }

    /// One `{"protected", "signature"}` entry of a general JSON serialization over `payloadEncoded`.
    package static func signatureEntry(payloadEncoded: String, header: [(String, JSONValue)], key: PrivateKey)
        throws(JOSEError) -> JSONValue
    {
        let (h, sig) = try sign(payload: payloadEncoded, header: header, key: key)
        return .object([("protected", .string(h)), ("signature", .string(Base64URL.encode(sig)))])
    }

    private static func sign(payload: String, header: [(String, JSONValue)], key: PrivateKey)
        throws(JOSEError) -> (String, [UInt8])
    {
        guard case .ec(let curve) = key.kind else { throw JOSEError(.invalidKey, "not an EC key") }
        var members = header
        if !members.contains(where: { $0.0 == "alg" }) {
            members.insert(("alg", .string(JWSAlgorithm(curve: curve).rawValue)), at: 0)
        }
        let h = Base64URL.encode(JSONValue.object(members).serialized)
        do {
            return (h, try key.signECDSA(message: Array((h + "." + payload).utf8), digest: curve.digest))
        } catch { throw JOSEError(.invalidKey, "signing failed") }
    }
}
