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
                                    [--protocol auto|annexc|openid4vp] [--config JSON|@FILE] [--zk-dir DIR]

        With --request: explains what the engine does with a raw request, in either protocol: the
        protocol and framing, the origin used, each protocol structure the checks reached with its hex
        and diagnostic notation (Annex C: dcapiInfo, SessionTranscript, the DeviceRequest with tag-24
        contents expanded; OpenID4VP: the handover info, handover and SessionTranscript, and the nonce,
        response mode and encryption key), every reader or verifier signature (algorithm, client_id,
        chain, trust), and which stored credentials could answer each requested document (DCQL: claim
        sets and values) and what each would release. A refused request shows everything checked
        before the rule that refused it. --protocol picks the protocol when the request offers both
        (auto: the one the engine would answer with); --config as for respond. Exit 1 if the engine
        refuses.

        Prints the CBOR item in FILE (binary, or hex text) in RFC 8949 diagnostic notation, with the
        contents of tag-24 byte strings expanded as << ... >>, then names the ISO 18013-5 structure it
        parses as (DeviceRequest, DeviceResponse, IssuerSigned, COSE_Sign1, COSE_Key), if any.

          --hex         treat the input as hex text even if it could be binary
          --no-expand   do not expand tag-24 contents
          --indent N    indent nested containers by N spaces (default 2; 0 = one line)
        """

    static func run(_ args: [String]) {
        if args.contains(where: { $0 == "--request" || $0.hasPrefix("--request=") }) {
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
            case let a where a.hasPrefix("--indent="):
                guard let n = Int(a.dropFirst("--indent=".count)), n >= 0, n <= 8 else {
                    fail(Exit.usage, "usage", "--indent needs a number 0-8")
                }
                indent = n
            case let a where a.hasPrefix("--") && a.contains("="):
                fail(Exit.usage, "usage", "unknown option \(a.prefix { $0 != "=" }); see --help")
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
        o.check(allowed: ["--request", "--origin", "--context", "--clock", "--protocol", "--config", "--zk-dir"])
        let context = BuiltIn.context(o.value("--context"))
        var configuration = BuiltIn.configuration(o, over: context)
        if o.value("--clock") == nil, o.value("--config") == nil {
            let now = Date()
            configuration.clock = { now }
        }
        // Read no more than the engine accepts: a larger request is refused without being held.
        let raw = Data(
            Input.read(o.require("--request"), limit: configuration.limits.maxRequestBytes) {
                fail(Exit.refused, PresentmentError(FramingRule.tooLarge))
            })
        let origin = o.require("--origin")
        let e = DigitalCredentialsEngine(context: context, configuration: configuration).explain(
            rawRequest: raw, origin: origin)
        if o.flags.contains("--json") { print(json(e)) } else { printText(e) }
        // Non-zero where respond (approving everything shown) would refuse, as respond exits.
        if e.error != nil || e.respondWouldRefuse != nil { exit(Exit.refused) }
    }

    /// The explanation as one JSON object (the JSON writer's; request-controlled strings escaped).
    static func json(_ e: Explanation) -> String {
        let r = e.request
        let o = r?.details.openID4VP
        func hexString(_ b: [UInt8]?) -> JSONValue { b.map { .string(hex($0)) } ?? .null }
        let structures: [JSONValue] = e.trace.structures.map { s in
            let diagnostic = (try? CBORDocument(decoding: s.bytes)).map {
                JSONValue.string(CBORDiagnostic.describe($0.root, options: .init(expandEmbedded: true)))
            }
            return .object([
                ("name", .string(s.name)), ("hex", .string(hex(s.bytes))), ("diagnostic", diagnostic ?? .null),
            ])
        }
        let signatures: [JSONValue] = e.trace.signatures.map { c in
            .object([
                ("label", .string(c.signature.label)), ("algorithm", .string(c.algorithm)),
                ("clientID", c.signature.clientID.map(JSONValue.string) ?? .null),
                ("certificates", .array(c.signature.certificateSubjects.map(JSONValue.string))),
                ("trust", ConsentModelJSON.verdict(c.signature.verdict)),
                ("refusal", c.refusal.map { .string($0.description) } ?? .null),
                ("signedBytes", .string(hex(c.signedBytes))),
            ])
        }
        let encryption: JSONValue =
            o?.encryption.map {
                .object([
                    ("kid", $0.keyID.map(JSONValue.string) ?? .null), ("enc", .string($0.contentEncryption)),
                    ("thumbprint", .string(hex($0.thumbprint))),
                ])
            } ?? .null
        func refusal(_ r: PresentmentError?) -> JSONValue {
            r.map {
                .object([
                    ("code", .string($0.code.rawValue)), ("rule", .string($0.rule.description)),
                    ("detail", .string($0.detail)),
                ])
            } ?? .null
        }
        let error = refusal(e.error)
        let value = JSONValue.object([
            ("protocol", r.map { .string($0.protocolIdentifier) } ?? .null),
            ("framing", e.framing.map { .string($0.rawValue) } ?? .null),
            ("origin", e.origin.map(JSONValue.string) ?? .null),
            ("sessionTranscript", hexString(e.trace.structure("SessionTranscript"))),
            ("structures", .array(structures)),
            ("signatures", .array(signatures)),
            ("nonce", o.map { .string($0.nonce) } ?? .null),
            ("responseMode", o.map { .string($0.responseMode.rawValue) } ?? .null),
            ("encryption", encryption),
            ("verifierInfo", .array((o?.verifierInfo ?? []).map(JSONValue.string))),
            (
                "droppedSignatures",
                .array(
                    (o?.droppedSignatures ?? []).map {
                        .object([("label", .string($0.label)), ("rule", .string($0.rule.description))])
                    })
            ),
            ("readerVerdict", r.map { ConsentModelJSON.verdict($0.readerVerdict) } ?? .null),
            ("readers", .array((r?.readers ?? []).map(ConsentModelJSON.verdict))),
            ("selection", .array(e.selection.map(JSONValue.string))),
            ("documents", .array((r?.documents ?? []).map(ConsentModelJSON.document))),
            // The consent model (the schema the C ABI and Python share), when the request parses.
            ("consent", r.map(ConsentModelJSON.value) ?? .null),
            ("error", error),
            ("respondWouldRefuse", refusal(e.respondWouldRefuse)),
        ])
        return ConsentModelJSON.text(value)
    }

    /// The explanation as text (no element values; request-controlled strings escaped).
    static func printText(_ e: Explanation) {
        let r = e.request
        print("protocol:           \(r.map { safe($0.protocolIdentifier) } ?? "-")")
        print("framing:            \(e.framing?.rawValue ?? "-")")
        print("origin:             \(e.origin ?? "-")")
        for s in e.trace.structures {
            print(padded("\(s.name):", 20) + hex(s.bytes))
            if let doc = try? CBORDocument(decoding: s.bytes) {
                let indent = s.name == "DeviceRequest" ? 2 : 0
                let text = CBORDiagnostic.describe(doc.root, options: .init(expandEmbedded: true, indent: indent))
                print(indent == 0 ? "                    " + text : text)
            }
        }
        if let o = r?.details.openID4VP {
            print("nonce:              \(safe(o.nonce))")
            print(
                "response mode:      \(o.responseMode.rawValue)"
                    + (o.encryption.map {
                        " (\($0.contentEncryption) to kid \(safe($0.keyID ?? "-")), thumbprint \(hex($0.thumbprint)))"
                    } ?? ""))
            for v in o.verifierInfo { print("verifier_info:      \(safe(v))") }
        }
        for c in e.trace.signatures {
            print(
                "signature \(safe(c.signature.label)): \(c.algorithm), verified"
                    + (c.signature.clientID.map { "; client_id \(safe($0))" } ?? "")
                    + "; chain: \(c.signature.certificateSubjects.map(safe).joined(separator: " <- "))")
            print("                    trust: \(c.refusal.map { "refused by \($0)" } ?? verdict(c.signature.verdict))")
        }
        for d in r?.details.openID4VP?.droppedSignatures ?? [] {
            print("signature \(safe(d.label)): dropped, did not verify (\(d.rule)); not an identity")
        }
        if let r {
            print("reader verdict:     \(verdict(r.readerVerdict))")
            if r.readers.count > 1 {
                print(
                    "readers:            \(r.readers.count) different reader certificates signed parts of this request: "
                        + r.readers.map { safe($0.subject ?? "-") }.joined(separator: "; "))
            }
            for d in r.documents {
                if let id = r.details.openID4VP?.credentialQueryIDs[d.index] {
                    print("credential query:   \(safe(id))")
                }
                printDocument(d)
            }
        }
        if let err = e.error {
            print("refused:            \(err.code.rawValue) [\(err.rule)]: \(safe(err.detail))")
        }
        if let err = e.respondWouldRefuse {
            print("respond would refuse: \(err.code.rawValue) [\(err.rule)]: \(safe(err.detail))")
        }
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
        if let z = d.zeroKnowledge {
            let asked = z.required ? "a zero-knowledge proof is required" : "a zero-knowledge proof is accepted"
            switch z.answer {
            case .proof(let spec, let seconds):
                print(
                    "  zero-knowledge:   \(asked); answered with a proof (\(safe(spec.system)) v\(spec.version ?? 0), \(spec.attributeCount ?? 0) attribute(s), about \(Int(seconds.rounded(.up))) s)"
                )
                print("    system id:      \(safe(spec.id))")
                print(
                    "    reveals:        the claims and their values, the docType, the time and the issuer's document-signer certificate; nothing else of the credential"
                )
            case .plainFallback(let why):
                print("  zero-knowledge:   \(asked); no proof can be made (\(why))")
                print(
                    "    plain fallback: only if approved for this document (--approve-plain-fallback \(d.index)); it reveals \(ZeroKnowledgeOffer.plainPresentationReveals.joined(separator: ", ")) and is linkable"
                )
            }
        }
        if d.candidates.isEmpty { print("  no usable credential") }
        for x in d.excluded {
            print("  excluded:         \(safe(x.credentialID)) (\(x.reason.rawValue))")
        }
        for c in d.candidates {
            print("  candidate \(safe(c.credentialID)): would release \(c.shownElements.count): \(list(c.releasable))")
            for p in c.provenClaims {
                print("    proves \(safe(p.element.description)) = \(safe(p.value)) (revealed in plaintext)")
            }
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
