#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
@_spi(FrontEnd) import Presentment

/// Verifies readerAuth / readerAuthAll (18013-5 §9.1.4, 2nd edition readerAuthAll) and applies the
/// holder's trust policy: first every signature, then trust, per signature and per DocRequest.
struct ReaderAuthenticator {
    static let allowedAlgorithms: Set<COSEAlgorithm> = [.es256, .esp256, .es384, .es512, .esp384, .esp512]
    /// Header parameters a reader signature may mark critical: those the engine acts on or may ignore
    /// safely (alg, kid, x5chain).
    static let understoodHeaders: Set<Int64> = [
        COSEHeaderLabel.algorithm, COSEHeaderLabel.keyID, COSEHeaderLabel.x5chain,
    ]

    /// The holder's policy at the engine's clock.
    let trust: ReaderTrustEvaluator

    /// One signature and what it covers.
    private struct Signature {
        let sign1: COSESign1
        let payload: [UInt8]
        let label: String
        /// DocRequest indices it covers (nil: all of them).
        let covers: Int?
    }

    /// Verifies every reader signature, then applies the policy. With `consent` the result carries
    /// per-document verdicts, coverage, the signatures and the readers (the consent model); `accept`
    /// leaves them out. `trace` receives each signature's algorithm, signed bytes, chain and trust
    /// outcome, also when a later rule refuses the request.
    func authenticate(
        request: DeviceRequest, transcript: AnnexCSessionTranscript, consent: Bool, trace: inout CheckTrace?
    ) throws(PresentmentError) -> ReaderAuthentication {
        let count = request.docRequests.count
        var signatures = [Signature]()
        for (i, d) in request.docRequests.enumerated() {
            if let ra = d.readerAuth {
                let payload = MdocAuthentication.readerAuthenticationBytes(
                    sessionTranscript: transcript.bytes, itemsRequestBytes: d.itemsRequestBytes)
                signatures.append(
                    Signature(sign1: ra, payload: payload, label: "docRequests[\(i)].readerAuth", covers: i))
            }
        }
        if !request.readerAuthAll.isEmpty {
            let payload = MdocAuthentication.readerAuthenticationAllBytes(
                sessionTranscript: transcript.bytes,
                itemsRequestBytes: request.docRequests.map(\.itemsRequestBytes),
                deviceRequestInfoBytes: request.deviceRequestInfo?.bytes)
            for (i, s) in request.readerAuthAll.enumerated() {
                signatures.append(Signature(sign1: s, payload: payload, label: "readerAuthAll[\(i)]", covers: nil))
            }
        }
        if signatures.isEmpty {
            try trust.requireSignature()
            return .unsigned
        }

        // 1. Every signature, before any trust decision: any failure refuses the request.
        var chains = [[Certificate]]()
        chains.reserveCapacity(signatures.count)
        for s in signatures { chains.append(try verify(s)) }

        // 2. Trust, per signature; the explicit refusal policies apply here.
        let judged = trust.judge(signatures.indices.map { (signatures[$0].label, chains[$0]) })
        var signed = [RequestSignature]()
        if consent || trace != nil {
            signed.reserveCapacity(signatures.count)
            for k in signatures.indices {
                signed.append(
                    RequestSignature(
                        label: signatures[k].label, clientID: nil, certificateSubjects: chains[k].map(\.subject),
                        verdict: judged.verdicts[k]))
            }
        }
        if trace != nil {
            for k in signatures.indices {
                let alg = (try? signatures[k].sign1.headers.protectedAlgorithm()) ?? .es256
                trace!.signatures.append(
                    .init(
                        signed[k], algorithm: alg.name, signedBytes: signatures[k].payload,
                        refusal: judged.refusals[k]?.rule))
            }
        }
        if let refusal = judged.refusal { throw refusal }

        // 3. Per DocRequest: covered by its own readerAuth and every readerAuthAll; the strongest
        // covering verdict is its verdict (every covering signature verified). The per-document lists
        // are built only for the consent model.
        var documents = [(verdict: ReaderVerdict, signatures: [String])]()
        if consent { documents.reserveCapacity(count) }
        var weakest: ReaderVerdict?
        for i in 0..<count {
            var best = ReaderVerdict.notAuthenticated
            var labels = [String]()
            var covered = false
            for (s, v) in zip(signatures, judged.verdicts) where s.covers == nil || s.covers == i {
                covered = true
                if consent { labels.append(s.label) }
                if v.strength > best.strength { best = v }
            }
            if trust.policy.requireReaderAuthentication && !covered {
                throw PresentmentError(TrustRule.documentNotCovered, at: "docRequests[\(i)]")
            }
            if weakest == nil || best.strength < weakest!.strength { weakest = best }
            if consent { documents.append((best, labels)) }
        }
        var readers = [ReaderVerdict]()
        if consent {
            var seen = [[UInt8]]()
            for (chain, v) in zip(chains, judged.verdicts) where !seen.contains(chain[0].der) {
                seen.append(chain[0].der)
                readers.append(v)
            }
        }
        return ReaderAuthentication(
            verdict: weakest ?? .notAuthenticated, readers: readers, signatures: consent ? signed : [],
            perDocument: documents)
    }

    /// Verifies one signature over its exact bytes; returns its x5chain, leaf first.
    private func verify(_ s: Signature) throws(PresentmentError) -> [Certificate] {
        let label = s.label
        let sig = s.sign1
        let alg: COSEAlgorithm
        do { alg = try sig.headers.protectedAlgorithm() } catch {
            if error.code == .malformed {
                throw PresentmentError(AnnexCRule.algorithmNotProtected, at: label)
            }
            throw PresentmentError(AnnexCRule.algorithmUnknown, at: label)
        }
        guard Self.allowedAlgorithms.contains(alg) else {
            throw PresentmentError(AnnexCRule.algorithmNotAllowed, at: label)
        }
        do { try sig.headers.checkCritical(understood: Self.understoodHeaders) } catch {
            throw PresentmentError(AnnexCRule.criticalHeader, at: label)
        }
        let chainDER: [[UInt8]]
        do { chainDER = try sig.headers.x5chain() } catch {
            throw PresentmentError(AnnexCRule.x5chainMalformed, at: label)
        }
        guard !chainDER.isEmpty else { throw PresentmentError(AnnexCRule.x5chainMissing, at: label) }
        guard chainDER.count <= 8 else {
            throw PresentmentError(AnnexCRule.x5chainTooLong, at: label)
        }
        var chain = [Certificate]()
        chain.reserveCapacity(chainDER.count)
        for der in chainDER {
            do { chain.append(try Certificate(der: der)) } catch {
                throw PresentmentError(AnnexCRule.certificateInvalid, at: label)
            }
        }
        let key: COSEKey
        do { key = try chain[0].publicKey() } catch {
            throw PresentmentError(AnnexCRule.keyUnsupported, at: label)
        }
        do {
            try sig.verify(key: key, detachedPayload: s.payload)
        } catch {
            switch error {
            case .keyAlgorithmMismatch:
                throw PresentmentError(AnnexCRule.keyAlgorithmMismatch, at: label)
            case .payloadMismatch:
                throw PresentmentError(AnnexCRule.payloadAttached, at: label)
            case .invalidSignatureLength:
                throw PresentmentError(AnnexCRule.signatureLength, at: label)
            default: throw PresentmentError(AnnexCRule.signatureInvalid, at: label)
            }
        }
        return chain
    }
}
