#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import AnnexCReader
import JOSE
import MdocCBOR
import OpenID4VP
import Presentment
import WebEncoding

extension OpenID4VPReader {
    /// An opened and verified answer.
    public struct VerifiedResponse: Sendable {
        /// `vp_token` in the response's order: each credential query id with its verified documents.
        public let vpToken: [(queryID: String, documents: [AnnexCReader.VerifiedDocument])]
        /// The decrypted (or clear) response payload, as JSON text.
        public let payload: [UInt8]
        /// The JWE protected header (`dc_api.jwt`).
        public let jweHeader: [UInt8]?

        /// The documents answering one query.
        public func documents(for queryID: String) -> [AnnexCReader.VerifiedDocument] {
            vpToken.first { $0.queryID == queryID }?.documents ?? []
        }
    }

    /// Opens and verifies a response as a careful verifier does: the framing; for `dc_api.jwt` the JWE
    /// (ECDH-ES to the request's key, `kid`, an offered `enc`); `vp_token` keys are query ids, one
    /// presentation per query unless `multiple`; each presentation a DeviceResponse 1.0 with status 0
    /// and exactly one document of the query's docType, verified (issuer, chain to `issuerRoots`,
    /// digests, device signature over the `OpenID4VPDCAPIHandover` transcript); the disclosed elements
    /// exactly the query's claims, or exactly one of its claim sets, each with an accepted value; and
    /// the credential sets satisfied.
    public static func openResponse(
        _ response: Data, for request: BuiltRequest, issuerRoots: [Certificate], at time: Date
    ) throws(PresentmentError) -> VerifiedResponse {
        func bad(_ rule: OpenID4VPVerifierRule) -> PresentmentError { PresentmentError(rule) }
        let outer: JSONValue
        do { outer = try JSONValue.parse(Array(response)) } catch { throw bad(.responseNotJSON) }
        var data = outer
        if outer["protocol"] != nil {
            guard outer["protocol"]?.string == request.protocolIdentifier, let d = outer["data"] else {
                throw bad(.protocolMismatch)
            }
            data = d
        }
        let payload: JSONValue
        var jweHeader: [UInt8]?
        switch request.responseMode {
        case .dcAPIJWT:
            guard let jwe = data["response"]?.string, data.object?.count == 1, let key = request.encryptionKey else {
                throw bad(.notJWEResponse)
            }
            let opened: (header: JSONValue, plaintext: [UInt8])
            do { opened = try JWE.decrypt(jwe, with: key) } catch {
                throw PresentmentError(OpenID4VPVerifierRule.jwe, underlying: error)
            }
            guard opened.header["kid"]?.string == "enc-1" else { throw bad(.jweKeyID) }
            jweHeader = opened.header.serialized
            do { payload = try JSONValue.parse(opened.plaintext) } catch { throw bad(.jwePayload) }
        case .dcAPI:
            guard data["response"] == nil else { throw bad(.unexpectedEncryption) }
            payload = data
        }
        guard case .object(let members)? = payload["vp_token"], payload.object?.count == 1 else {
            throw bad(.payloadShape)
        }
        let handover = OpenID4VPHandover(
            origin: request.origin.serialized, nonce: request.nonce, jwkThumbprint: request.thumbprint)
        var out = [(queryID: String, documents: [AnnexCReader.VerifiedDocument])]()
        for (id, value) in members {
            guard let query = request.queries.first(where: { $0.id == id }) else {
                throw bad(.unknownQuery)
            }
            guard case .array(let presentations) = value, !presentations.isEmpty,
                query.multiple == true || presentations.count == 1
            else { throw bad(.presentationCount) }
            var docs = [AnnexCReader.VerifiedDocument]()
            for p in presentations {
                guard let s = p.string, let bytes = Base64URL.decode(s) else {
                    throw bad(.presentationNotBase64URL)
                }
                let dr: DeviceResponse
                do { dr = try DeviceResponse(encoded: bytes) } catch {
                    throw PresentmentError(OpenID4VPVerifierRule.deviceResponseInvalid, underlying: error)
                }
                guard dr.status == 0, dr.version == "1.0", dr.documents.count == 1, dr.documentErrors.isEmpty else {
                    throw bad(.presentationShape)
                }
                let doc = dr.documents[0]
                guard doc.docType == query.docType else { throw bad(.docType) }
                let verified = try AnnexCReader.verifyDocument(
                    doc, sessionTranscript: handover.sessionTranscript, issuerRoots: issuerRoots, at: time)
                try checkDisclosure(verified, query: query)
                docs.append(verified)
            }
            out.append((id, docs))
        }
        let present = Set(out.map(\.queryID))
        if request.credentialSets.isEmpty {
            guard present.count == request.queries.count else { throw bad(.queryNotAnswered) }
        } else {
            for set in request.credentialSets where set.required ?? true {
                guard set.options.contains(where: { $0.allSatisfy(present.contains) }) else {
                    throw bad(.credentialSetNotSatisfied)
                }
            }
            let referenced = Set(request.credentialSets.flatMap { $0.options.flatMap { $0 } })
            guard present.isSubset(of: referenced) else {
                throw bad(.queryOutsideSets)
            }
        }
        return VerifiedResponse(vpToken: out, payload: payload.serialized, jweHeader: jweHeader)
    }

    /// The disclosure rule: exactly the query's claims (or exactly one claim set), each disclosed
    /// value among the claim's `values`, nothing else.
    static func checkDisclosure(_ doc: AnnexCReader.VerifiedDocument, query: CredentialQuery) throws(PresentmentError) {
        let disclosed = doc.elements.map(\.element)
        guard Set(disclosed).count == disclosed.count else {
            throw PresentmentError(OpenID4VPVerifierRule.duplicateElement)
        }
        let claims = query.claims ?? []
        var acceptable: [Set<ElementID>] = [Set(claims.map(\.element))]
        if let sets = query.claimSets {
            acceptable = sets.map { ids in Set(ids.compactMap { id in claims.first { $0.id == id }?.element }) }
        }
        guard acceptable.contains(Set(disclosed)) else {
            throw PresentmentError(OpenID4VPVerifierRule.notClaimSet)
        }
        for e in doc.elements {
            guard let values = claims.first(where: { $0.element == e.element })?.values else { continue }
            let ok = values.contains { v in
                var item = e.value
                while item.type == .tag, let inner = item.tagContent { item = inner }
                switch v {
                case .text(let s): return item.stringValue == s
                case .bool(let b): return item.boolValue == b
                case .integer(let i):
                    return (item.type == .unsignedInt && i >= 0 && item.argument == UInt64(i))
                        || (item.type == .negativeInt && i < 0 && item.argument == UInt64(-(i + 1)))
                }
            }
            guard ok else {
                throw PresentmentError(OpenID4VPVerifierRule.valueNotAccepted)
            }
        }
    }
}
