#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore
import JOSE
import MdocCBOR
import Presentment
import DCAPIFraming
import WebEncoding

/// What `parse` keeps for `respond` (the consent model's front-end state), and what
/// `PresentmentRequest.openID4VP` shows.
struct RequestState: Sendable {
    let form: OpenID4VPRequestForm
    let framing: RequestFraming
    let origin: Origin
    let nonce: String
    let responseMode: OpenID4VPResponseMode
    /// The verifier's encryption key and content encryption (`dc_api.jwt`).
    let encryption: (key: JWK, encryption: JWEEncryption)?
    let handover: OpenID4VPHandover
    /// The credential query ids, by position.
    let queryIDs: [String]
    let signers: [VerifierSignature]
    /// The strongest verdict over the signers (the request is trusted through any signature the
    /// policy accepts), or `.notAuthenticated`.
    let verifierVerdict: ReaderVerdict
    /// `verifier_info` entries as received (informational: shown, never trusted).
    let verifierInfo: [JSONNode]
}

extension OpenID4VPEngine {
    struct Checked {
        let state: RequestState
        let dcql: DCQLQuery
        let now: Date
    }

    /// The bounds of the request's own JSON (the parameters, the DCQL query, the request object).
    static let parameterDepth = 16
    static let parameterMembers = 256

    /// A top-level object that is an OpenID4VP `data` object on its own.
    static func isBareData(_ json: JSONNode) -> Bool {
        json["response_type"] != nil || json["dcql_query"] != nil || json["request"] != nil
            || (json["payload"] != nil && json["signatures"] != nil)
    }

    /// The form of a bare data object.
    static func bareForm(_ data: JSONNode) -> OpenID4VPRequestForm {
        if data["payload"] != nil || data["signatures"] != nil { return .multisigned }
        if let s = data["request"]?.string { return s.first == "{" ? .multisigned : .signed }
        if data["request"]?.isObject == true { return .multisigned }
        return .unsigned
    }

