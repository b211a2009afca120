internal import CryptoCore
import Presentment
import WebEncoding

/// A DCQL query (OpenID4VP §6) read for `mso_mdoc`: one `DocumentQuery` per credential query for the
/// one planner, and the credential sets as document-set rules. Unknown members are ignored; every
/// member this wallet acts on is checked, and anything that is not what §6 and §7 allow refuses the
/// request (`invalidRequest`) with the rule it breaks.
struct DCQLQuery: Sendable {
    /// A claim's members, found in one walk of its keys.
    private static let claimMembers: [StaticString] = ["path", "intent_to_retain", "values", "id"]

    /// The credential queries' ids, in order (`format` and `multiple` are checked while reading; only
    /// the id is used after: it names the query's entry in `vp_token`).
    let ids: [String]
    /// The planner's queries, one per credential query, `index` = position.
    let queries: [DocumentQuery]
    /// `credential_sets` as rules over query positions; empty: every query is required.
    let documentSets: [DocumentSetRule]

    /// Bounds on a query, checked before anything is built from it.
    struct Limits: Sendable {
        var maxCredentialQueries = 16
        var maxClaimsPerQuery = 128
        var maxRequestedElements = 1024
        var maxClaimSets = 32
        var maxValues = 32
        var maxCredentialSets = 16
        var maxOptions = 16
        var maxAuthorities = 16
        var maxIdentifierBytes = 128
        var maxPathComponentBytes = 256
    }

    /// Reads `dcql_query` with the verifier's algorithm lists (`vp_formats_supported.mso_mdoc`).
    /// - Parameters:
    ///   - formatsAccepted: false when the verifier's `vp_formats_supported` lists no `mso_mdoc`:
    ///     no mdoc query can then match.
    init(
        _ json: JSONNode, issuerAuthAlgorithms: [Int64]?, deviceAuthAlgorithms: [Int64]?, formatsAccepted: Bool,
        limits: Limits
    ) throws(PresentmentError) {
        func bad(_ rule: DCQLRule) -> PresentmentError { PresentmentError(rule) }
        guard json.isObject else { throw bad(.notObject) }
        guard let entries = json["credentials"], entries.isArray, entries.count > 0 else {
            throw bad(.credentials)
        }
        guard entries.count <= limits.maxCredentialQueries else {
            throw PresentmentError(DCQLRule.tooManyQueries)
        }
        var queryIDs = [String]()
        queryIDs.reserveCapacity(entries.count)
        var queries = [DocumentQuery]()
        queries.reserveCapacity(entries.count)
        var totalElements = 0
        var position = 0
        try entries.forEachElement { entry throws(PresentmentError) in
            let index = position
            position += 1
            guard entry.isObject else { throw bad(.queryNotObject) }
            guard let id = entry["id"]?.string, Self.isIdentifier(id, limits) else {
                throw bad(.queryID)
            }
            guard !queryIDs.contains(id) else { throw bad(.duplicateQueryID) }
            guard let format = entry["format"], format.isString else { throw bad(.formatMissing) }
            _ = try Self.bool(entry["multiple"], default: false, .multipleNotBoolean)
            _ = try Self.bool(
                entry["require_cryptographic_holder_binding"], default: true, .holderBindingNotBoolean)
            guard let meta = entry["meta"], meta.isObject else { throw bad(.metaMissing) }
            queryIDs.append(id)
            guard format.isString("mso_mdoc") else {
                // Not an mdoc query: it never matches a credential here (its members are not ours to read).
                queries.append(
                    DocumentQuery(
                        index: index, docType: "", elements: RequestedElementList(),
                        rules: ClaimRules(values: [], authorityKeyIDs: [])))
                return
            }
            guard let docType = meta["doctype_value"]?.string, !docType.isEmpty else {
                throw bad(.doctypeValueMissing)
            }
            let (elements, values, claimSets) = try Self.claims(entry, limits: limits, bad)
            totalElements += elements.count
            guard totalElements <= limits.maxRequestedElements else {
                throw PresentmentError(DCQLRule.tooManyClaims)
            }
            let akis = try Self.trustedAuthorities(entry["trusted_authorities"], limits: limits, bad)
            queries.append(
                DocumentQuery(
                    index: index, docType: docType, elements: elements,
                    rules: ClaimRules(
                        values: values, claimSets: claimSets, authorityKeyIDs: akis,
                        issuerAuthAlgorithms: formatsAccepted ? issuerAuthAlgorithms : [],
                        deviceAuthAlgorithms: deviceAuthAlgorithms)))
        }
        var sets = [DocumentSetRule]()
        if let raw = json["credential_sets"] {
            guard let list = raw.elements, !list.isEmpty else {
                throw bad(.credentialSets)
            }
            guard list.count <= limits.maxCredentialSets else {
                throw PresentmentError(DCQLRule.tooManyCredentialSets)
            }
            for set in list {
                guard set.isObject, let options = set["options"]?.elements, !options.isEmpty,
                    options.count <= limits.maxOptions
                else { throw bad(.credentialSetOptions) }
                let required = try Self.bool(
                    set["required"], default: true, .credentialSetRequired)
                var positions = [[Int]]()
                for option in options {
                    guard let ids = option.elements, !ids.isEmpty, ids.count <= entries.count else {
                        throw bad(.credentialSetOption)
                    }
                    var option = [Int]()
                    for id in ids {
                        guard let s = id.string, let k = queryIDs.firstIndex(of: s) else {
                            throw bad(.credentialSetUnknownQuery)
                        }
                        if !option.contains(k) { option.append(k) }
                    }
                    positions.append(option)
                }
                sets.append(DocumentSetRule(mandatory: required, documentSets: positions))
            }
        }
        ids = queryIDs
        self.queries = queries
        documentSets = sets
    }

