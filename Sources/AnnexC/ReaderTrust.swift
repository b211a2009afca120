#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MdocCBOR

/// Which reader certificate authorities the holder accepts (what iOS calls supported authority key
/// identifiers), matched against the reader certificate's Authority Key Identifier.
public enum AuthorityPolicy: Sendable, Hashable {
    /// Any authority: any reader may ask (whether it is trusted is reported, not enforced).
    case any
    /// Only readers whose certificate's AKI is one of these (the issuing CA's SKI); a signed request
    /// from any other reader is refused (`untrustedReader`). An empty list behaves like `.any`.
    case only([[UInt8]])
}

/// The holder's reader-trust policy. Every reader signature is always verified, and a bad one always
/// refuses; what follows a valid signature is this policy's choice:
///
/// | policy | unsigned DocRequest | signed, not trusted | signed by an authority not in `.only` |
/// | --- | --- | --- | --- |
/// | default | answered, "not authenticated" | answered, "signed, not trusted" and why | refused |
/// | `requireTrustedReader` | answered | refused (`untrustedReader`) | refused |
/// | `requireReaderAuthentication` | refused (`readerAuthenticationRequired`) | refused (`untrustedReader`) | refused |
public struct ReaderTrustPolicy: Sendable {
    /// Reader root certificates. When empty, signatures are still verified but no reader is trusted.
    public var trustAnchors: [Certificate]
    /// Allowed authorities.
    public var authorities: AuthorityPolicy
    /// Every DocRequest must be covered by a valid signature of a trusted reader (implies
    /// `requireTrustedReader`).
    public var requireReaderAuthentication: Bool
    /// A signed DocRequest must come from a trusted reader (chain to an anchor at the engine's clock,
    /// 18013-5 Annex B reader certificate profile); unsigned DocRequests are still answered unless
    /// `requireReaderAuthentication` is set.
    public var requireTrustedReader: Bool

    /// Creates a policy.
    public init(trustAnchors: [Certificate] = [], authorities: AuthorityPolicy = .any, requireReaderAuthentication: Bool = false,
                requireTrustedReader: Bool = false) {
        self.trustAnchors = trustAnchors
        self.authorities = authorities
        self.requireReaderAuthentication = requireReaderAuthentication
        self.requireTrustedReader = requireTrustedReader
    }
}

/// Why a reader whose signature verified is not trusted (shown on the consent screen).
public enum UntrustedReason: String, Sendable, Hashable, CaseIterable {
    /// The holder has configured no trust anchors.
    case noTrustAnchors
    /// The reader certificate is self-signed and not itself an anchor.
    case selfSigned
    /// The chain does not lead to any configured anchor.
    case notChainedToAnchor
    /// The reader certificate is expired or not yet valid at the engine's clock.
    case outsideValidity
    /// The reader certificate is a CA certificate (18013-5 Annex B: an end-entity certificate).
    case isCertificateAuthority
    /// The reader certificate's key usage lacks digitalSignature (or the extension is absent).
    case lacksDigitalSignatureKeyUsage
    /// The reader certificate lacks extended key usage 1.0.18013.5.1.6.
    case lacksReaderExtendedKeyUsage

    /// A phrase for the consent screen and the explanation.
    public var explanation: String {
        switch self {
        case .noTrustAnchors: "no trust anchors are configured"
        case .selfSigned: "the reader certificate is self-signed"
        case .notChainedToAnchor: "the reader certificate does not chain to a trusted reader root"
        case .outsideValidity: "the reader certificate is expired or not yet valid"
        case .isCertificateAuthority: "the reader certificate is a CA certificate"
        case .lacksDigitalSignatureKeyUsage: "the reader certificate lacks the digitalSignature key usage"
        case .lacksReaderExtendedKeyUsage: "the reader certificate lacks EKU 1.0.18013.5.1.6"
        }
    }
}

/// The outcome of reader authentication for a DocRequest (or the whole request), for the consent UI
/// and the explanation.
public enum ReaderVerdict: Sendable, Hashable {
    /// No valid reader signature covers it.
    case notAuthenticated
    /// A reader signature covers it, and the reader chains to a trust anchor through an allowed
    /// authority with a reader-authentication certificate.
    case trusted(subject: String, authorityKeyIdentifier: [UInt8]?)
    /// A reader signature covers it and verifies, but the reader is not trusted, for `reason`.
    case signedNotTrusted(subject: String, reason: UntrustedReason)

