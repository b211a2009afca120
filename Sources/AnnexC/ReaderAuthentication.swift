#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
import Presentment

/// Verifies readerAuth / readerAuthAll (18013-5 §9.1.4, 2nd edition readerAuthAll) and applies the
/// holder's trust policy: first every signature, then trust, per signature and per DocRequest.
struct ReaderAuthenticator {
    static let allowedAlgorithms: Set<COSEAlgorithm> = [.es256, .esp256, .es384, .es512, .esp384, .esp512]
    /// Header parameters a reader signature may mark critical: those the engine acts on or may ignore
    /// safely (alg, kid, x5chain).
    static let understoodHeaders: Set<Int64> = [
        COSEHeaderLabel.algorithm, COSEHeaderLabel.keyID, COSEHeaderLabel.x5chain,
    ]

    let policy: ReaderTrustPolicy
    let now: Date
    var evaluator: ReaderTrustEvaluator { ReaderTrustEvaluator(policy: policy, now: now) }

    struct Result {
        /// The weakest of the per-document verdicts (what a one-line summary shows).
        var verdict: ReaderVerdict
        /// Per DocRequest, in request order, when recorded (the consent model); otherwise empty.
        /// Read through `verdict(forDocument:)`.
        var perDocument: [ReaderVerdict]
        /// Per DocRequest: the labels of the signatures that cover it (when recorded).
        var coverage: [[String]]
        /// Each distinct reader certificate that signed, in signature order, with its verdict (when recorded).
        var readers: [ReaderVerdict]

        /// DocRequest `i`'s verdict.
        func verdict(forDocument i: Int) -> ReaderVerdict { perDocument.isEmpty ? .notAuthenticated : perDocument[i] }
    }

    /// One signature and what it covers.
    private struct Signature {
        let sign1: COSESign1
        let payload: [UInt8]
        let label: String
        /// DocRequest indices it covers (nil: all of them).
        let covers: Int?
    }

    /// Verifies every reader signature, then applies the policy. With `record` (the consent path),
    /// `checks` receives each signature's algorithm, signed bytes, chain and trust outcome, also when a
    /// later rule refuses the request, and the result carries per-document verdicts, coverage and the
    /// readers; `accept` leaves them out.
    func authenticate(
        request: DeviceRequest, transcript: SessionTranscript, record: Bool,
        checks: inout [Explanation.ReaderCheck]
    ) throws(PresentmentError) -> Result {
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
            try evaluator.requireSignature()
            return Result(verdict: .notAuthenticated, perDocument: [], coverage: [], readers: [])
        }

        // 1. Every signature, before any trust decision: any failure refuses the request.
        var verified = [(chain: [Certificate], verdict: ReaderVerdict)]()
        verified.reserveCapacity(signatures.count)
        for s in signatures { verified.append((try verify(s), .notAuthenticated)) }

        // 2. Trust, per signature; the explicit refusal policies apply here.
        let judged = evaluator.judge(
            signatures.indices.map { (signatures[$0].label, verified[$0].chain) })
        for k in verified.indices {
            verified[k].verdict = judged.verdicts[k]
            if record {
                let s = signatures[k]
                let alg = (try? s.sign1.headers.protectedAlgorithm()) ?? .es256
                checks.append(
                    .init(
                        label: s.label, algorithm: alg, signedBytes: s.payload,
                        certificateSubjects: verified[k].chain.map(\.subject), verified: true,
                        trust: judged.verdicts[k], refusal: judged.refusals[k]?.detail))
            }
        }
        if let refusal = judged.refusal { throw refusal }

        // 3. Per DocRequest: covered by its own readerAuth and every readerAuthAll; the strongest
        // covering verdict is its verdict (every covering signature verified). The per-document lists
        // are built only for the consent model and the explanation.
        var documents = [ReaderVerdict]()
        var coverage = [[String]]()
        if record {
            documents.reserveCapacity(count)
            coverage.reserveCapacity(count)
        }
        var weakest: ReaderVerdict?
        for i in 0..<count {
            var best = ReaderVerdict.notAuthenticated
            var labels = [String]()
            var covered = false
            for (s, v) in zip(signatures, verified) where s.covers == nil || s.covers == i {
                covered = true
                if record { labels.append(s.label) }
                if v.verdict.strength > best.strength { best = v.verdict }
            }
            if policy.requireReaderAuthentication && !covered {
                throw PresentmentError(TrustRule.documentNotCovered, at: "docRequests[\(i)]")
            }
            if weakest == nil || best.strength < weakest!.strength { weakest = best }
            if record {
                documents.append(best)
                coverage.append(labels)
            }
        }
        var readers = [ReaderVerdict]()
        if record {
            var seen = [[UInt8]]()
            for v in verified where !seen.contains(v.chain[0].der) {
                seen.append(v.chain[0].der)
                readers.append(v.verdict)
            }
        }
        return Result(
            verdict: weakest ?? .notAuthenticated, perDocument: documents, coverage: coverage, readers: readers)
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
