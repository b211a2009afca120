#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MdocCBOR

/// Which reader certificate authorities the holder accepts (what iOS calls supported authority key
/// identifiers), matched against the reader certificate's Authority Key Identifier.
public enum AuthorityPolicy: Sendable, Hashable {
    /// Any authority (subject to the trust anchors).
    case any
    /// Only these authority key identifiers (the issuing CA's SKI). An empty list behaves like `.any`.
    case only([[UInt8]])
}

/// The holder's reader-trust policy: trust anchors (reader roots), allowed authorities, and whether
/// reader authentication is required.
public struct ReaderTrustPolicy: Sendable {
    /// Reader root certificates. When empty, signatures are still verified but chains cannot be anchored.
    public var trustAnchors: [Certificate]
    /// Allowed authorities.
    public var authorities: AuthorityPolicy
    /// Refuse requests that are not reader-authenticated by a trusted, allowed reader.
    public var requireReaderAuthentication: Bool

    /// Creates a policy.
    public init(trustAnchors: [Certificate] = [], authorities: AuthorityPolicy = .any, requireReaderAuthentication: Bool = false) {
        self.trustAnchors = trustAnchors
        self.authorities = authorities
        self.requireReaderAuthentication = requireReaderAuthentication
    }
}

/// The outcome of reader authentication, for the consent UI and the explanation.
public enum ReaderVerdict: Sendable, Hashable {
    /// The request carried no readerAuth or readerAuthAll.
    case notAuthenticated
    /// Every signature verified and the reader chains to a trust anchor through an allowed authority.
    case trusted(subject: String, authorityKeyIdentifier: [UInt8]?)
    /// Every signature verified, but no trust anchors are configured, so the reader is not anchored.
    case signedButNotAnchored(subject: String)

    /// The reader certificate subject, if the request was signed.
    public var subject: String? {
        switch self {
        case .notAuthenticated: nil
        case .trusted(let s, _), .signedButNotAnchored(let s): s
        }
    }
}

/// Verifies readerAuth / readerAuthAll (18013-5 §9.1.4, 2nd edition readerAuthAll) and applies the
/// holder's trust policy.
struct ReaderAuthenticator {
    static let allowedAlgorithms: Set<COSEAlgorithm> = [.es256, .esp256, .es384, .es512, .esp384, .esp512]

    let policy: ReaderTrustPolicy
    let now: Date

    struct Result {
        var verdict: ReaderVerdict
        /// Per signature: what was verified and over which bytes (for the explanation).
        var checks: [Explanation.ReaderCheck]
    }