    /// The reader certificate subject, if signed.
    public var subject: String? {
        switch self {
        case .notAuthenticated: nil
        case .trusted(let s, _), .signedNotTrusted(let s, _): s
        }
    }

    /// Weakest first: not authenticated, signed but not trusted, trusted.
    var strength: Int {
        switch self {
        case .notAuthenticated: 0
        case .signedNotTrusted: 1
        case .trusted: 2
        }
    }
}

/// Verifies readerAuth / readerAuthAll (18013-5 §9.1.4, 2nd edition readerAuthAll) and applies the
/// holder's trust policy: first every signature, then trust, per signature and per DocRequest.
struct ReaderAuthenticator {
    static let allowedAlgorithms: Set<COSEAlgorithm> = [.es256, .esp256, .es384, .es512, .esp384, .esp512]
    /// Header parameters a reader signature may mark critical: those the engine acts on or may ignore
    /// safely (alg, kid, x5chain).
    static let understoodHeaders: Set<Int64> = [COSEHeaderLabel.algorithm, COSEHeaderLabel.keyID, COSEHeaderLabel.x5chain]

    let policy: ReaderTrustPolicy
    let now: Date

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
    func authenticate(request: DeviceRequest, transcript: SessionTranscript, record: Bool,
                      checks: inout [Explanation.ReaderCheck]) throws(AnnexCError) -> Result {
        let count = request.docRequests.count
        var signatures = [Signature]()
        for (i, d) in request.docRequests.enumerated() {
            if let ra = d.readerAuth {
                let payload = MdocAuthentication.readerAuthenticationBytes(sessionTranscript: transcript.bytes, itemsRequestBytes: d.itemsRequestBytes)
                signatures.append(Signature(sign1: ra, payload: payload, label: "docRequests[\(i)].readerAuth", covers: i))
            }
        }
        if !request.readerAuthAll.isEmpty {
            let payload = MdocAuthentication.readerAuthenticationAllBytes(sessionTranscript: transcript.bytes,
                                                                          itemsRequestBytes: request.docRequests.map(\.itemsRequestBytes),
                                                                          deviceRequestInfoBytes: request.deviceRequestInfo?.bytes)
            for (i, s) in request.readerAuthAll.enumerated() { signatures.append(Signature(sign1: s, payload: payload, label: "readerAuthAll[\(i)]", covers: nil)) }
        }
        if signatures.isEmpty {
            if policy.requireReaderAuthentication {
                throw AnnexCError(.readerAuthenticationRequired, "the holder's policy requires reader authentication and the request has none")
            }
            return Result(verdict: .notAuthenticated, perDocument: [], coverage: [], readers: [])
        }

        // 1. Every signature, before any trust decision: any failure refuses the request.
        var verified = [(chain: [Certificate], verdict: ReaderVerdict)]()
        verified.reserveCapacity(signatures.count)
        for s in signatures { verified.append((try verify(s), .notAuthenticated)) }

        // 2. Trust, per signature; the explicit refusal policies apply here.
        var refusal: AnnexCError?
        for k in verified.indices {
            let s = signatures[k], chain = verified[k].chain
            let outcome = evaluate(chain)
            switch outcome {
            case .success(let verdict):
                verified[k].verdict = verdict
                if refusal == nil, policy.requireTrustedReader || policy.requireReaderAuthentication, case .signedNotTrusted(_, let reason) = verdict {
                    refusal = AnnexCError(.untrustedReader, "\(s.label): the holder's policy requires a trusted reader and \(reason.explanation)")
                }
            case .failure(let e):
                verified[k].verdict = .signedNotTrusted(subject: chain[0].subject, reason: .notChainedToAnchor)
                if refusal == nil { refusal = AnnexCError(.untrustedReader, "\(s.label): \(e.detail)") }
            }
            if record {
                let alg = (try? s.sign1.headers.protectedAlgorithm()) ?? .es256
                var detail: String?
                if case .failure(let e) = outcome { detail = e.detail }
                checks.append(.init(label: s.label, algorithm: alg, signedBytes: s.payload, certificateSubjects: chain.map(\.subject), verified: true,
                                    trust: verified[k].verdict, refusal: detail))
            }
        }
        if let refusal { throw refusal }

        // 3. Per DocRequest: covered by its own readerAuth and every readerAuthAll; the strongest
        // covering verdict is its verdict (every covering signature verified). The per-document lists
        // are built only for the consent model and the explanation.
        var documents = [ReaderVerdict](), coverage = [[String]]()
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
                throw AnnexCError(.readerAuthenticationRequired, "docRequests[\(i)] is not covered by reader authentication and the holder's policy requires it")
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
        return Result(verdict: weakest ?? .notAuthenticated, perDocument: documents, coverage: coverage, readers: readers)
    }

