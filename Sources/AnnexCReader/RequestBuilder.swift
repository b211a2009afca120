#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import AnnexC
import DCAPIFraming
import HPKE
import MdocCBOR
import Presentment
import WebEncoding

extension AnnexCReader {
    /// Builds a request.
    /// - Parameters:
    ///   - documents: what to ask for.
    ///   - origin: the page's origin (signed into readerAuth through the transcript).
    ///   - framing: the JSON framing.
    ///   - signing: reader authentication.
    ///   - version: the DeviceRequest version; 1.1 fields (use cases, readerAuthAll, requestInfo) are
    ///     sent only with `.v1_1`.
    ///   - useCases: 1.1 useCases (encoded in deviceRequestInfo).
    ///   - nonce: the reader nonce (random 16 bytes by default).
    ///   - recipientKey: the reader's HPKE key (fresh by default).
    public static func makeRequest(
        documents: [DocumentRequest], origin: Origin, framing: RequestFraming = .digitalRequestList,
        signing: Signing = .none, version: Version = .v1_0, useCases: [UseCase] = [],
        nonce: [UInt8]? = nil, recipientKey: HPKE.PrivateKey? = nil
    ) throws(PresentmentError) -> BuiltRequest {
        let key: HPKE.PrivateKey
        do { key = try recipientKey ?? HPKE.PrivateKey.generate(kem: .p256HKDFSHA256) } catch {
            throw PresentmentError(VerifierRule.keyGeneration)
        }
        let pub = key.publicKey.serialized
        let coseKey: CBORValue = .map([
            .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(Array(pub[1..<33]))),
            .init(.int(-3), .bytes(Array(pub[33...]))),
        ])
        let n = nonce ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
        let encryptionInfo = Base64URL.encode(
            CBORValue.array([
                .text("dcapi"), .map([.init(.text("nonce"), .bytes(n)), .init(.text("recipientPublicKey"), coseKey)]),
            ]).encoded())
        let transcript = AnnexCSessionTranscript(encryptionInfo: encryptionInfo, origin: origin)

