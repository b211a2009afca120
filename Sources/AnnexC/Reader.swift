#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HPKE
import MdocCBOR

/// The verifier's side of Annex C, for tests, conformance and debugging: builds requests the way a
/// web page does and opens and verifies responses the way a careful verifier does.
public enum AnnexCReader {
    /// One document to request.
    public struct DocumentRequest: Sendable {
        /// The docType.
        public var docType: String
        /// (element, intentToRetain) in request order.
        public var elements: [(ElementID, Bool)]
        /// 2nd-edition alternativeDataElements: requested element → alternative sets.
        public var alternatives: [(ElementID, [[ElementID]])]
        /// 2nd-edition maximumResponseSize.
        public var maximumResponseSize: UInt64?

        /// Creates a document request.
        public init(docType: String, elements: [(ElementID, Bool)], alternatives: [(ElementID, [[ElementID]])] = [], maximumResponseSize: UInt64? = nil) {
            self.docType = docType
            self.elements = elements
            self.alternatives = alternatives
            self.maximumResponseSize = maximumResponseSize
        }
    }

    /// How the reader signs its request.
    public enum Signing: Sendable {
        /// No reader authentication.
        case none
        /// A readerAuth per DocRequest.
        case perDocument(signer: SoftwareSigner, chain: [Certificate])
        /// One readerAuthAll over all DocRequests (version 1.1).
        case all(signer: SoftwareSigner, chain: [Certificate])
        /// Per DocRequest its own signer or none (nil), and optionally a readerAuthAll: requests signed
        /// by several readers, or only in part.
        case custom(perDocument: [(signer: SoftwareSigner, chain: [Certificate])?], all: (signer: SoftwareSigner, chain: [Certificate])?)

        /// The signer of DocRequest `i`, if any.
        func documentSigner(_ i: Int) -> (signer: SoftwareSigner, chain: [Certificate])? {
            switch self {
            case .none, .all: nil
            case .perDocument(let s, let c): (s, c)
            case .custom(let each, _): i < each.count ? each[i] : nil
            }
        }

        /// The readerAuthAll signer, if any.
        var allSigner: (signer: SoftwareSigner, chain: [Certificate])? {
            switch self {
            case .none, .perDocument: nil
            case .all(let s, let c): (s, c)
            case .custom(_, let all): all
            }
        }
    }

    /// A use case for version 1.1 requests.
    public struct UseCase: Sendable {
        /// Mandatory.
        public var mandatory: Bool
        /// Sets of document indices.
        public var documentSets: [[Int]]
        /// Creates a use case.
        public init(mandatory: Bool, documentSets: [[Int]]) {
            self.mandatory = mandatory
            self.documentSets = documentSets
        }
    }

    /// A built request and what the reader keeps to open the answer.
    public struct BuiltRequest: Sendable {
        /// The raw request JSON in the chosen framing.
        public let rawRequest: Data
        /// The reader's HPKE private key (keep it to open the response).
        public let recipientKey: HPKE.PrivateKey
        /// The encryptionInfo string exactly as sent.
        public let encryptionInfo: String
        /// The deviceRequest string as sent.
        public let deviceRequest: String
        /// The origin the request is made from.
        public let origin: Origin
        /// What was requested, for checking that only requested elements come back.
        public let documents: [DocumentRequest]

        /// Reassembles a request that was built earlier (e.g. stored in TestVectors) for opening its answer.
        public init(rawRequest: Data, recipientKey: HPKE.PrivateKey, encryptionInfo: String, deviceRequest: String, origin: Origin, documents: [DocumentRequest]) {
            self.rawRequest = rawRequest
            self.recipientKey = recipientKey
            self.encryptionInfo = encryptionInfo
            self.deviceRequest = deviceRequest
            self.origin = origin
            self.documents = documents
        }
    }