    /// Verifies one signature over its exact bytes; returns its x5chain, leaf first.
    private func verify(_ s: Signature) throws(AnnexCError) -> [Certificate] {
        let label = s.label, sig = s.sign1
        let alg: COSEAlgorithm
        do { alg = try sig.headers.protectedAlgorithm() } catch {
            if case .malformed = error { throw AnnexCError(.readerAuthenticationFailed, "\(label): alg is not in the protected header") }
            throw AnnexCError(.readerAuthenticationFailed, "\(label): missing or unknown alg")
        }
        guard Self.allowedAlgorithms.contains(alg) else { throw AnnexCError(.readerAuthenticationFailed, "\(label): algorithm not allowed for reader authentication") }
        do { try sig.headers.checkCritical(understood: Self.understoodHeaders) } catch {
            throw AnnexCError(.readerAuthenticationFailed, "\(label): crit header refused (RFC 9052 §3.1)")
        }
        let chainDER: [[UInt8]]
        do { chainDER = try sig.headers.x5chain() } catch { throw AnnexCError(.readerAuthenticationFailed, "\(label): malformed x5chain") }
        guard !chainDER.isEmpty else { throw AnnexCError(.readerAuthenticationFailed, "\(label): no x5chain") }
        guard chainDER.count <= 8 else { throw AnnexCError(.readerAuthenticationFailed, "\(label): x5chain longer than 8 certificates") }
        var chain = [Certificate]()
        chain.reserveCapacity(chainDER.count)
        for der in chainDER {
            do { chain.append(try Certificate(der: der)) } catch { throw AnnexCError(.readerAuthenticationFailed, "\(label): x5chain certificate is not valid DER") }
        }
        let key: COSEKey
        do { key = try chain[0].publicKey() } catch { throw AnnexCError(.readerAuthenticationFailed, "\(label): reader certificate key is not supported") }
        do {
            try sig.verify(key: key, detachedPayload: s.payload)
        } catch {
            switch error {
            case .keyAlgorithmMismatch: throw AnnexCError(.readerAuthenticationFailed, "\(label): algorithm does not match the reader key")
            case .payloadMismatch: throw AnnexCError(.readerAuthenticationFailed, "\(label): payload is attached, expected detached")
            default: throw AnnexCError(.readerAuthenticationFailed, "\(label): signature does not verify")
            }
        }
        return chain
    }

    /// The trust verdict for a verified chain: `.success` with trusted or signed-not-trusted (and
    /// why), or `.failure` when the holder's explicit authority list refuses the reader.
    private func evaluate(_ chain: [Certificate]) -> Swift.Result<ReaderVerdict, AnnexCError> {
        let leaf = chain[0]
        let subject = leaf.subject
        let aki = leaf.authorityKeyIdentifier
        if case .only(let allowed) = policy.authorities, !allowed.isEmpty {
            guard let aki, allowed.contains(aki) else {
                return .failure(AnnexCError(.untrustedReader, "reader certificate authority is not in the holder's allowed authorities"))
            }
        }
        func untrusted(_ r: UntrustedReason) -> Swift.Result<ReaderVerdict, AnnexCError> { .success(.signedNotTrusted(subject: subject, reason: r)) }
        guard !policy.trustAnchors.isEmpty else { return untrusted(.noTrustAnchors) }
        guard now >= leaf.notBefore && now <= leaf.notAfter else { return untrusted(.outsideValidity) }
        do {
            try Certificate.validatePath(leaf: leaf, intermediates: Array(chain.dropFirst()), anchors: policy.trustAnchors, at: now)
        } catch {
            return untrusted(leaf.isSelfSigned ? .selfSigned : .notChainedToAnchor)
        }
        // The 18013-5 Annex B reader-authentication certificate profile.
        guard !leaf.isCA else { return untrusted(.isCertificateAuthority) }
        guard leaf.allowsDigitalSignature else { return untrusted(.lacksDigitalSignatureKeyUsage) }
        guard leaf.hasExtendedKeyUsage(MdocKeyUsage.readerAuthentication) else { return untrusted(.lacksReaderExtendedKeyUsage) }
        return .success(.trusted(subject: subject, authorityKeyIdentifier: aki))
    }
}