        let is11 = version == .v1_1
        let itemsRequests: [[UInt8]] = documents.map { d in
            var nsOrder = [String]()
            var byNS = [String: [CBORValue.MapEntry]]()
            for r in d.elements {
                let e = r.element
                if byNS[e.nameSpace] == nil { nsOrder.append(e.nameSpace) }
                byNS[e.nameSpace, default: []].append(.init(.text(e.identifier), .bool(r.intentToRetain)))
            }
            var entries: [CBORValue.MapEntry] = [
                .init(.text("docType"), .text(d.docType)),
                .init(.text("nameSpaces"), .map(nsOrder.map { .init(.text($0), .map(byNS[$0]!)) })),
            ]
            var info = [CBORValue.MapEntry]()
            if !d.alternatives.isEmpty {
                info.append(
                    .init(
                        .text("alternativeDataElements"),
                        .array(
                            d.alternatives.map { alt in
                                let req = alt.requested
                                let sets = alt.sets
                                return CBORValue.map([
                                    .init(
                                        .text("requestedElement"),
                                        .array([.text(req.nameSpace), .text(req.identifier)])),
                                    .init(
                                        .text("alternativeElementSets"),
                                        .array(
                                            sets.map {
                                                .array($0.map { .array([.text($0.nameSpace), .text($0.identifier)]) })
                                            })),
                                ])
                            })))
            }
            if let m = d.maximumResponseSize { info.append(.init(.text("maximumResponseSize"), .unsigned(m))) }
            if let zk = d.zkRequest { info.append(.init(.text("zkRequest"), zkRequestValue(zk))) }
            if !info.isEmpty { entries.append(.init(.text("requestInfo"), .map(info))) }
            return CBORValue.embedded(.map(entries)).encoded()
        }
        var deviceRequestInfo: [UInt8]?
        if is11 && !useCases.isEmpty {
            deviceRequestInfo = CBORValue.embedded(
                .map([
                    .init(
                        .text("useCases"),
                        .array(
                            useCases.map { uc in
                                .map([
                                    .init(.text("mandatory"), .bool(uc.mandatory)),
                                    .init(
                                        .text("documentSets"),
                                        .array(uc.documentSets.map { .array($0.map { .unsigned(UInt64($0)) }) })),
                                ])
                            }))
                ])
            ).encoded()
        }
        func x5(_ chain: [Certificate]) -> [CBORValue.MapEntry] {
            [
                .init(
                    .int(COSEHeaderLabel.x5chain),
                    chain.count == 1 ? .bytes(chain[0].der) : .array(chain.map { .bytes($0.der) }))
            ]
        }
        var w = CBORWriter(capacity: 2048)
        var topCount = 2
        if deviceRequestInfo != nil { topCount += 1 }
        if signing.allSigner != nil { topCount += 1 }
        w.writeMapHeader(count: topCount)
        w.writeText("version")
        w.writeText(version.rawValue)
        w.writeText("docRequests")
        w.writeArrayHeader(count: itemsRequests.count)
        for (i, ir) in itemsRequests.enumerated() {
            if let reader = signing.documentSigner(i) {
                w.writeMapHeader(count: 2)
                w.writeText("itemsRequest")
                w.writeRaw(ir)
                w.writeText("readerAuth")
                let rab = MdocAuthentication.readerAuthenticationBytes(
                    sessionTranscript: transcript.bytes, itemsRequestBytes: ir)
                do {
                    try COSESign1.sign(
                        into: &w, payload: rab, detached: true, signer: reader.signer, unprotected: x5(reader.chain))
                } catch {
                    throw PresentmentError(VerifierRule.signing)
                }
            } else {
                w.writeMapHeader(count: 1)
                w.writeText("itemsRequest")
                w.writeRaw(ir)
            }
        }
        if let dri = deviceRequestInfo {
            w.writeText("deviceRequestInfo")
            w.writeRaw(dri)
        }
        if let reader = signing.allSigner {
            w.writeText("readerAuthAll")
            w.writeArrayHeader(count: 1)
            let raa = MdocAuthentication.readerAuthenticationAllBytes(
                sessionTranscript: transcript.bytes, itemsRequestBytes: itemsRequests.map { $0[...] },
                deviceRequestInfoBytes: deviceRequestInfo.map { $0[...] })
            do {
                try COSESign1.sign(
                    into: &w, payload: raa, detached: true, signer: reader.signer, unprotected: x5(reader.chain))
            } catch {
                throw PresentmentError(VerifierRule.signing)
            }
        }
        let deviceRequest = Base64URL.encode(w.bytes)
        let data = "{\"deviceRequest\":\"\(deviceRequest)\",\"encryptionInfo\":\"\(encryptionInfo)\"}"
        let raw: String
        switch framing {
        case .dataObject: raw = data
        case .protocolAndData: raw = "{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}"
        case .requestList:
            raw =
                "{\"requests\":[{\"protocol\":\"openid4vp-v1-unsigned\",\"data\":{}},{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}"
        case .digitalRequestList:
            raw = "{\"digital\":{\"requests\":[{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}}"
        }
        return BuiltRequest(
            rawRequest: Data(raw.utf8), recipientKey: key, encryptionInfo: encryptionInfo, deviceRequest: deviceRequest,
            origin: origin, documents: documents)
    }
}

extension AnnexCReader {
    /// `zkRequest` as a reader writes it (params in the order deployed readers use).
    static func zkRequestValue(_ zk: ZeroKnowledgeAsk) -> CBORValue {
        .map([
            .init(
                .text("systemSpecs"),
                .array(
                    zk.specs.map { spec in
                        var params = [CBORValue.MapEntry]()
                        if let v = spec.version { params.append(.init(.text("version"), .unsigned(UInt64(v)))) }
                        if let h = spec.circuitHash { params.append(.init(.text("circuit_hash"), .text(h))) }
                        if let n = spec.attributeCount {
                            params.append(.init(.text("num_attributes"), .unsigned(UInt64(n))))
                        }
                        if let b = spec.blockEncHash {
                            params.append(.init(.text("block_enc_hash"), .unsigned(UInt64(b))))
                        }
                        if let b = spec.blockEncSig {
                            params.append(.init(.text("block_enc_sig"), .unsigned(UInt64(b))))
                        }
                        return .map([
                            .init(.text("zkSystemId"), .text(spec.id)), .init(.text("system"), .text(spec.system)),
                            .init(.text("params"), .map(params)),
                        ])
                    })),
            .init(.text("zkRequired"), .bool(zk.required)),
        ])
    }
}
