#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR

/// A value a requested element must equal (a DCQL claim's `values`: strings, integers, booleans).
/// An element matches when its DataElementValue, read as JSON (RFC 8949 §6.1: a tagged item by its
/// content), has the same type and value; any other CBOR type never matches.
public enum ClaimValue: Sendable, Hashable {
    /// A text string.
    case text(String)
    /// An integer.
    case integer(Int64)
    /// A boolean.
    case bool(Bool)

    /// Whether a DataElementValue equals this value.
    func matches(_ item: CBORItem) -> Bool {
        var v = item
        var depth = 0
        while v.type == .tag, let inner = v.tagContent, depth < 4 {
            v = inner
            depth += 1
        }
        switch self {
        case .text(let s): return v.stringValue == s
        case .bool(let b): return v.boolValue == b
        case .integer(let i):
            switch v.type {
            case .unsignedInt: return i >= 0 && v.argument == UInt64(i)
            case .negativeInt: return i < 0 && v.argument == UInt64(-(i + 1))
            default: return false
            }
        }
    }
}

/// The selection rules of a request that says exactly which combinations it wants (a DCQL credential
/// query, OpenID4VP §6), beside ISO/IEC 18013-5's "release what is held". With rules, a credential
/// answers only when it can deliver every element of one acceptable set (the whole request when
/// there are no sets); otherwise it is treated as if it did not exist.
package struct ClaimRules: Sendable {
    /// Per requested element (in request order), the values it must equal; nil: any value. Empty when
    /// no element names values. An element whose value does not match counts as not held.
    package var values: [[ClaimValue]?]
    /// Acceptable element sets as positions in the request order, most preferred first (DCQL
    /// `claim_sets`); nil: every requested element is required.
    package var claimSets: [[Int]]?
    /// Raw key identifiers; a credential answers only when a certificate of its issuerAuth `x5chain`
    /// has one of them as its AuthorityKeyIdentifier (DCQL `trusted_authorities` of type `aki`). Nil:
    /// any issuer.
    package var authorityKeyIDs: [[UInt8]]?
    /// COSE algorithms the verifier accepts for issuerAuth (`issuerauth_alg_values`); nil: any.
    package var issuerAuthAlgorithms: [Int64]?
    /// COSE algorithms the verifier accepts for the device signature (`deviceauth_alg_values`); nil: any.
    package var deviceAuthAlgorithms: [Int64]?

    /// Creates rules.
    package init(
        values: [[ClaimValue]?], claimSets: [[Int]]? = nil, authorityKeyIDs: [[UInt8]]? = nil,
        issuerAuthAlgorithms: [Int64]? = nil, deviceAuthAlgorithms: [Int64]? = nil
    ) {
        self.values = values
        self.claimSets = claimSets
        self.authorityKeyIDs = authorityKeyIDs
        self.issuerAuthAlgorithms = issuerAuthAlgorithms
        self.deviceAuthAlgorithms = deviceAuthAlgorithms
    }

    /// Whether the credential may answer at all: issuer authority and algorithms.
    func admits(_ c: StoredCredential) -> Bool {
        if let akis = authorityKeyIDs, !c.issuerAuthorityKeyIDs.contains(where: { akis.contains($0) }) {
            return false
        }
        if let algs = issuerAuthAlgorithms, !algs.contains(where: { c.issuerAuthAlgorithms.contains($0) }) {
            return false
        }
        if let algs = deviceAuthAlgorithms, !algs.contains(where: { c.deviceAuthAlgorithms.contains($0) }) {
            return false
        }
        return true
    }
}

extension COSEAlgorithm {
    /// The COSE algorithm identifiers a signature made with `alg` by a key on `curve` satisfies in a
    /// verifier's list (OpenID4VP B.2.4: the algorithm itself, or the fully specified algorithm for
    /// that algorithm and curve).
    static func satisfied(by alg: Int64, curve: COSEKey.Curve?) -> Set<Int64> {
        var out: Set<Int64> = [alg]
        switch (alg, curve) {
        case (COSEAlgorithm.es256.rawValue, .p256?): out.insert(COSEAlgorithm.esp256.rawValue)
        case (COSEAlgorithm.es384.rawValue, .p384?): out.insert(COSEAlgorithm.esp384.rawValue)
        case (COSEAlgorithm.es512.rawValue, .p521?): out.insert(COSEAlgorithm.esp512.rawValue)
        case (COSEAlgorithm.edDSA.rawValue, .ed25519?): out.insert(-19)  // Ed25519 (RFC 9864)
        default: break
        }
        return out
    }
}
