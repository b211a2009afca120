import DigitalCredentials
import WebEncoding
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR

/// `mdoc-respond inspect`: diagnostic notation of any CBOR file, plus what mdoc structure it is.
enum Inspect {
    static let help = """
        usage: mdoc-respond inspect [--hex] [--no-expand] [--indent N] FILE|-
               mdoc-respond inspect --request FILE|- --origin ORIGIN [--context DIR] [--clock RFC3339] [--json]
                                    [--protocol auto|annexc|openid4vp]

        With --request: explains what the engine does with a raw request. Annex C: the framing found, the
        origin used, dcapiInfo and its hash, the SessionTranscript (hex and diagnostic notation), the
        DeviceRequest with tag-24 contents expanded, every reader signature check and the verdict.
        OpenID4VP: the request form and framing, origin, nonce, response mode and encryption key
        (kid, enc, RFC 7638 thumbprint), the handover info, its hash and the SessionTranscript, each
        verifier signature (client_id, chain, trust). Both: which stored credentials could answer each
        requested document (DCQL: claim sets and values) and what each would release. --protocol picks
        the protocol when the request offers both (auto: the one the engine would answer with).
        Exit 1 if the engine refuses.

        Prints the CBOR item in FILE (binary, or hex text) in RFC 8949 diagnostic notation, with the
        contents of tag-24 byte strings expanded as << ... >>, then names the ISO 18013-5 structure it
        parses as (DeviceRequest, DeviceResponse, IssuerSigned, COSE_Sign1, COSE_Key), if any.

          --hex         treat the input as hex text even if it could be binary
          --no-expand   do not expand tag-24 contents
          --indent N    indent nested containers by N spaces (default 2; 0 = one line)
        """

    static func run(_ args: [String]) {
        if args.contains("--request") {
            explain(args)
            return
        }
        var forceHex = false
        var expand = true
        var indent = 2
        var path: String?
        var i = 0
        while i < args.count {
            switch args[i] {
            case "-h", "--help":
                print(help)
                exit(Exit.ok)
            case "--hex": forceHex = true
            case "--no-expand": expand = false
            case "--indent":
                i += 1
                guard i < args.count, let n = Int(args[i]), n >= 0, n <= 8 else {
                    fail(Exit.usage, "usage", "--indent needs a number 0-8")
                }
                indent = n
            default:
                guard path == nil else { fail(Exit.usage, "usage", "more than one input given") }
                path = args[i]
            }
            i += 1
        }
        guard let path else { fail(Exit.usage, "usage", "no input; see 'mdoc-respond inspect --help'") }
        let bytes = Input.cborBytes(Input.read(path), forceHex: forceHex)
        let doc: CBORDocument
        do {
            doc = try CBORDocument(decoding: bytes)
        } catch {
            fail(Exit.refused, "cbor.\(error.code.rawValue)", "not well-formed CBOR: \(error)")
        }
        print(CBORDiagnostic.describe(doc.root, options: .init(expandEmbedded: expand, indent: indent)))
        print("")
        print("\(bytes.count) bytes, \(doc.itemCount) data items")
        print("structure: \(identify(doc.root))")
    }

