#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import AnnexC
import DCAPIFraming
import HPKE
import MdocCBOR
import Longfellow
import Presentment
import WebEncoding

extension AnnexCReader {
    /// Decrypts a response (any framing) with the reader key and the transcript of `encryptionInfo` and
    /// `origin`, returning the DeviceResponse bytes without verifying them.
    public static func decrypt(_ response: Data, recipientKey: HPKE.PrivateKey, encryptionInfo: String, origin: Origin)
        throws(PresentmentError) -> [UInt8]
    {
        let er = try EncryptedResponse(response: response)
        let enc = er.enc
        let ct = er.cipherText
        let transcript = AnnexCSessionTranscript(encryptionInfo: encryptionInfo, origin: origin)
        do {
            return try HPKE.open(
                suite: .annexC, privateKey: recipientKey, encapsulatedKey: enc, info: transcript.bytes, ciphertext: ct)
        } catch { throw PresentmentError(VerifierRule.hpkeOpen) }
    }

    /// Opens and verifies a response as a verifier would: HPKE open with the reader key and the same
    /// transcript; DeviceResponse structure; per document the issuer signature, the DS certificate chain
    /// to one of `issuerRoots` (when given) with the DS EKU, MSO docType and validity at `time`, every
    /// released digest, the device signature with the MSO device key, and that only requested elements
    /// were disclosed. A substitute (an element of an alternative set) is accepted only in place of a
    /// requested element that was not disclosed, as part of a whole set within that element's
    /// namespace; with `consent`, also only when the credential lacks the requested element, the set
    /// fits the wallet's bound, and every disclosed element was approved.
    public static func openResponse(
        _ response: Data, for request: BuiltRequest, issuerRoots: [Certificate], at time: Date,
        consent: HolderConsent? = nil, zkVerifier: LongfellowVerifier? = nil
    ) throws(PresentmentError) -> VerifiedResponse {
        let transcript = AnnexCSessionTranscript(encryptionInfo: request.encryptionInfo, origin: request.origin)
        let plaintext = try decrypt(
            response, recipientKey: request.recipientKey, encryptionInfo: request.encryptionInfo, origin: request.origin
        )
        let dr: DeviceResponse
        do { dr = try DeviceResponse(encoded: plaintext) } catch {
            throw PresentmentError(VerifierRule.deviceResponseInvalid, underlying: error)
        }
        guard dr.status == 0 else { throw PresentmentError(VerifierRule.status) }
        var verified = [VerifiedDocument]()
        // Documents answer DocRequests in request order: each is held to the next DocRequest of its
        // docType not yet answered (a request may ask for one docType twice).
        var next = 0
        for doc in dr.documents {
            guard
                let k = request.documents.indices.first(where: {
                    $0 >= next && request.documents[$0].docType == doc.docType
                })
            else {
                throw PresentmentError(VerifierRule.unrequestedDocument)
            }
            next = k + 1
            let asked = request.documents[k]
            let document = try verifyDocument(
                doc, sessionTranscript: transcript.bytes, issuerRoots: issuerRoots, at: time)
            try checkDisclosure(document.elements.map(\.element), asked: asked, consent: consent)
            verified.append(document)
        }
        // Proven documents: each answers the next DocRequest of its docType that asked a proof.
        var answered = Set<Int>()
        for zk in dr.zkDocuments {
            guard
                let k = request.documents.indices.first(where: {
                    !answered.contains($0) && request.documents[$0].docType == zk.docType
                        && request.documents[$0].zkRequest != nil
                })
            else { throw PresentmentError(VerifierRule.zkNotRequested) }
            answered.insert(k)
            guard let zkVerifier else { throw PresentmentError(VerifierRule.zkNoVerifier) }
            verified.append(
                try verifyProven(
                    zk, asked: request.documents[k], sessionTranscript: transcript.bytes, issuerRoots: issuerRoots,
                    at: time, verifier: zkVerifier))
        }
        let errors = dr.documentErrors.flatMap { $0.map { DocumentError(docType: $0.docType, code: $0.code) } }
        return VerifiedResponse(deviceResponse: plaintext, documents: verified, documentErrors: errors)
    }

    /// Verifies one returned Document as a verifier does, against the SessionTranscript its device
    /// signature must cover: the issuer signature with the document signer certificate, its chain to
    /// one of `issuerRoots` (when given) with the DS EKU, the MSO docType and validity at `time`, every
    /// disclosed element's digest, and the device signature with the MSO device key. Which elements
    /// may be disclosed is the caller's rule.
    public static func verifyDocument(
        _ doc: Document, sessionTranscript: [UInt8], issuerRoots: [Certificate], at time: Date
    ) throws(PresentmentError) -> VerifiedDocument {
        let auth = doc.issuerSigned.issuerAuth
        let chain: [Certificate]
        do { chain = try auth.headers.x5chain().map { (der) throws(COSEError) in try Certificate(der: der) } } catch {
            throw PresentmentError(VerifierRule.x5chainMalformed)
        }
        guard let ds = chain.first else {
            throw PresentmentError(VerifierRule.noDocumentSigner)
        }
        do { try auth.verify(key: try ds.publicKey()) } catch {
            throw PresentmentError(VerifierRule.issuerSignature)
        }
        if !issuerRoots.isEmpty {
            do {
                try Certificate.validatePath(
                    leaf: ds, intermediates: Array(chain.dropFirst()), anchors: issuerRoots, at: time)
            } catch {
                throw PresentmentError(VerifierRule.notChainedToIACA)
            }
            guard ds.hasExtendedKeyUsage(MdocKeyUsage.documentSigner) else {
                throw PresentmentError(VerifierRule.documentSignerEKU)
            }
        }
        let mso: MobileSecurityObject
        do { mso = try doc.issuerSigned.mobileSecurityObject() } catch {
            throw PresentmentError(VerifierRule.msoInvalid, underlying: error)
        }
        guard mso.docType == doc.docType else {
            throw PresentmentError(VerifierRule.msoDocType)
        }
        guard mso.validityInfo.contains(time) else {
            throw PresentmentError(VerifierRule.msoValidity)
        }
        do { try doc.checkAuthentication(mso: mso, sessionTranscript: sessionTranscript) } catch {
            switch error {
            case .digest: throw PresentmentError(VerifierRule.digest)
            case .noDeviceSignature: throw PresentmentError(VerifierRule.noDeviceSignature)
            case .deviceSignature: throw PresentmentError(VerifierRule.deviceSignature)
            case .deviceAuthenticationMismatch: throw PresentmentError(VerifierRule.deviceAuthentication)
            }
        }
        var elements = [DisclosedElement]()
        for ns in doc.issuerSigned.nameSpaces {
            for item in ns.items {
                elements.append(
                    DisclosedElement(element: ElementID(ns.name, item.elementIdentifier), value: item.elementValue))
            }
        }
        return VerifiedDocument(
            docType: doc.docType, elements: elements, documentSigner: ds.subject,
            validUntil: mso.validityInfo.validUntil, proof: nil)
    }