    /// Builds a request.
    /// - Parameters:
    ///   - documents: what to ask for.
    ///   - origin: the page's origin (signed into readerAuth through the transcript).
    ///   - framing: the JSON framing.
    ///   - signing: reader authentication.
    ///   - version: "1.0" or "1.1".
    ///   - useCases: 1.1 useCases (encoded in deviceRequestInfo).
    ///   - nonce: the reader nonce (random 16 bytes by default).
    ///   - recipientKey: the reader's HPKE key (fresh by default).
    public static func makeRequest(documents: [DocumentRequest], origin: Origin, framing: RequestFraming = .digitalRequestList,
                                   signing: Signing = .none, version: String = "1.0", useCases: [UseCase] = [],
                                   nonce: [UInt8]? = nil, recipientKey: HPKE.PrivateKey? = nil) throws(AnnexCError) -> BuiltRequest {
        let key: HPKE.PrivateKey
        do { key = try recipientKey ?? HPKE.PrivateKey.generate(kem: .p256HKDFSHA256) } catch { throw AnnexCError(.sealingFailed, "reader key generation failed") }
        let pub = key.publicKey.serialized
        let coseKey: CBORValue = .map([.init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(Array(pub[1..<33]))), .init(.int(-3), .bytes(Array(pub[33...])))])
        let n = nonce ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
        let encryptionInfo = Base64URL.encode(CBORValue.array([.text("dcapi"), .map([.init(.text("nonce"), .bytes(n)), .init(.text("recipientPublicKey"), coseKey)])]).encoded())
        let transcript = SessionTranscript(encryptionInfo: encryptionInfo, origin: origin)