    static func explain(_ args: [String]) {
        let o = Options(args, flags: ["--json"], help: help)
        o.check(allowed: ["--request", "--origin", "--context", "--clock", "--protocol"])
        // Read no more than the engines accept: a larger request is refused without being held.
        let limit = max(AnnexCEngine.Configuration().maxRequestBytes, OpenID4VPEngine.Configuration().maxRequestBytes)
        let raw = Data(
            Input.read(o.require("--request"), limit: limit) {
                fail(Exit.refused, PresentmentError(FramingRule.tooLarge))
            })
        let origin = o.require("--origin")
        let clock = parseClock(o.value("--clock"))
        let context = BuiltIn.context(o.value("--context"))
        let facade = DigitalCredentialsEngine(
            context: context, annexC: .init(clock: { clock }), openID4VP: .init(clock: { clock }))
        let useOpenID4VP: Bool
        switch o.value("--protocol") ?? "auto" {
        case "annexc": useOpenID4VP = false
        case "openid4vp": useOpenID4VP = true
        case "auto":
            // The protocol the engine would answer with; when it refuses, the one the request offers.
            if let parsed = try? facade.parse(rawRequest: raw, origin: origin) {
                useOpenID4VP = parsed.openID4VP != nil
            } else {
                let offered = raw.withUnsafeBytes { b in
                    (try? RequestEnvelope.parse(
                        b.assumingMemoryBound(to: UInt8.self), maxBytes: limit,
                        isBareData: {
                            $0["deviceRequest"] == nil && $0["encryptionInfo"] == nil && $0["dcql_query"] != nil
                        }
                    ))?.entries.compactMap(\.protocolIdentifier) ?? []
                }
                useOpenID4VP =
                    offered.contains { OpenID4VPEngine.answers(protocolIdentifier: $0) }
                    && !offered.contains { $0 == AnnexCEngine.protocolIdentifier || $0 == "org.iso.mdoc" }
            }
        default: fail(Exit.usage, "usage", "--protocol must be auto, annexc or openid4vp")
        }
        if useOpenID4VP {
            explainOpenID4VP(
                facade.openID4VP.explain(rawRequest: raw, origin: origin), json: o.flags.contains("--json"))
            return
        }
        let engine = facade.annexC
        let e = engine.explain(rawRequest: raw, origin: origin)
        let st = e.sessionTranscript.flatMap { try? CBORDocument(decoding: $0) }
        let dr = e.deviceRequest.flatMap { try? CBORDocument(decoding: $0) }
        if o.flags.contains("--json") {
            var fields = [String]()
            fields.append("\"framing\":\(e.framing.map { jsonString($0.rawValue) } ?? "null")")
            fields.append("\"origin\":\(e.origin.map(jsonString) ?? "null")")
            fields.append("\"dcapiInfo\":\(e.dcapiInfo.map { jsonString(hex($0)) } ?? "null")")
            fields.append("\"dcapiInfoHash\":\(e.dcapiInfoHash.map { jsonString(hex($0)) } ?? "null")")
            fields.append("\"sessionTranscript\":\(e.sessionTranscript.map { jsonString(hex($0)) } ?? "null")")
            fields.append(
                "\"deviceRequest\":\(dr.map { jsonString(CBORDiagnostic.describe($0.root, options: .init(expandEmbedded: true))) } ?? "null")"
            )
            fields.append(
                "\"readerChecks\":["
                    + e.readerChecks.map { c in
                        "{\"label\":\(jsonString(c.label)),\"algorithm\":\(c.algorithm.rawValue),\"verified\":\(c.verified),\"certificates\":[\(c.certificateSubjects.map(jsonString).joined(separator: ","))],"
                            + "\"trust\":\(j(ConsentModelJSON.verdict(c.trust))),\"refusal\":\(c.refusal.map(jsonString) ?? "null"),\"signedBytes\":\(jsonString(hex(c.signedBytes)))}"
                    }.joined(separator: ",") + "]")
            fields.append("\"readerVerdict\":\(e.readerVerdict.map { j(ConsentModelJSON.verdict($0)) } ?? "null")")
            fields.append(
                "\"documentVerdicts\":[\(e.documentVerdicts.map { j(ConsentModelJSON.verdict($0)) }.joined(separator: ","))]"
            )
            fields.append("\"readers\":[\(e.readers.map { j(ConsentModelJSON.verdict($0)) }.joined(separator: ","))]")
            fields.append("\"selection\":[\(e.selection.map(jsonString).joined(separator: ","))]")
            fields.append(
                "\"documents\":[" + e.documents.map { j(ConsentModelJSON.document($0)) }.joined(separator: ",") + "]")
            // The consent model (the schema the C ABI and Python share), when the request parses.
            fields.append(
                "\"consent\":"
                    + ((try? engine.parse(rawRequest: raw, origin: origin)).map(ConsentModelJSON.request) ?? "null"))
            fields.append(
                "\"error\":\(e.error.map { "{\"code\":\(jsonString($0.code.rawValue)),\"detail\":\(jsonString($0.detail))}" } ?? "null")"
            )
            print("{" + fields.joined(separator: ",") + "}")
        } else {
            print("framing:            \(e.framing?.rawValue ?? "-")")
            print("origin:             \(e.origin ?? "-")")
            if let d = e.dcapiInfo { print("dcapiInfo:          \(hex(d))") }
            if let h = e.dcapiInfoHash { print("SHA-256(dcapiInfo): \(hex(h))") }
            if let t = e.sessionTranscript, let st {
                print("SessionTranscript:  \(hex(t))")
                print("                    \(CBORDiagnostic.describe(st.root))")
            }
            if let dr {
                print(
                    "DeviceRequest:\n"
                        + CBORDiagnostic.describe(dr.root, options: .init(expandEmbedded: true, indent: 2)))
            }
            for c in e.readerChecks {
                print(
                    "reader check \(safe(c.label)): alg \(c.algorithm.rawValue), \(c.verified ? "signature verified" : "FAILED"); chain: \(c.certificateSubjects.map(safe).joined(separator: " <- "))"
                )
                print("                    trust: \(c.refusal.map { "refused: " + safe($0) } ?? verdict(c.trust))")
            }
            print("reader verdict:     \(verdict(e.readerVerdict))")
            if e.readers.count > 1 {
                print(
                    "readers:            \(e.readers.count) different reader certificates signed parts of this request: "
                        + e.readers.map { safe($0.subject ?? "-") }.joined(separator: "; "))
            }
            for d in e.documents { printDocument(d) }
            if let err = e.error { print("refused:            \(err.code.rawValue): \(safe(err.detail))") }
        }
        if e.error != nil { exit(Exit.refused) }
    }

    /// The OpenID4VP explanation, as text or JSON (no element values; request strings escaped).
    static func explainOpenID4VP(_ e: OpenID4VPExplanation, json: Bool) {
        let d = e.request?.openID4VP
        let st = d.flatMap { try? CBORDocument(decoding: $0.handover.sessionTranscript) }
        if json {
            var fields = [String]()
            fields.append("\"protocol\":\(e.request.map { jsonString($0.protocolIdentifier) } ?? "null")")
            fields.append("\"origin\":\(e.origin.map(jsonString) ?? "null")")
            fields.append("\"nonce\":\(d.map { jsonString($0.nonce) } ?? "null")")
            fields.append("\"responseMode\":\(d.map { jsonString($0.responseMode.rawValue) } ?? "null")")
            fields.append(
                "\"encryption\":"
                    + (d?.encryption.map {
                        "{\"kid\":\($0.keyID.map(jsonString) ?? "null"),\"enc\":\(jsonString($0.encryption)),\"thumbprint\":\(jsonString(hex($0.thumbprint)))}"
                    } ?? "null"))
            fields.append("\"handoverInfo\":\(d.map { jsonString(hex($0.handover.handoverInfo)) } ?? "null")")
            fields.append("\"handover\":\(d.map { jsonString(hex($0.handover.handover)) } ?? "null")")
            fields.append("\"sessionTranscript\":\(d.map { jsonString(hex($0.handover.sessionTranscript)) } ?? "null")")
            fields.append(
                "\"signatures\":["
                    + (d?.signatures ?? []).map {
                        "{\"label\":\(jsonString($0.label)),\"clientID\":\(jsonString($0.clientID)),\"certificates\":[\($0.chain.map { jsonString($0.subject) }.joined(separator: ","))],\"trust\":\(j(ConsentModelJSON.verdict($0.verdict)))}"
                    }.joined(separator: ",") + "]")
            fields.append("\"verifierInfo\":[\((d?.verifierInfo ?? []).map(jsonString).joined(separator: ","))]")
            fields.append(
                "\"readerVerdict\":\(e.request.map { j(ConsentModelJSON.verdict($0.readerVerdict)) } ?? "null")")
            fields.append(
                "\"documents\":["
                    + (e.request?.documents ?? []).map { j(ConsentModelJSON.document($0)) }.joined(separator: ",")
                    + "]")
            fields.append("\"consent\":" + (e.request.map(ConsentModelJSON.request) ?? "null"))
            fields.append(
                "\"error\":\(e.error.map { "{\"code\":\(jsonString($0.code.rawValue)),\"detail\":\(jsonString($0.detail))}" } ?? "null")"
            )
            print("{" + fields.joined(separator: ",") + "}")
        } else {
            print("protocol:           \(e.request?.protocolIdentifier ?? "openid4vp")")
            print("origin:             \(e.origin ?? "-")")
            if let d {
                print("nonce:              \(safe(d.nonce))")
                print(
                    "response mode:      \(d.responseMode.rawValue)"
                        + (d.encryption.map {
                            " (\($0.encryption) to kid \(safe($0.keyID ?? "-")), thumbprint \(hex($0.thumbprint)))"
                        } ?? ""))
                print("HandoverInfo:       \(hex(d.handover.handoverInfo))")
                print("Handover:           \(hex(d.handover.handover))")
                print("SessionTranscript:  \(hex(d.handover.sessionTranscript))")
                if let st { print("                    \(CBORDiagnostic.describe(st.root))") }
                for s in d.signatures {
                    print(
                        "verifier signature \(s.label): client_id \(safe(s.clientID)); chain: \(s.chain.map { safe($0.subject) }.joined(separator: " <- "))"
                    )
                    print("                    trust: \(verdict(s.verdict))")
                }
                for v in d.verifierInfo { print("verifier_info:      \(safe(v))") }
            }
            if let r = e.request {
                print("verifier verdict:   \(verdict(r.readerVerdict))")
                for doc in r.documents {
                    let id = d.map { $0.credentialQueryIDs[doc.index] } ?? "-"
                    print("credential query:   \(safe(id))")
                    printDocument(doc)
                }
            }
            if let err = e.error { print("refused:            \(err.code.rawValue): \(safe(err.detail))") }
        }
        if e.error != nil { exit(Exit.refused) }
    }

    /// One requested document as text: who asks, what is asked, and per candidate what would leave the
    /// device. Request-controlled strings (docType, element names, subjects) are escaped.
    static func printDocument(_ d: RequestedDocument) {
        func list(_ ids: [ElementID]) -> String { ids.map { safe($0.description) }.joined(separator: ", ") }
        print(
            "document \(d.index):         \(safe(d.docType)): \(d.elements.count) element(s) requested: \(list(d.elements.map(\.id)))"
        )
        print(
            "  reader:           \(verdict(d.readerVerdict))"
                + (d.readerAuthentication.isEmpty
                    ? "" : " (signed by \(d.readerAuthentication.joined(separator: ", ")))"))
        for (k, set) in d.claimSets.enumerated() {
            print("  claim set \(k):      [\(list(set))]\(k == 0 ? " (preferred)" : "")")
        }
        if !d.valueConstraints.isEmpty {
            print(
                "  values required:  \(list(d.valueConstraints.keys.sorted())) (an element with another value counts as not held)"
            )
        }
        for i in d.ignoredAlternatives {
            print(
                "  alternative not honoured (\(i.reason.rawValue)): \(safe(i.requested.description)) -> [\(list(i.set))]"
            )
        }
        if d.candidates.isEmpty { print("  no usable credential") }
        for c in d.candidates {
            print("  candidate \(safe(c.credentialID)): would release \(c.shownElements.count): \(list(c.releasable))")
            for s in c.substitutions {
                print(
                    "    substitutes \(safe(s.requested.description)) -> [\(list(s.replacement))] (released only if each is approved)"
                )
            }
            if !c.missing.isEmpty { print("    lacks \(list(c.missing))") }
        }
    }

    /// A verdict as text; the reader's subject comes from its certificate, so it is escaped.
    static func verdict(_ v: ReaderVerdict?) -> String {
        switch v {
        case nil: "not evaluated"
        case .notAuthenticated?: "not authenticated"
        case .trusted(let s, let aki)?: "trusted: \(safe(s))" + (aki.map { " (authority \(hex($0)))" } ?? "")
        case .signedNotTrusted(let s, let reason)?: "signed, not trusted (\(reason.explanation)): \(safe(s))"
        }
    }

    static func identify(_ root: CBORItem) -> String {
        if let r = try? DeviceRequest(root) {
            let docs = r.docRequests.map {
                "\($0.itemsRequest.docType) (\($0.itemsRequest.elementCount) elements\($0.readerAuth != nil ? ", readerAuth" : ""))"
            }
            return "DeviceRequest \(r.version): " + docs.joined(separator: "; ")
                + (r.readerAuthAll.isEmpty ? "" : "; readerAuthAll ×\(r.readerAuthAll.count)")
        }
        if let r = try? DeviceResponse(root) {
            return "DeviceResponse \(r.version), status \(r.status), documents: "
                + r.documents.map(\.docType).joined(separator: ", ")
        }
        if let s = try? IssuerSigned(root) {
            let mso = try? s.mobileSecurityObject()
            return "IssuerSigned: \(s.nameSpaces.reduce(0) { $0 + $1.items.count }) items"
                + (mso.map {
                    ", MSO for \($0.docType), valid until \(MdocDate.formatDateTime($0.validityInfo.validUntil))"
                } ?? "")
        }
        if let m = try? COSESign1(root) {
            return
                "COSE_Sign1 (\((try? m.algorithm()).map { "\($0)" } ?? "unknown alg"), payload \(m.payload == nil ? "detached" : "attached"))"
        }
        if let k = try? COSEKey(root) {
            return "COSE_Key \(k.curve)"
        }
        return "not a recognised mdoc structure"
    }
}

/// A JSON value as text (the consent model's parts inside `inspect --json`).
private func j(_ v: JSONValue) -> String { ConsentModelJSON.text(v) }