    /// Every check `parse` makes, in order: size, origin, framing, the request object and its
    /// signatures, the parameters, `expected_origins`, trust, the response encryption key, DCQL.
    func check(rawRequest: Data, origin originText: String) throws(PresentmentError) -> Checked {
        guard rawRequest.count <= configuration.maxRequestBytes else {
            throw PresentmentError(FramingRule.tooLarge)
        }
        let origin = try Origin(originText, allowAppOrigins: configuration.allowAppOrigins)
        let parameterLimits = JSONValue.Limits(
            maxBytes: configuration.maxRequestBytes, maxDepth: Self.parameterDepth, maxMembers: Self.parameterMembers,
            maxStringBytes: configuration.maxRequestBytes)
        var otherProtocol = false
        let found: Result<RequestEnvelope, PresentmentError> = rawRequest.withUnsafeBytes { raw in
            Result { () throws(PresentmentError) in
                try RequestEnvelope.parse(
                    raw.assumingMemoryBound(to: UInt8.self), maxBytes: configuration.maxRequestBytes,
                    isBareData: { json in
                        otherProtocol = json["deviceRequest"] != nil || json["encryptionInfo"] != nil
                        return Self.isBareData(json)
                    })
            }
        }
        let envelope: RequestEnvelope
        do { envelope = try found.get() } catch {
            // A bare Annex C data object is an absent entry for this protocol, not a malformed one.
            if otherProtocol && error.code != .limitExceeded { throw PresentmentError(FramingRule.noEntry) }
            throw error
        }
        let form: OpenID4VPRequestForm
        let rawData: JSONNode
        switch envelope.framing {
        case .dataObject:
            rawData = envelope.entries[0].data!
            form = Self.bareForm(rawData)
        case .protocolAndData:
            guard let f = envelope.entries[0].protocolIdentifier.flatMap(OpenID4VPRequestForm.init(protocolIdentifier:))
            else { throw PresentmentError(FramingRule.noEntry) }
            guard let d = envelope.entries[0].data else { throw PresentmentError(FramingRule.dataMissing) }
            form = f
            rawData = d
        case .requestList, .digitalRequestList:
            guard
                let entry = envelope.entries.first(where: {
                    $0.protocolIdentifier.flatMap(OpenID4VPRequestForm.init(protocolIdentifier:)) != nil
                })
            else { throw PresentmentError(FramingRule.noEntry) }
            guard let d = entry.data else { throw PresentmentError(FramingRule.dataMissing) }
            form = OpenID4VPRequestForm(protocolIdentifier: entry.protocolIdentifier!)!
            rawData = d
        }
        let data = try RequestEnvelope.dataObject(rawData, limits: parameterLimits)
        guard data.shape.depth <= Self.parameterDepth, data.shape.widest <= Self.parameterMembers else {
            throw PresentmentError(OpenID4VPRule.dataOverBounds)
        }
        var joseLimits = JOSELimits(maxBytes: configuration.maxRequestBytes)
        joseLimits.maxSignatures = 8
        let object = try RequestObject(form: form, data: data, limits: joseLimits, parameterLimits: parameterLimits)
        let p = object.parameters

        // Parameters (Appendix A, §5).
        guard p["response_type"]?.string == "vp_token" else {
            throw PresentmentError(OpenID4VPRule.responseType)
        }
        guard let modeName = p["response_mode"]?.string, let mode = OpenID4VPResponseMode(rawValue: modeName) else {
            throw PresentmentError(OpenID4VPRule.responseMode)
        }
        guard let nonce = p["nonce"]?.string else { throw PresentmentError(OpenID4VPRule.nonceMissing) }
        guard !nonce.isEmpty, nonce.utf8.count <= 512, nonce.utf8.allSatisfy(Self.isURLSafe) else {
            throw PresentmentError(OpenID4VPRule.nonce)
        }
        if p["transaction_data"] != nil {
            throw PresentmentError(OpenID4VPRule.transactionData)
        }
        if p["scope"] != nil {
            throw PresentmentError(OpenID4VPRule.scope)
        }
        guard let dcqlJSON = p["dcql_query"] else { throw PresentmentError(OpenID4VPRule.dcqlMissing) }
        if let m = p["client_metadata"] {
            guard m.isObject else { throw PresentmentError(OpenID4VPRule.clientMetadataNotObject) }
        }
        var verifierInfo = [JSONNode]()
        if form == .multisigned {
            for s in object.signers { verifierInfo += try Self.verifierInfo(s.header.protected["verifier_info"]) }
        } else {
            verifierInfo = try Self.verifierInfo(p["verifier_info"])
        }

        // A signed request: expected_origins, compared with the one serialized origin (WHATWG), the
        // string the transcript and the consent model use.
        if form != .unsigned {
            guard let expected = p["expected_origins"]?.elements, !expected.isEmpty, expected.count <= 64,
                expected.allSatisfy({ $0.string != nil })
            else { throw PresentmentError(OpenID4VPRule.expectedOrigins) }
            guard expected.contains(where: { $0.string == origin.serialized }) else {
                throw PresentmentError(OpenID4VPRule.originNotExpected)
            }
        }

        // Trust: one policy, both protocols.
        let now = configuration.clock()
        let evaluator = ReaderTrustEvaluator(policy: context.readerTrust, now: now)
        var signers = [VerifierSignature]()
        if object.signers.isEmpty {
            try evaluator.requireSignature()
        } else {
            // Trusted through any signature the policy trusts (a multisigned request carries one per
            // trust framework, OpenID4VP Appendix A); every signature has verified already.
            let judged = evaluator.judge(object.signers.map { ($0.label, $0.chain) }, anySignature: true)
            if let refusal = judged.refusal { throw refusal }
            for (s, v) in zip(object.signers, judged.verdicts) {
                signers.append(VerifierSignature(label: s.label, clientID: s.clientID, chain: s.chain, verdict: v))
            }
        }
        let verdict = signers.map(\.verdict).max { $0.strength < $1.strength } ?? .notAuthenticated

        // Response encryption and the verifier's formats.
        let metadata = p["client_metadata"]
        let encryption =
            mode == .dcAPIJWT ? try Self.encryptionKey(metadata, preferA256GCM: configuration.preferA256GCM) : nil
        let (formatsAccepted, issuerAlgs, deviceAlgs) = try Self.formats(metadata)
        var dcqlLimits = DCQLQuery.Limits()
        dcqlLimits.maxCredentialQueries = configuration.maxCredentialQueries
        dcqlLimits.maxRequestedElements = configuration.maxRequestedElements
        let dcql = try DCQLQuery(
            dcqlJSON, issuerAuthAlgorithms: issuerAlgs, deviceAuthAlgorithms: deviceAlgs,
            formatsAccepted: formatsAccepted, limits: dcqlLimits)
        let handover = OpenID4VPHandover(
            origin: origin.serialized, nonce: nonce, jwkThumbprint: encryption?.key.thumbprint)
        let state = RequestState(
            form: form, framing: envelope.framing, origin: origin, nonce: nonce, responseMode: mode,
            encryption: encryption, handover: handover, queryIDs: dcql.credentials.map(\.id), signers: signers,
            verifierVerdict: verdict, verifierInfo: verifierInfo)
        return Checked(state: state, dcql: dcql, now: now)
    }