    /// The disclosure rule of `openResponse` for one document: every disclosed element was requested,
    /// or is a substitute for a requested element that was not disclosed (see `openResponse`).
    static func checkDisclosure(_ disclosed: [ElementID], asked: DocumentRequest, consent: HolderConsent?)
        throws(PresentmentError)
    {
        let requested = Set(asked.elements.map(\.element))
        let present = Set(disclosed)
        guard present.count == disclosed.count else {
            throw PresentmentError(VerifierRule.duplicateElement)
        }
        let approved = consent?.approved.map { $0[asked.docType] ?? [] }
        let held = consent?.held[asked.docType]
        for id in disclosed {
            if let approved, !approved.contains(id) {
                throw PresentmentError(VerifierRule.notApproved)
            }
            if requested.contains(id) { continue }
            let admissible = asked.alternatives.contains { alt in
                let original = alt.requested
                let sets = alt.sets
                return requested.contains(original) && !present.contains(original)
                    && !(held?.contains(original) ?? false)
                    && sets.contains { set in
                        set.contains(id)
                            && set.allSatisfy { $0.nameSpace == original.nameSpace && present.contains($0) }
                            && Set(set).count <= (consent?.maxAlternativeSetSize ?? Int.max)
                    }
            }
            guard admissible else {
                throw PresentmentError(VerifierRule.notRequested)
            }
        }
    }
}

extension AnnexCReader {
    /// Verifies a ZkDocument as a verifier does: its `zkSystemId` is one the request offered, its time
    /// within 300 s of `time`, no device-signed claims, exactly the requested elements as claims, the
    /// document signer certificate chained to one of `issuerRoots` (when given) with the DS EKU, and the
    /// proof checked by `verifier` against that certificate's key, the claims, the docType, the
    /// SessionTranscript and the time.
    public static func verifyProven(
        _ zk: ZkDocument, asked: DocumentRequest, sessionTranscript: [UInt8], issuerRoots: [Certificate],
        at time: Date, verifier: LongfellowVerifier
    ) throws(PresentmentError) -> VerifiedDocument {
        guard let spec = asked.zkRequest?.specs.first(where: { $0.id == zk.zkSystemID }), let hash = spec.circuitHash
        else { throw PresentmentError(VerifierRule.zkSystemUnknown) }
        guard let proofTime = MdocDate.parseDateTime(zk.timestamp), abs(proofTime.timeIntervalSince(time)) <= 300 else {
            throw PresentmentError(VerifierRule.zkStale)
        }
        guard !zk.hasDeviceSignedClaims else { throw PresentmentError(VerifierRule.zkDeviceSigned) }
        let claimed = zk.claims.map { ElementID($0.nameSpace, $0.identifier) }
        guard claimed.count == asked.elements.count, Set(claimed) == Set(asked.elements.map(\.element)) else {
            throw PresentmentError(VerifierRule.zkClaims)
        }
        guard let der = zk.msoX5chain.first, let ds = try? Certificate(der: der) else {
            throw PresentmentError(VerifierRule.noDocumentSigner)
        }
        if !issuerRoots.isEmpty {
            let intermediates = zk.msoX5chain.dropFirst().compactMap { try? Certificate(der: $0) }
            do {
                try Certificate.validatePath(leaf: ds, intermediates: intermediates, anchors: issuerRoots, at: time)
            } catch {
                throw PresentmentError(VerifierRule.notChainedToIACA)
            }
            guard ds.hasExtendedKeyUsage(MdocKeyUsage.documentSigner) else {
                throw PresentmentError(VerifierRule.documentSignerEKU)
            }
        }
        guard let key = try? ds.publicKey(), key.curve == .p256, let y = key.y else {
            throw PresentmentError(VerifierRule.zkProof)
        }
        do {
            try verifier.verify(
                proof: Array(zk.proof), circuitHash: hash, issuerPublicKey: [0x04] + key.x + y, docType: zk.docType,
                claims: zk.claims.map { ($0.identifier, Array($0.value.encodedBytes)) },
                sessionTranscript: sessionTranscript, time: zk.timestamp)
        } catch { throw PresentmentError(VerifierRule.zkProof, underlying: error) }
        return VerifiedDocument(
            docType: zk.docType,
            elements: zk.claims.map {
                DisclosedElement(element: ElementID($0.nameSpace, $0.identifier), value: $0.value)
            },
            documentSigner: ds.subject, validUntil: nil, proof: spec)
    }
}