    /// `[A-Za-z0-9_-]+`, within the identifier bound (§6.1, §6.3).
    static func isIdentifier(_ s: String, _ limits: Limits) -> Bool {
        guard !s.isEmpty, s.utf8.count <= limits.maxIdentifierBytes else { return false }
        return withUTF8Bytes(s) { $0.allSatisfy(isIdentifierByte) }
    }

    /// `[A-Za-z0-9_-]`.
    private static func isIdentifierByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x5f || b == 0x2d
    }

    /// An optional boolean member: `d` when absent, refused under `rule` when not a boolean (the error
    /// is made only then).
    static func bool(_ v: JSONNode?, default d: Bool, _ rule: DCQLRule) throws(PresentmentError) -> Bool {
        guard let v else { return d }
        guard let b = v.bool else { throw PresentmentError(rule) }
        return b
    }

    /// `claims` and `claim_sets`: the requested elements, each one's accepted values (empty when no
    /// claim names any), and the sets as positions. A claim repeating an earlier path with the same
    /// constraints is dropped (§6.1: "SHOULD ignore"), its id kept as an alias of the first; with other
    /// `values` or `intent_to_retain` the query is refused (`invalidRequest`), never merged.
    static func claims(_ entry: JSONNode, limits: Limits, _ bad: (DCQLRule) -> PresentmentError)
        throws(PresentmentError) -> (RequestedElementList, [[ClaimValue]?], [[Int]]?)
    {
        guard let raw = entry["claims"] else {
            guard entry["claim_sets"] == nil else { throw bad(.claimSetsWithoutClaims) }
            return (RequestedElementList(), [], nil)
        }
        guard raw.isArray, raw.count > 0 else { throw bad(.claims) }
        let claimCount = raw.count
        guard claimCount <= limits.maxClaimsPerQuery else {
            throw PresentmentError(DCQLRule.tooManyClaimsInQuery)
        }
        // The claims' paths as bytes, the way an ItemsRequest is read: no `String` per element.
        var elements = RequestedElementList(capacity: claimCount)
        // Empty until a claim names `values` (most queries have none: no array made for them); from
        // then on one entry per listed element.
        var values = [[ClaimValue]?]()
        var listsValues = false
        var ids = [(id: String, position: Int)]()
        let maxBytes = limits.maxPathComponentBytes
        try raw.forEachElement { claim throws(PresentmentError) in
            guard claim.isObject else { throw bad(.claimNotObject) }
            // One walk of the claim's members (the parser refused duplicate keys).
            var pathMember: JSONNode?
            var retainMember: JSONNode?
            var valuesMember: JSONNode?
            var idMember: JSONNode?
            claim.members(named: Self.claimMembers) { i, value in
                switch i {
                case 0: pathMember = value
                case 1: retainMember = value
                case 2: valuesMember = value
                default: idMember = value
                }
            }
            // The path: two strings, neither empty nor past the bound (decoded lengths), listed as read
            // (a refusal below refuses the whole query, so nothing listed here is used then; a claim
            // breaking the path rule and intent_to_retain's is refused for its path).
            var listed: (position: Int, added: Bool)?
            _ = pathMember?.withStringElements(count: 2) { path in
                let (ns, name) = (path[0], path[1])
                guard !ns.isEmpty, !name.isEmpty, ns.count <= maxBytes, name.count <= maxBytes else { return }
                listed = elements.append(nameSpace: ns, identifier: name, intentToRetain: retainMember?.bool)
            }
            guard let (position, added) = listed else { throw bad(.claimPath) }
            let retain = try bool(retainMember, default: false, .intentToRetainNotBoolean)
            var accepted: [ClaimValue]?
            if let raw = valuesMember {
                guard let list = raw.elements, !list.isEmpty, list.count <= limits.maxValues else {
                    throw bad(.claimValues)
                }
                var out = [ClaimValue]()
                for v in list {
                    if let s = v.string {
                        out.append(.text(s))
                    } else if let b = v.bool {
                        out.append(.bool(b))
                    } else if let n = v.number {
                        guard let i = n.int64 else { throw bad(.claimValueNotInteger) }
                        out.append(.integer(i))
                    } else {
                        throw bad(.claimValueType)
                    }
                }
                accepted = out
            }
            if added {
                if accepted != nil && !listsValues {
                    listsValues = true
                    values.reserveCapacity(claimCount)
                    values.append(contentsOf: repeatElement(nil, count: position))
                }
                if listsValues { values.append(accepted) }
            } else {
                // A repeated path is one element, so it can keep only one set of constraints: the same
                // ones, or the query is refused (merging would drop a `values` probe and release the
                // element whatever its value).
                let earlier = listsValues ? values[position] : nil
                guard earlier == accepted, (elements.intentToRetain(at: position) ?? false) == retain else {
                    throw bad(.conflictingRepeatedClaim)
                }
            }
            if let id = idMember {
                guard let s = id.string, isIdentifier(s, limits) else { throw bad(.claimID) }
                guard !ids.contains(where: { $0.id == s }) else { throw bad(.duplicateClaimID) }
                ids.append((s, position))
            }
        }
        guard let rawSets = entry["claim_sets"] else { return (elements, values, nil) }
        guard let list = rawSets.elements, !list.isEmpty, list.count <= limits.maxClaimSets else {
            throw bad(.claimSets)
        }
        guard ids.count == claimCount else { throw bad(.claimSetsNeedIDs) }
        var sets = [[Int]]()
        for option in list {
            guard let names = option.elements, !names.isEmpty, names.count <= claimCount else {
                throw bad(.claimSet)
            }
            var set = [Int]()
            for n in names {
                guard let s = n.string, let entry = ids.first(where: { $0.id == s }) else {
                    throw bad(.claimSetUnknownClaim)
                }
                if !set.contains(entry.position) { set.append(entry.position) }
            }
            sets.append(set)
        }
        return (elements, values, sets)
    }

    /// `trusted_authorities`: the raw key identifiers of its `aki` entries; nil when absent. Entries of
    /// other types (`etsi_tl`, `openid_federation`) cannot be evaluated here and match no credential.
    static func trustedAuthorities(_ raw: JSONNode?, limits: Limits, _ bad: (DCQLRule) -> PresentmentError)
        throws(PresentmentError) -> [[UInt8]]?
    {
        guard let raw else { return nil }
        guard let list = raw.elements, !list.isEmpty, list.count <= limits.maxAuthorities else {
            throw bad(.trustedAuthorities)
        }
        var akis = [[UInt8]]()
        for entry in list {
            guard entry.isObject, let type = entry["type"]?.string, let values = entry["values"]?.elements,
                !values.isEmpty, values.count <= limits.maxValues
            else { throw bad(.trustedAuthority) }
            for v in values {
                guard let s = v.string else { throw bad(.trustedAuthorityValue) }
                guard type == "aki" else { continue }
                guard let id = Base64URL.decode(s), !id.isEmpty else {
                    throw bad(.akiNotBase64URL)
                }
                akis.append(id)
            }
        }
        return akis
    }
}
