#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR

/// Writes the DeviceResponse (ISO/IEC 18013-5 §8.3.2.1.2.2) once, front to back: issuerAuth and
/// every released IssuerSignedItemBytes are taken verbatim from the stored credential (copied, or
/// referred to when large: `DeviceResponseBytes`); map keys are written in deterministic (bytewise)
/// order; each document's device signature covers DeviceAuthentication over the SessionTranscript the
/// front end supplies (its CBOR encoding, embedded as is), produced through the signer protocol.
package enum DeviceResponseBuilder {
    /// The DeviceResponse for `plan`, signed over `sessionTranscript` (the CBOR-encoded SessionTranscript
    /// array). Throws `keyUnavailable` when a device key cannot be resolved, `signingFailed` when it cannot sign.
    /// With `zkDocuments` (ZkDocuments already written), the response carries them beside the plain
    /// documents; `documents` is left out when the plan has none.
    package static func build(
        plan: Plan, zkDocuments: [[UInt8]] = [], sessionTranscript: [UInt8], missingElements: MissingElementPolicy
    ) throws(PresentmentError) -> DeviceResponseBytes {
        // The builder's own bytes: everything but the pieces it refers to.
        func copied(_ n: Int) -> Int { n < DeviceResponseBytes.referenceThreshold ? n : 0 }
        var estimated = 256 + zkDocuments.reduce(0) { $0 + copied($1.count) }
        for k in plan.answered.indices {
            let c = plan.answered[k].credential
            // The item table read once per document (each read of it through the credential retains it).
            let items = c.orderedItems
            estimated += copied(c.issuerAuthRange.count) + 256
            for i in plan.answered[k].released { estimated += copied(items[i].range.count) }
        }
        var out = DeviceResponseOutput(capacity: estimated)
        let reportErrors = missingElements == .report
        let documentErrors = reportErrors ? plan.unanswered : []
        // Keys in bytewise order of their encodings: "status" (66…) < "version" (67…) < "documents" (69…)
        // < "zkDocuments" (6b…) < "documentErrors" (6e…).
        let hasDocuments = !plan.answered.isEmpty || zkDocuments.isEmpty
        out.writer.writeMapHeader(
            count: 2 + (hasDocuments ? 1 : 0) + (zkDocuments.isEmpty ? 0 : 1) + (documentErrors.isEmpty ? 0 : 1))
        out.writer.writeRaw(hasDocuments ? Runs.statusVersionDocuments : Runs.statusAndVersion)
        if hasDocuments {
            out.writer.writeArrayHeader(count: plan.answered.count)
            for d in plan.answered {
                try writeDocument(d, sessionTranscript: sessionTranscript, reportErrors: reportErrors, into: &out)
            }
        }
        if !zkDocuments.isEmpty {
            out.writer.writeText("zkDocuments")
            out.writer.writeArrayHeader(count: zkDocuments.count)
            for z in zkDocuments { out.writeVerbatim(z, z.indices) }
        }
        if !documentErrors.isEmpty {
            out.writer.writeText("documentErrors")
            out.writer.writeArrayHeader(count: documentErrors.count)
            for docType in documentErrors {
                out.writer.writeMapHeader(count: 1)
                out.writer.writeText(docType)
                out.writer.writeInt(0)
            }
        }
        return out.finish()
    }

    private static func writeDocument(
        _ d: PlannedDocument, sessionTranscript: [UInt8], reportErrors: Bool, into out: inout DeviceResponseOutput
    ) throws(PresentmentError) {
        let c = d.credential
        let docType = d.docType
        let missing = reportErrors ? d.missing : []
        // "errors" (66…) < "docType" (67…) < "deviceSigned" (6c 64…) < "issuerSigned" (6c 69…).
        if missing.isEmpty {
            out.writer.writeRaw(Runs.documentToDocType)
        } else {
            out.writer.writeMapHeader(count: 4)
            out.writer.writeText("errors")
            let byNS = Dictionary(grouping: missing, by: \.nameSpace)
            let namespaces = byNS.keys.sorted(by: CBORWriter.textKeyPrecedes)
            out.writer.writeMapHeader(count: namespaces.count)
            for ns in namespaces {
                out.writer.writeText(ns)
                let elems = byNS[ns]!.map(\.identifier).sorted(by: CBORWriter.textKeyPrecedes)
                out.writer.writeMapHeader(count: elems.count)
                for e in elems {
                    out.writer.writeText(e)
                    out.writer.writeInt(0)
                }
            }
            out.writer.writeText("docType")
        }
        out.writer.writeText(docType)

        out.writer.writeRaw(Runs.deviceSignedToSignature)
        try writeDeviceSignature(
            docType: docType, sessionTranscript: sessionTranscript, signer: try c.signer(), into: &out.writer)
        // `nameSpaces` holds at least one namespace when present (IssuerNameSpaces = { + ... }): a
        // document released without elements (a DCQL query without claims) leaves it out.
        out.writer.writeRaw(d.released.isEmpty ? Runs.toIssuerAuthAlone : Runs.toIssuerAuthBeforeNameSpaces)
        let bytes = c.indexed.bytes
        out.writeVerbatim(bytes, c.issuerAuthRange)
        guard !d.released.isEmpty else { return }
        // `released` is ascending, so items come grouped by namespace in deterministic order.
        let items = c.orderedItems
        var runs = 0
        var last = -1
        for i in d.released where items[i].nameSpaceIndex != last {
            runs += 1
            last = items[i].nameSpaceIndex
        }
        if runs == 1 {
            out.writer.writeRaw(Runs.oneNameSpace)
        } else {
            out.writer.writeText("nameSpaces")
            out.writer.writeMapHeader(count: runs)
        }
        var k = 0
        let released = d.released
        while k < released.count {
            let ns = items[released[k]].nameSpaceIndex
            var end = k
            while end < released.count && items[released[end]].nameSpaceIndex == ns { end += 1 }
            out.writer.writeText(c.nameSpaceName(ns))
            out.writer.writeArrayHeader(count: end - k)
            // Items that lie next to each other in the issuer's encoding (consecutive elements of a
            // namespace's array, the usual case) are spliced as one run: the same bytes in one copy or
            // reference rather than one per item.
            var run = items[released[k]].range
            for j in (k + 1)..<end {
                let r = items[released[j]].range
                if r.lowerBound == run.upperBound {
                    run = run.lowerBound..<r.upperBound
                } else {
                    out.writeVerbatim(bytes, run)
                    run = r
                }
            }
            out.writeVerbatim(bytes, run)
            k = end
        }
    }

    /// The invariant runs of the encoding, each encoded once by the writer and then copied in one
    /// append (every small write is an array append of its own: ~100 instructions each).
    private enum Runs {
        /// A document without `errors`: its map of three, and the key `"docType"`.
        static let documentToDocType = encoded { w in
            w.writeMapHeader(count: 3)
            w.writeText("docType")
        }
        /// `"nameSpaces":` holding one namespace (its name and items follow).
        static let oneNameSpace = encoded { w in
            w.writeText("nameSpaces")
            w.writeMapHeader(count: 1)
        }
        /// `"status": 0, "version": "1.0"`: the top map's first two entries.
        static let statusAndVersion = encoded(statusAndVersion)
        /// The same, then the key `"documents"` (its array follows).
        static let statusVersionDocuments = encoded { w in
            statusAndVersion(&w)
            w.writeText("documents")
        }
        /// `"deviceSigned": {"deviceAuth": {"deviceSignature":` (the COSE_Sign1 follows).
        static let deviceSignedToSignature = encoded { w in
            w.writeText("deviceSigned")
            w.writeMapHeader(count: 2)
            w.writeText("deviceAuth")
            w.writeMapHeader(count: 1)
            w.writeText("deviceSignature")
        }
        /// `"nameSpaces": DeviceNameSpacesBytes` (empty: no device-signed elements), closing
        /// `deviceSigned`, then `"issuerSigned": {"issuerAuth":` with `nameSpaces` to follow it
        /// (a map of two) or not (of one); issuerAuth itself follows.
        static let toIssuerAuthBeforeNameSpaces = encoded { toIssuerAuth(&$0, entries: 2) }
        static let toIssuerAuthAlone = encoded { toIssuerAuth(&$0, entries: 1) }

        private static func statusAndVersion(_ w: inout CBORWriter) {
            w.writeText("status")
            w.writeUnsigned(0)
            w.writeText("version")
            w.writeText("1.0")
        }

        private static func toIssuerAuth(_ w: inout CBORWriter, entries: Int) {
            w.writeText("nameSpaces")
            w.writeRaw(MdocAuthentication.emptyDeviceNameSpacesBytes)
            w.writeText("issuerSigned")
            w.writeMapHeader(count: entries)
            w.writeText("issuerAuth")
        }

        private static func encoded(_ body: (inout CBORWriter) -> Void) -> [UInt8] {
            var w = CBORWriter(capacity: 64)
            body(&w)
            return w.bytes
        }
    }

    /// Writes the device signature: a COSE_Sign1 with protected `{1: alg}`, an empty unprotected map
    /// and a detached payload, DeviceAuthenticationBytes written straight into its Sig_structure.
    private static func writeDeviceSignature(
        docType: String, sessionTranscript: [UInt8], signer: any COSESigner, into w: inout CBORWriter
    ) throws(PresentmentError) {
        let nameSpaces = MdocAuthentication.emptyDeviceNameSpacesBytes
        let length = MdocAuthentication.deviceAuthenticationLength(
            sessionTranscript: sessionTranscript, docType: docType, deviceNameSpacesBytes: nameSpaces)
        do {
            try COSESign1.sign(
                into: &w, payloadLength: length,
                writePayload: {
                    MdocAuthentication.writeDeviceAuthentication(
                        into: &$0, sessionTranscript: sessionTranscript, docType: docType,
                        deviceNameSpacesBytes: nameSpaces)
                }, detached: true, signer: signer)
        } catch {
            // A signer's own detail (a token's step and return value) is static text; never a secret.
            throw PresentmentError(
                error.code == .keyUnavailable ? KeyRule.unreachable : KeyRule.signingFailed, underlying: error)
        }
    }

    /// Re-parses the response, re-verifies each released item's digest against the MSO and the device
    /// signature against the MSO device key.
    package static func selfCheck(_ response: [UInt8], plan: Plan, sessionTranscript: [UInt8]) throws(PresentmentError)
    {
        let parsed: DeviceResponse
        do { parsed = try DeviceResponse(encoded: response) } catch {
            throw PresentmentError(ResponseRule.selfCheckUnparseable)
        }
        guard parsed.documents.count == plan.answered.count else {
            throw PresentmentError(ResponseRule.selfCheckDocumentCount)
        }
        for (doc, p) in zip(parsed.documents, plan.answered) {
            let mso = try p.credential.mobileSecurityObject
            do {
                try doc.checkAuthentication(mso: mso, sessionTranscript: sessionTranscript)
            } catch {
                switch error {
                case .digest: throw PresentmentError(ResponseRule.selfCheckDigest)
                case .noDeviceSignature: throw PresentmentError(ResponseRule.selfCheckSignatureMissing)
                case .deviceSignature, .deviceAuthenticationMismatch:
                    throw PresentmentError(ResponseRule.selfCheckSignature)
                }
            }
        }
    }
}