    /// Verifies every reader signature and applies the policy. `record` fills `Result.checks` (the
    /// explanation's per-signature detail); the verdict is the same either way.
    func authenticate(request: DeviceRequest, transcript: SessionTranscript, record: Bool = true) throws(AnnexCError) -> Result {
        var signatures = [(COSESign1, [UInt8], String)]()
        for (i, d) in request.docRequests.enumerated() {
            if let ra = d.readerAuth {
                let payload = MdocAuthentication.readerAuthenticationBytes(sessionTranscript: transcript.bytes, itemsRequestBytes: d.itemsRequestBytes)
                signatures.append((ra, payload, "docRequests[\(i)].readerAuth"))
            }
        }
        if !request.readerAuthAll.isEmpty {
            let payload = MdocAuthentication.readerAuthenticationAllBytes(sessionTranscript: transcript.bytes,
                                                                          itemsRequestBytes: request.docRequests.map(\.itemsRequestBytes),
                                                                          deviceRequestInfoBytes: request.deviceRequestInfo?.bytes)
            for (i, s) in request.readerAuthAll.enumerated() { signatures.append((s, payload, "readerAuthAll[\(i)]")) }
        }
        if signatures.isEmpty {
            if policy.requireReaderAuthentication {
                throw AnnexCError(.readerAuthenticationRequired, "the holder's policy requires reader authentication and the request has none")
            }
            return Result(verdict: .notAuthenticated, checks: [])
        }

        var checks = [Explanation.ReaderCheck]()
        var verdicts = [ReaderVerdict]()
        for (sig, payload, label) in signatures {
            // 1. The signature itself: any failure refuses the request.
            let alg: COSEAlgorithm
            do { alg = try sig.algorithm() } catch { throw AnnexCError(.readerAuthenticationFailed, "\(label): missing or unknown alg") }
            guard Self.allowedAlgorithms.contains(alg) else { throw AnnexCError(.readerAuthenticationFailed, "\(label): algorithm not allowed for reader authentication") }
            let chainDER: [[UInt8]]
            do { chainDER = try sig.headers.x5chain() } catch { throw AnnexCError(.readerAuthenticationFailed, "\(label): malformed x5chain") }
            guard !chainDER.isEmpty else { throw AnnexCError(.readerAuthenticationFailed, "\(label): no x5chain") }
            guard chainDER.count <= 8 else { throw AnnexCError(.readerAuthenticationFailed, "\(label): x5chain longer than 8 certificates") }
            var chain = [Certificate]()
            for der in chainDER {
                do { chain.append(try Certificate(der: der)) } catch { throw AnnexCError(.readerAuthenticationFailed, "\(label): x5chain certificate is not valid DER") }
            }
            let leaf = chain[0]
            let key: COSEKey
            do { key = try leaf.publicKey() } catch { throw AnnexCError(.readerAuthenticationFailed, "\(label): reader certificate key is not supported") }
            do {
                try sig.verify(key: key, detachedPayload: payload)
            } catch {
                switch error {
                case .keyAlgorithmMismatch: throw AnnexCError(.readerAuthenticationFailed, "\(label): algorithm does not match the reader key")
                case .payloadMismatch: throw AnnexCError(.readerAuthenticationFailed, "\(label): payload is attached, expected detached")
                default: throw AnnexCError(.readerAuthenticationFailed, "\(label): signature does not verify")
                }
            }
            // 2. Trust. The authority list applies whenever configured; EKU, validity and the chain to an
            // anchor when anchors are configured (without anchors nothing can be trusted, and the
            // verdict says so).
            let aki = leaf.authorityKeyIdentifier
            if case .only(let allowed) = policy.authorities, !allowed.isEmpty {
                guard let aki, allowed.contains(aki) else {
                    throw AnnexCError(.untrustedReader, "\(label): reader certificate authority is not in the holder's allowed authorities")
                }
            }
            let subject = leaf.subject
            if policy.trustAnchors.isEmpty {
                verdicts.append(.signedButNotAnchored(subject: subject))
            } else {
                guard leaf.hasExtendedKeyUsage(MdocKeyUsage.readerAuthentication) else {
                    throw AnnexCError(.untrustedReader, "\(label): reader certificate lacks EKU 1.0.18013.5.1.6")
                }
                guard now >= leaf.notBefore && now <= leaf.notAfter else {
                    throw AnnexCError(.untrustedReader, "\(label): reader certificate is expired or not yet valid")
                }
                do {
                    try Certificate.validatePath(leaf: leaf, intermediates: Array(chain.dropFirst()), anchors: policy.trustAnchors, at: now)
                } catch {
                    throw AnnexCError(.untrustedReader, "\(label): reader certificate does not chain to a trusted reader root")
                }
                verdicts.append(.trusted(subject: subject, authorityKeyIdentifier: aki))
            }
            if record {
                checks.append(.init(label: label, algorithm: alg, signedBytes: payload, certificateSubjects: [subject] + chain.dropFirst().map(\.subject), verified: true))
            }
        }
        let verdict = verdicts.first { if case .signedButNotAnchored = $0 { return true } else { return false } } ?? verdicts[0]
        if policy.requireReaderAuthentication, case .signedButNotAnchored = verdict {
            throw AnnexCError(.untrustedReader, "the holder's policy requires a trusted reader and no trust anchors are configured")
        }
        return Result(verdict: verdict, checks: checks)
    }
}