    /// `[A-Za-z0-9-._~]` (§5.2 `nonce`).
    static func isURLSafe(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2d || b == 0x2e
            || b == 0x5f || b == 0x7e
    }

    /// `verifier_info`: a non-empty array of `{format, data, credential_ids?}` (kept to show).
    static func verifierInfo(_ v: JSONNode?) throws(PresentmentError) -> [JSONNode] {
        guard let v else { return [] }
        guard let list = v.elements, !list.isEmpty, list.count <= 16,
            list.allSatisfy({ $0["format"]?.string != nil && $0["data"] != nil })
        else { throw PresentmentError(OpenID4VPRule.verifierInfo) }
        return list
    }

    /// The verifier's response encryption key (`client_metadata.jwks`: the first EC key for `ECDH-ES`
    /// whose `use` is absent or `enc`; keys of other types are passed over, an EC key that is not
    /// valid refuses) and content encryption (`encrypted_response_enc_values_supported`, default
    /// `A128GCM`).
    static func encryptionKey(_ metadata: JSONNode?, preferA256GCM: Bool) throws(PresentmentError)
        -> (key: JWK, encryption: JWEEncryption)
    {
        guard let keys = metadata?["jwks"]?["keys"]?.elements, !keys.isEmpty, keys.count <= 16 else {
            throw PresentmentError(OpenID4VPRule.jwksMissing)
        }
        var chosen: JWK?
        for k in keys {
            guard k.isObject else { throw PresentmentError(OpenID4VPRule.jwksKeyNotObject) }
            let use = k["use"]
            guard use == nil || use?.string == "enc", k["alg"]?.string == "ECDH-ES", k["kty"]?.string == "EC" else {
                continue
            }
            do { chosen = try JWK(k) } catch {
                throw PresentmentError(OpenID4VPRule.encryptionKeyInvalid, underlying: error)
            }
            break
        }
        guard let key = chosen else {
            throw PresentmentError(OpenID4VPRule.noEncryptionKey)
        }
        var offered = ["A128GCM"]
        if let v = metadata?["encrypted_response_enc_values_supported"] {
            guard let list = v.elements, !list.isEmpty, list.count <= 16, list.allSatisfy({ $0.string != nil })
            else {
                throw PresentmentError(OpenID4VPRule.encValues)
            }
            offered = list.map { $0.string! }
        }
        let order: [JWEEncryption] = preferA256GCM ? [.a256gcm, .a128gcm] : [.a128gcm, .a256gcm]
        guard let enc = order.first(where: { offered.contains($0.rawValue) }) else {
            throw PresentmentError(OpenID4VPRule.noSupportedEnc)
        }
        return (key, enc)
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
        func list(_ name: String) throws(PresentmentError) -> [Int64]? {
            guard let v = mdoc[name] else { return nil }
            guard let items = v.elements, !items.isEmpty, items.count <= 32 else {
                throw PresentmentError(OpenID4VPRule.algorithmListShape, at: name)
            }
            var out = [Int64]()
            for item in items {
                guard let n = item.number, let i = n.int64 else {
                    throw PresentmentError(OpenID4VPRule.algorithmNotInteger, at: name)
                }
                out.append(i)
            }
            return out
        }
        return (true, try list("issuerauth_alg_values"), try list("deviceauth_alg_values"))
    }

