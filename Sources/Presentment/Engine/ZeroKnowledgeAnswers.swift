#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR

extension PresentmentEngine {
    /// Decides, once per request, how each document the reader asked a proof of is answered
    /// (`ZeroKnowledgeOffer.answer`): a proof when the prover holds a circuit for one of the reader's
    /// specs with as many attributes as claims requested, all in one namespace; otherwise a plain
    /// presentation the holder must approve separately, unless the reader requires a proof.
    /// - Throws: the `ZeroKnowledgeRule` that refuses a document requiring a proof that cannot be made.
    func decidingZeroKnowledge(_ queries: [DocumentQuery]) throws(PresentmentError)
        -> [DocumentQuery]
    {
        guard queries.contains(where: { $0.zeroKnowledge != nil }) else { return queries }
        let prover = configuration.zeroKnowledge.prover
        var out = queries
        for k in out.indices {
            guard var offer = out[k].zeroKnowledge else { continue }
            let elements = out[k].requestedElements
            let why: ZeroKnowledgeRule
            if let prover, elements.count > 0, Set(elements.map(\.id.nameSpace)).count == 1,
                let spec = prover.circuit(for: offer.specs, claims: elements.count)
            {
                offer.answer = .proof(spec: spec, expectedSeconds: prover.expectedProvingSeconds)
                out[k].zeroKnowledge = offer
                continue
            } else if let prover {
                // The rule that failed, in order: the system, the attribute count (among the specs of a
                // known system), the namespaces, the circuit.
                let known =
                    prover.systems.isEmpty ? offer.specs : offer.specs.filter { prover.systems.contains($0.system) }
                if known.isEmpty {
                    why = .unknownSystem
                } else if elements.isEmpty || !known.contains(where: { $0.attributeCount == elements.count }) {
                    why = .attributeCount
                } else if Set(elements.map(\.id.nameSpace)).count != 1 {
                    why = .nameSpaces
                } else {
                    why = .noCircuit
                }
            } else {
                why = .noProver
            }
            if offer.required {
                throw PresentmentError(why, at: "docRequests[\(k)].itemsRequest.requestInfo.zkRequest")
            }
            offer.answer = .plainFallback(why: PresentmentError.Rule(why))
            out[k].zeroKnowledge = offer
        }
        return out
    }

    /// Proves each document of `plan` answered with a proof, and returns the plan's plain documents
    /// and the ZkDocuments (in plan order).
    func proving(_ plan: Plan, sessionTranscript: [UInt8]) throws(PresentmentError) -> (
        plain: Plan, zkDocuments: [[UInt8]]
    ) {
        guard plan.answered.contains(where: { $0.proof != nil }) else { return (plan, []) }
        let proofs = plan.answered.filter { $0.proof != nil }
        guard proofs.count <= configuration.zeroKnowledge.maxProofsPerResponse else {
            throw PresentmentError(ZeroKnowledgeRule.tooManyProofs)
        }
        guard let prover = configuration.zeroKnowledge.prover else {
            throw PresentmentError(ZeroKnowledgeRule.noProver)
        }
        // The proof's time: a public input, and the ZkDocumentData timestamp (whole seconds, UTC).
        let time = MdocDate.formatDateTime(configuration.clock())
        var documents = [[UInt8]]()
        for d in proofs {
            guard let spec = d.proof else { continue }
            // The prover's input: this document alone as it would be presented, device-signed over this
            // session with empty DeviceNameSpaces. It never leaves the engine.
            let input = try DeviceResponseBuilder.build(
                plan: Plan(answered: [d], unanswered: []), sessionTranscript: sessionTranscript, missingElements: .omit
            ).contiguous
            let items = d.released.map { d.credential.orderedItems[$0].id }
            let proof = try prover.prove(
                ZkProofInput(
                    spec: spec, deviceResponse: input, nameSpace: items[0].nameSpace, claims: items.map(\.identifier),
                    sessionTranscript: sessionTranscript, time: time))
            documents.append(ZkDocumentWriter.document(d, spec: spec, time: time, proof: proof))
        }
        var plain = plan
        plain.answered.removeAll { $0.proof != nil }
        return (plain, documents)
    }
}

/// Writes ZkDocuments (the EUDI ZKP specification's copy of the ISO/IEC 18013-5 2nd-edition draft, as
/// deployed verifiers read them): `{"proof": bstr, "documentData": #6.24(bstr .cbor ZkDocumentData)}`
/// with ZkDocumentData `{docType, timestamp: 0("…Z"), msoX5chain: the document signer's certificate,
/// zkSystemId: the reader's id echoed, deviceSigned: {}, issuerSigned: {ns: [{elementValue,
/// elementIdentifier}]}}`, keys in bytewise order, each value copied from the issuer's item verbatim.
enum ZkDocumentWriter {
    static func document(_ d: PlannedDocument, spec: ZkSystemSpec, time: String, proof: [UInt8]) -> [UInt8] {
        let c = d.credential
        var data = CBORWriter(capacity: 512)
        data.writeMapHeader(count: 6)
        data.writeText("docType")
        data.writeText(d.docType)
        data.writeText("timestamp")
        data.writeTag(0)
        data.writeText(time)
        data.writeText("msoX5chain")
        data.writeBytes((try? c.issuerSigned.issuerAuth.headers.x5chain().first) ?? [])
        data.writeText("zkSystemId")
        data.writeText(spec.id)
        data.writeText("deviceSigned")
        data.writeMapHeader(count: 0)
        data.writeText("issuerSigned")
        let byNS = Dictionary(grouping: d.released, by: { c.orderedItems[$0].nameSpaceIndex })
        data.writeMapHeader(count: byNS.count)
        for ns in byNS.keys.sorted() {
            data.writeText(c.nameSpaceName(ns))
            data.writeArrayHeader(count: byNS[ns]!.count)
            for i in byNS[ns]! {
                data.writeMapHeader(count: 2)
                data.writeText("elementValue")
                data.writeRaw(c.item(at: i).elementValue.encodedBytes)
                data.writeText("elementIdentifier")
                data.writeText(c.orderedItems[i].id.identifier)
            }
        }
        var w = CBORWriter(capacity: proof.count + data.bytes.count + 32)
        w.writeMapHeader(count: 2)
        w.writeText("proof")
        w.writeBytes(proof)
        w.writeText("documentData")
        w.writeEmbedded(data.bytes)
        return w.bytes
    }
}