        let is11 = (DeviceRequest.parseVersion(version)?.minor ?? 0) >= 1
        let itemsRequests: [[UInt8]] = documents.map { d in
            var nsOrder = [String]()
            var byNS = [String: [CBORValue.MapEntry]]()
            for (e, retain) in d.elements {
                if byNS[e.nameSpace] == nil { nsOrder.append(e.nameSpace) }
                byNS[e.nameSpace, default: []].append(.init(.text(e.identifier), .bool(retain)))
            }
            var entries: [CBORValue.MapEntry] = [
                .init(.text("docType"), .text(d.docType)),
                .init(.text("nameSpaces"), .map(nsOrder.map { .init(.text($0), .map(byNS[$0]!)) })),
            ]
            var info = [CBORValue.MapEntry]()
            if !d.alternatives.isEmpty {
                info.append(.init(.text("alternativeDataElements"), .array(d.alternatives.map { (req, sets) in
                    .map([.init(.text("requestedElement"), .array([.text(req.nameSpace), .text(req.identifier)])),
                          .init(.text("alternativeElementSets"), .array(sets.map { .array($0.map { .array([.text($0.nameSpace), .text($0.identifier)]) }) }))])
                })))
            }
            if let m = d.maximumResponseSize { info.append(.init(.text("maximumResponseSize"), .unsigned(m))) }
            if !info.isEmpty { entries.append(.init(.text("requestInfo"), .map(info))) }
            return CBORValue.embedded(.map(entries)).encoded()
        }
        var deviceRequestInfo: [UInt8]?
        if is11 && !useCases.isEmpty {
            deviceRequestInfo = CBORValue.embedded(.map([.init(.text("useCases"), .array(useCases.map { uc in
                .map([.init(.text("mandatory"), .bool(uc.mandatory)), .init(.text("documentSets"), .array(uc.documentSets.map { .array($0.map { .unsigned(UInt64($0)) }) }))])
            }))])).encoded()
        }
        func x5(_ chain: [Certificate]) -> [CBORValue.MapEntry] {
            [.init(.int(COSEHeaderLabel.x5chain), chain.count == 1 ? .bytes(chain[0].der) : .array(chain.map { .bytes($0.der) }))]
        }
        var w = CBORWriter(capacity: 2048)
        var topCount = 2
        if deviceRequestInfo != nil { topCount += 1 }
        if signing.allSigner != nil { topCount += 1 }
        w.writeMapHeader(count: topCount)
        w.writeText("version")
        w.writeText(version)
        w.writeText("docRequests")
        w.writeArrayHeader(count: itemsRequests.count)
        for (i, ir) in itemsRequests.enumerated() {
            if let (signer, chain) = signing.documentSigner(i) {
                w.writeMapHeader(count: 2)
                w.writeText("itemsRequest"); w.writeRaw(ir)
                w.writeText("readerAuth")
                let rab = MdocAuthentication.readerAuthenticationBytes(sessionTranscript: transcript.bytes, itemsRequestBytes: ir)
                do { try COSESign1.sign(into: &w, payload: rab, detached: true, signer: signer, unprotected: x5(chain)) } catch {
                    throw AnnexCError(.signingFailed, "reader signing failed")
                }
            } else {
                w.writeMapHeader(count: 1)
                w.writeText("itemsRequest"); w.writeRaw(ir)
            }
        }
        if let dri = deviceRequestInfo {
            w.writeText("deviceRequestInfo")
            w.writeRaw(dri)
        }
        if let (signer, chain) = signing.allSigner {
            w.writeText("readerAuthAll")
            w.writeArrayHeader(count: 1)
            let raa = MdocAuthentication.readerAuthenticationAllBytes(sessionTranscript: transcript.bytes, itemsRequestBytes: itemsRequests.map { $0[...] },
                                                                      deviceRequestInfoBytes: deviceRequestInfo.map { $0[...] })
            do { try COSESign1.sign(into: &w, payload: raa, detached: true, signer: signer, unprotected: x5(chain)) } catch {
                throw AnnexCError(.signingFailed, "reader signing failed")
            }
        }
        let deviceRequest = Base64URL.encode(w.bytes)
        let data = "{\"deviceRequest\":\"\(deviceRequest)\",\"encryptionInfo\":\"\(encryptionInfo)\"}"
        let raw: String
        switch framing {
        case .dataObject: raw = data
        case .protocolAndData: raw = "{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}"
        case .requestList: raw = "{\"requests\":[{\"protocol\":\"openid4vp-v1-unsigned\",\"data\":{}},{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}"
        case .digitalRequestList: raw = "{\"digital\":{\"requests\":[{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}}"
        }
        return BuiltRequest(rawRequest: Data(raw.utf8), recipientKey: key, encryptionInfo: encryptionInfo, deviceRequest: deviceRequest,
                            origin: origin, documents: documents)
    }

    /// One verified document and the elements it disclosed.
    public struct VerifiedDocument: Sendable {
        /// The docType.
        public let docType: String
        /// Disclosed elements with their values, in response order.
        public let elements: [(ElementID, CBORItem)]
        /// The document signer certificate subject.
        public let documentSigner: String
        /// The MSO validity.
        public let validUntil: Date
    }

    /// What the holder's side is known to have held, shown and approved: lets a test hold a response
    /// to exactly what the holder agreed to, not only to what the reader asked for.
    public struct HolderConsent: Sendable {
        /// docType → every element the answering credential holds.
        public var held: [String: Set<ElementID>]
        /// docType → the elements the holder approved; nil when everything shown was approved.
        public var approved: [String: Set<ElementID>]?
        /// The largest alternative set the wallet may honour (its `maxAlternativeSetSize`).
        public var maxAlternativeSetSize: Int
        /// Creates a record.
        public init(held: [String: Set<ElementID>], approved: [String: Set<ElementID>]? = nil, maxAlternativeSetSize: Int = 6) {
            self.held = held
            self.approved = approved
            self.maxAlternativeSetSize = maxAlternativeSetSize
        }
    }

    /// A verified response.
    public struct VerifiedResponse: Sendable {
        /// The decrypted DeviceResponse bytes.
        public let deviceResponse: [UInt8]
        /// Verified documents.
        public let documents: [VerifiedDocument]
        /// documentErrors, if any.
        public let documentErrors: [[(docType: String, code: Int64)]]
    }

    /// Extracts the CBOR EncryptedResponse from any of the response framings.
    public static func encryptedResponse(from response: Data) throws(AnnexCError) -> [UInt8] {
        let bytes = Array(response)
        guard let first = bytes.first(where: { $0 != 0x20 && $0 != 0x0a && $0 != 0x0d && $0 != 0x09 }), first == UInt8(ascii: "{") else { return bytes }
        let json: JSONValue
        do { json = try JSONValue.parse(bytes, limits: .init(maxBytes: 64 << 20, maxDepth: 8, maxMembers: 16, maxStringBytes: 64 << 20)) } catch {
            throw AnnexCError(.responseInvalid, "response JSON is malformed")
        }
        let r = json["data"]?["response"] ?? json["response"] ?? json["data"]?["Response"] ?? json["Response"]
        guard let s = r?.string, let raw = Base64URL.decode(s) else { throw AnnexCError(.responseInvalid, "response member missing or not base64url") }
        return raw
    }

    /// Decrypts a response (any framing) with the reader key and the transcript of `encryptionInfo` and
    /// `origin`, returning the DeviceResponse bytes without verifying them.
    public static func decrypt(_ response: Data, recipientKey: HPKE.PrivateKey, encryptionInfo: String, origin: Origin) throws(AnnexCError) -> [UInt8] {
        let encrypted = try encryptedResponse(from: response)
        let er: CBORItem
        do { er = try CBORDocument(decoding: encrypted).root } catch { throw AnnexCError(.responseInvalid, "EncryptedResponse is not well-formed CBOR") }
        guard er.type == .array, er.count == 2, er[0]!.isText("dcapi"), let m = er[1], m.type == .map,
              let enc = m["enc"]?.byteStringValue, let ct = m["cipherText"]?.byteStringValue else {
            throw AnnexCError(.responseInvalid, "EncryptedResponse is not [\"dcapi\", {enc, cipherText}]")
        }
        let transcript = SessionTranscript(encryptionInfo: encryptionInfo, origin: origin)
        do {
            return try HPKE.open(suite: .annexC, privateKey: recipientKey, encapsulatedKey: enc, info: transcript.bytes, ciphertext: ct)
        } catch { throw AnnexCError(.responseInvalid, "HPKE open failed") }
    }

    /// Opens and verifies a response as a verifier would: HPKE open with the reader key and the same
    /// transcript; DeviceResponse structure; per document the issuer signature, the DS certificate chain
    /// to one of `issuerRoots` (when given) with the DS EKU, MSO docType and validity at `time`, every
    /// released digest, the device signature with the MSO device key, and that only requested elements
    /// were disclosed. A substitute (an element of an alternative set) is accepted only in place of a
    /// requested element that was not disclosed, as part of a whole set within that element's
    /// namespace; with `consent`, also only when the credential lacks the requested element, the set
    /// fits the wallet's bound, and every disclosed element was approved.
    public static func openResponse(_ response: Data, for request: BuiltRequest, issuerRoots: [Certificate], at time: Date,
                                    consent: HolderConsent? = nil) throws(AnnexCError) -> VerifiedResponse {
        let transcript = SessionTranscript(encryptionInfo: request.encryptionInfo, origin: request.origin)
        let plaintext = try decrypt(response, recipientKey: request.recipientKey, encryptionInfo: request.encryptionInfo, origin: request.origin)
        let dr: DeviceResponse
        do { dr = try DeviceResponse(encoded: plaintext) } catch { throw AnnexCError(.responseInvalid, "DeviceResponse: \(error)") }
        guard dr.status == 0 else { throw AnnexCError(.responseInvalid, "DeviceResponse status is not 0") }
        var verified = [VerifiedDocument]()
        for doc in dr.documents {
            guard let asked = request.documents.first(where: { $0.docType == doc.docType }) else {
                throw AnnexCError(.responseInvalid, "a document was returned that was not requested")
            }
            let auth = doc.issuerSigned.issuerAuth
            let chain: [Certificate]
            do { chain = try auth.headers.x5chain().map { (der) throws(COSEError) in try Certificate(der: der) } } catch {
                throw AnnexCError(.responseInvalid, "issuerAuth x5chain is malformed")
            }
            guard let ds = chain.first else { throw AnnexCError(.responseInvalid, "issuerAuth has no document signer certificate") }
            do { try auth.verify(key: try ds.publicKey()) } catch { throw AnnexCError(.responseInvalid, "issuer signature does not verify") }
            if !issuerRoots.isEmpty {
                do { try Certificate.validatePath(leaf: ds, intermediates: Array(chain.dropFirst()), anchors: issuerRoots, at: time) } catch {
                    throw AnnexCError(.responseInvalid, "document signer does not chain to a given IACA")
                }
                guard ds.hasExtendedKeyUsage(MdocKeyUsage.documentSigner) else { throw AnnexCError(.responseInvalid, "document signer lacks EKU 1.0.18013.5.1.2") }
            }
            let mso: MobileSecurityObject
            do { mso = try doc.issuerSigned.mobileSecurityObject() } catch { throw AnnexCError(.responseInvalid, "MSO: \(error)") }
            guard mso.docType == doc.docType else { throw AnnexCError(.responseInvalid, "MSO docType differs from the document's") }
            guard mso.validityInfo.contains(time) else { throw AnnexCError(.responseInvalid, "MSO not valid at the verification time") }
            do { try doc.issuerSigned.checkValueDigests(against: mso) } catch { throw AnnexCError(.responseInvalid, "a disclosed element does not match its MSO digest") }
            guard case .signature(let sig) = doc.deviceSigned.deviceAuth else { throw AnnexCError(.responseInvalid, "no deviceSignature (deviceMac is impossible in Annex C)") }
            let dab = MdocAuthentication.deviceAuthenticationBytes(sessionTranscript: transcript.bytes, docType: doc.docType, deviceNameSpacesBytes: doc.deviceSigned.nameSpacesBytes)
            do { try sig.verify(key: mso.deviceKey, detachedPayload: sig.payload == nil ? dab : nil) } catch {
                throw AnnexCError(.responseInvalid, "device signature does not verify")
            }
            if let attached = sig.payload, !attached.elementsEqual(dab) { throw AnnexCError(.responseInvalid, "attached DeviceAuthentication differs from the expected one") }
            var elements = [(ElementID, CBORItem)]()
            for ns in doc.issuerSigned.nameSpaces {
                for item in ns.items { elements.append((ElementID(ns.name, item.elementIdentifier), item.elementValue)) }
            }
            try checkDisclosure(elements.map(\.0), asked: asked, consent: consent)
            verified.append(VerifiedDocument(docType: doc.docType, elements: elements, documentSigner: ds.subject, validUntil: mso.validityInfo.validUntil))
        }
        return VerifiedResponse(deviceResponse: plaintext, documents: verified, documentErrors: dr.documentErrors)
    }

    /// The disclosure rule of `openResponse` for one document: every disclosed element was requested,
    /// or is a substitute for a requested element that was not disclosed (see `openResponse`).
    static func checkDisclosure(_ disclosed: [ElementID], asked: DocumentRequest, consent: HolderConsent?) throws(AnnexCError) {
        let requested = Set(asked.elements.map(\.0))
        let present = Set(disclosed)
        guard present.count == disclosed.count else { throw AnnexCError(.responseInvalid, "an element was disclosed twice") }
        let approved = consent?.approved.map { $0[asked.docType] ?? [] }
        let held = consent?.held[asked.docType]
        for id in disclosed {
            if let approved, !approved.contains(id) { throw AnnexCError(.responseInvalid, "an element was disclosed that the holder did not approve") }
            if requested.contains(id) { continue }
            let admissible = asked.alternatives.contains { original, sets in
                requested.contains(original) && !present.contains(original) && !(held?.contains(original) ?? false)
                    && sets.contains { set in
                        set.contains(id) && set.allSatisfy { $0.nameSpace == original.nameSpace && present.contains($0) }
                            && Set(set).count <= (consent?.maxAlternativeSetSize ?? Int.max)
                    }
            }
            guard admissible else {
                throw AnnexCError(.responseInvalid, "an element was disclosed that was not requested and is no admissible substitute for a requested element")
            }
        }
    }
}
