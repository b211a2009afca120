#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore
import DCAPIFraming
import JOSE
import MdocCBOR
@_spi(FrontEnd) import Presentment
import WebEncoding

/// The OpenID4VP front end (OpenID for Verifiable Presentations 1.0 over the Digital Credentials API,
/// Appendix A, for `mso_mdoc`): reads an `openid4vp-v1-unsigned`, `-signed` or `-multisigned` entry
/// (the request object and every verifier signature, the parameters, `expected_origins`, the holder's
/// trust policy, the response encryption key and the DCQL query) and answers a settled plan as
/// `vp_token` with one DeviceResponse per credential query, in mode `dc_api` or encrypted as a JWE for
/// `dc_api.jwt`. Everything else is the engine's (`PresentmentEngine`).
package struct OpenID4VPFrontEnd: DCAPIFrontEnd {
    /// OpenID4VP's own settings.
    package let settings: OpenID4VPSettings

    package init(settings: OpenID4VPSettings) { self.settings = settings }

    /// The bounds of the request's own JSON (the parameters, the DCQL query, the request object).
    static let parameterDepth = 16
    static let parameterMembers = 256

    /// One identifier per request form (unsigned, signed, multisigned).
    package var protocolIdentifiers: [String] { OpenID4VPRequestForm.allCases.map(\.protocolIdentifier) }

    /// The request form an entry's `protocol` names (nil for none of the three, or a bare `data`).
    static func form(of entry: RequestEntry) -> OpenID4VPRequestForm? {
        OpenID4VPRequestForm.allCases.first { entry.names(protocol: $0.protocolIdentifier) }
    }

    /// A top-level object that is an OpenID4VP `data` object on its own.
    /// One of `response_type`, `dcql_query` and `request`, or both `payload` and `signatures`
    /// (keys read in one pass).
    package static func isBareData(_ json: JSONNode) -> Bool {
        var payload = false
        var signatures = false
        let named = json.containsKey { key in
            if key.spells("payload") {
                payload = true
            } else if key.spells("signatures") {
                signatures = true
            }
            return key.spells("response_type") || key.spells("dcql_query") || key.spells("request")
        }
        return named || (payload && signatures)
    }

    /// The form of a bare data object.
    static func bareForm(_ data: JSONNode) -> OpenID4VPRequestForm {
        if data["payload"] != nil || data["signatures"] != nil { return .multisigned }
        if let s = data["request"]?.string { return s.first == "{" ? .multisigned : .signed }
        if data["request"]?.isObject == true { return .multisigned }
        return .unsigned
    }

    /// Checks, in order: the entry's `data` and its bounds, the request object and every signature,
    /// the parameters and `expected_origins`, the holder's trust policy, the response encryption key
    /// and the verifier's formats, the DCQL query.
    package func check(
        _ entry: RequestEntry, origin: Origin, in environment: CheckEnvironment, trace: inout CheckTrace?
    )
        throws(PresentmentError) -> CheckedRequest<OpenID4VPDetails>
    {
        let limits = environment.limits
        let parameterLimits = JSONValue.Limits(
            maxBytes: limits.maxRequestBytes, maxDepth: Self.parameterDepth, maxMembers: Self.parameterMembers,
            maxStringBytes: limits.maxRequestBytes)
        let data = try entry.parsedData(limits: parameterLimits)
        let form =
            Self.form(of: entry) ?? Self.bareForm(data)
        let shape = data.shape
        guard shape.depth <= Self.parameterDepth, shape.widest <= Self.parameterMembers else {
            throw PresentmentError(OpenID4VPRule.dataOverBounds)
        }
        var joseLimits = JOSELimits(maxBytes: limits.maxRequestBytes)
        joseLimits.maxSignatures = 8
        let object = try RequestObject(form: form, data: data, limits: joseLimits, parameterLimits: parameterLimits)
        let parameters = try AuthorizationParameters(object, origin: origin)

        // Trust: one policy, both protocols. Trusted through any signature the policy trusts (a
        // multisigned request carries one per trust framework, Appendix A); every signature has
        // verified already.
        var authentication = ReaderAuthentication.unsigned
        if object.signers.isEmpty {
            try environment.trust.requireSignature()
        } else {
            let judged = environment.trust.judge(object.signers.map { ($0.label, $0.chain) }, anySignature: true)
            let signatures = zip(object.signers, judged.verdicts).map { s, v in
                RequestSignature(
                    label: s.label, clientID: s.clientID, certificateSubjects: s.chain.map(\.subject), verdict: v)
            }
            if trace != nil {
                for (k, s) in object.signers.enumerated() {
                    trace!.signatures.append(
                        .init(
                            signatures[k], algorithm: s.header.algorithm.rawValue, signedBytes: s.signingInput,
                            refusal: judged.refusals[k]?.rule))
                }
            }
            if let refusal = judged.refusal { throw refusal }
            authentication = ReaderAuthentication(
                verdict: judged.verdicts.max { $0.strength < $1.strength } ?? .notAuthenticated,
                readers: judged.verdicts, signatures: signatures)
        }

        let metadata = try ClientMetadata(
            parameters.clientMetadata, mode: parameters.responseMode, preferA256GCM: settings.preferA256GCM)
        var dcqlLimits = DCQLQuery.Limits()
        dcqlLimits.maxCredentialQueries = limits.maxDocuments
        dcqlLimits.maxRequestedElements = limits.maxRequestedElements
        let dcql = try DCQLQuery(
            parameters.dcqlQuery, issuerAuthAlgorithms: metadata.issuerAuthAlgorithms,
            deviceAuthAlgorithms: metadata.deviceAuthAlgorithms, formatsAccepted: metadata.formatsAccepted,
            limits: dcqlLimits)
        let handover = OpenID4VPHandover(
            origin: origin.serialized, nonce: parameters.nonce, responseKey: metadata.responseKey?.key)
        if trace != nil {
            trace!.record(
                "OpenID4VPDCAPIHandoverInfo",
                OpenID4VPHandover.handoverInfo(
                    origin: origin.serialized, nonce: parameters.nonce,
                    jwkThumbprint: metadata.responseKey?.key.thumbprint))
            trace!.record("OpenID4VPDCAPIHandover", handover.handover)
            trace!.record("SessionTranscript", handover.sessionTranscript)
        }
        return CheckedRequest(
            CheckedEntry(
                protocolIdentifier: form.protocolIdentifier, queries: dcql.queries, documentSets: dcql.documentSets,
                sessionTranscript: handover.sessionTranscript, authentication: authentication),
            details: OpenID4VPDetails(
                form: form, framing: entry.framing, responseMode: parameters.responseMode, nonce: parameters.nonce,
                credentialQueryIDs: dcql.ids,
                verifierInfo: parameters.verifierInfo.map { String(decoding: $0.text, as: UTF8.self) },
                droppedSignatures: object.dropped, handover: handover, responseKey: metadata.responseKey))
    }

    /// One DeviceResponse per answered credential query.
    package var responseLayout: ResponseLayout { .perDocument }

    /// `{"vp_token": {"<query id>": ["<base64url DeviceResponse>", …], …}}` in query order, encrypted as
    /// a JWE to the verifier's key for `dc_api.jwt` (`{"response": "<JWE>"}`), framed. Written straight
    /// into byte buffers: each DeviceResponse base64url-encoded into the payload, the JWE into the output.
    package func answer(_ responses: [BuiltResponse], details: OpenID4VPDetails, format: ResponseFormat)
        throws(PresentmentError) -> Data
    {
        // vp_token: each credential query's id once, in the order its first response comes, with every
        // response answering it in order (found by looking back and ahead: a request answers at most a
        // few queries, and no list of groups is made).
        let ids = details.credentialQueryIDs
        var size = 64
        for r in responses {
            size += Base64URL.encodedLength(r.response.count) + ids[r.documents[0]].utf8.count + 8
        }
        var payload = JSONWriter(capacity: size)
        payload.writeRaw("{\"vp_token\":{")
        var written = 0
        for (k, first) in responses.enumerated() {
            let id = ids[first.documents[0]]
            if responses[..<k].contains(where: { ids[$0.documents[0]] == id }) { continue }
            if written > 0 { payload.writeRaw(",") }
            written += 1
            payload.writeString(id)
            payload.writeRaw(":[")
            var inGroup = 0
            for r in responses[k...] where ids[r.documents[0]] == id {
                if inGroup > 0 { payload.writeRaw(",") }
                inGroup += 1
                // The DeviceResponse's pieces encoded in order (a large element is read once, here).
                guard payload.writeBase64URLString(pieces: ResponsePieces(response: r.response)) else {
                    throw PresentmentError(OpenID4VPRule.sealing)
                }
            }
            payload.writeRaw("]")
        }
        payload.writeRaw("}}")
        let wrap: Bool =
            switch format {
            case .automatic: details.framing == .requestList || details.framing == .digitalRequestList
            case .dataObject, .binary: false
            case .protocolAndData: true
            }
        let envelope = wrap ? details.form.protocolIdentifier : nil
        guard let enc = details.responseKey else {
            return ResponseEnvelope.response(protocolIdentifier: envelope, bodyLength: payload.bytes.count) { body in
                // unsafe: the vp_token copied once into the response buffer returned.
                payload.bytes.withUnsafeBytes { body.copyMemory(from: $0) }
            }
        }
        // {"response":"<JWE>"}: every length is known before anything is encrypted, so the JWE is
        // written once into the buffer that becomes the returned Data, the payload encrypted where it
        // was written.
        let sealer = try Self.sealer(enc, ephemeralKey: settings.ephemeralKeySource?().key)
        var text = payload.takeBytes()
        return try ResponseEnvelope.responseString(
            protocolIdentifier: envelope, textLength: sealer.compactLength(plaintextCount: text.count)
        ) { jwe throws(PresentmentError) in
            // unsafe: the plaintext encrypted in place and cleansed after (JWE writes straight into the response).
            let result: Result<Void, JOSEError> = text.withUnsafeMutableBytes { pt in
                Result { () throws(JOSEError) in try sealer.seal(inPlace: pt, into: jwe) }
            }
            if case .failure(let error) = result { throw PresentmentError(OpenID4VPRule.sealing, underlying: error) }
        }
    }

    /// A DeviceResponse as the JSON writer reads it, piece by piece.
    private struct ResponsePieces: PiecewiseBytes {
        let response: DeviceResponseBytes
        var count: Int { response.count }
        // unsafe: the DeviceResponse's pieces as views, fed to the cipher without joining them.
        func forEachPiece(_ body: (UnsafeRawBufferPointer) -> Void) { response.forEachPiece(body) }
    }

    /// The JWE prepared for the verifier's key (`OpenID4VPRule.sealing` when the agreement fails).
    private static func sealer(
        _ enc: ResponseKey, ephemeralKey: PrivateKey?
    ) throws(PresentmentError) -> JWESealer {
        do {
            return try JWESealer(
                to: enc.key, encryption: enc.encryption, keyID: enc.key.keyID, ephemeralKey: ephemeralKey)
        } catch { throw PresentmentError(OpenID4VPRule.sealing, underlying: error) }
    }
}