    /// Builds one DeviceResponse per answered document, `vp_token` keyed by credential query id in
    /// query order, and the response data (encrypted for `dc_api.jwt`), framed. Written straight into
    /// byte buffers: each DeviceResponse base64url-encoded into the payload, the JWE into the output.
    func finish(_ plan: Plan, _ state: RequestState, format: OpenID4VPResponseFormat) throws(PresentmentError) -> Data {
        var groups = [(id: String, responses: [[UInt8]])]()
        var size = 64
        for d in plan.answered.sorted(by: { $0.index < $1.index }) {
            let one = Plan(answered: [d], unanswered: [])
            let response = try DeviceResponseBuilder.build(
                plan: one, sessionTranscript: state.handover.sessionTranscript, missingElements: .omit)
            if configuration.selfCheck {
                try DeviceResponseBuilder.selfCheck(
                    response, plan: one, sessionTranscript: state.handover.sessionTranscript)
            }
            let id = state.queryIDs[d.index]
            size += Base64URL.encodedLength(response.count) + id.utf8.count + 8
            if let k = groups.firstIndex(where: { $0.id == id }) {
                groups[k].responses.append(response)
            } else {
                groups.append((id, [response]))
            }
        }
        // {"vp_token":{"<id>":["<base64url DeviceResponse>",...],...}}
        var payload = JSONWriter(capacity: size)
        payload.writeRaw("{\"vp_token\":{")
        for (k, group) in groups.enumerated() {
            if k > 0 { payload.writeRaw(",") }
            payload.writeString(group.id)
            payload.writeRaw(":[")
            for (j, r) in group.responses.enumerated() {
                if j > 0 { payload.writeRaw(",") }
                payload.writeBase64URLString(r)
            }
            payload.writeRaw("]")
        }
        payload.writeRaw("}}")
        let wrap: Bool =
            switch format {
            case .automatic: state.framing == .requestList || state.framing == .digitalRequestList
            case .dataObject: false
            case .protocolAndData: true
            }
        var out = [UInt8]()
        out.reserveCapacity(payload.bytes.count * 4 / 3 + 1024)
        if wrap { out.append(contentsOf: Array("{\"protocol\":\"\(state.form.protocolIdentifier)\",\"data\":".utf8)) }
        if let enc = state.encryption {
            out.append(contentsOf: Array("{\"response\":\"".utf8))
            let result: Result<Void, JOSEError> = payload.bytes.withUnsafeBytes { pt in
                Result { () throws(JOSEError) in
                    try JWE.encrypt(
                        pt, to: enc.key, encryption: enc.encryption, keyID: enc.key.keyID,
                        ephemeralKey: configuration.ephemeralKeySource?().key, appendingTo: &out)
                }
            }
            do { try result.get() } catch {
                throw PresentmentError(OpenID4VPRule.sealing, underlying: error)
            }
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: "}")])
        } else {
            out.append(contentsOf: payload.bytes)
        }
        if wrap { out.append(UInt8(ascii: "}")) }
        return Data(out)
    }
}

extension PresentmentRequest {
    /// The OpenID4VP details a consent screen or log may show, when this request came in over OpenID4VP.
    public var openID4VP: OpenID4VPRequestDetails? {
        (frontEnd as? RequestState).map(OpenID4VPRequestDetails.init)
    }
}

/// What an OpenID4VP request said about itself, for display.
public struct OpenID4VPRequestDetails: Sendable {
    /// Unsigned, signed or multisigned.
    public let form: OpenID4VPRequestForm
    /// `dc_api` or `dc_api.jwt`.
    public let responseMode: OpenID4VPResponseMode
    /// The request's `nonce` as received.
    public let nonce: String
    /// The credential query ids, by document position.
    public let credentialQueryIDs: [String]
    /// Each verified signature: its `client_id`, chain and verdict.
    public let signatures: [VerifierSignature]
    /// `verifier_info` entries as JSON text (informational; never trusted).
    public let verifierInfo: [String]
    /// The response encryption key's `kid` and RFC 7638 thumbprint, and the content encryption
    /// (`dc_api.jwt` only).
    public let encryption: (keyID: String?, thumbprint: [UInt8], encryption: String)?
    /// The CBOR `OpenID4VPDCAPIHandoverInfo`, handover and SessionTranscript.
    public let handover: OpenID4VPHandover

    init(_ s: RequestState) {
        form = s.form
        responseMode = s.responseMode
        nonce = s.nonce
        credentialQueryIDs = s.queryIDs
        signatures = s.signers
        verifierInfo = s.verifierInfo.map { String(decoding: $0.text, as: UTF8.self) }
        encryption = s.encryption.map { ($0.key.keyID, $0.key.thumbprint, $0.encryption.rawValue) }
        handover = s.handover
    }
}
