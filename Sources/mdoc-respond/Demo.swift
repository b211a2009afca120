import AnnexCReader
import DigitalCredentials
import OpenID4VPReader
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import Longfellow
import MdocCBOR
import WebEncoding
import PKCS11

/// `mdoc-respond demo`: both presentment protocols end to end on the built-in test data. A page's
/// request is built (signed by the test reader / verifier), the wallet answers it from the built-in
/// context, and the verifier opens and verifies the answer against the test IACA.
enum Demo {
    static let help = """
        usage: mdoc-respond demo [--verbose] [--framing data|protocol|requests|digital] [--no-reader-auth]
                                 [--protocol all|annexc|openid4vp|zk] [--pkcs11 [--pkcs11-module PATH]]

        Runs the flow end to end on the built-in test data (TestVectors/): request → parse and reader
        authentication → selection → DeviceResponse → device signature → encryption → the verifier opens
        and verifies. Annex C (org-iso-mdoc, HPKE) and then OpenID4VP (openid4vp-v1-signed with
        x509_san_dns, DCQL with a claim set, dc_api.jwt), and then a zero-knowledge age check (Annex C
        with zkRequest: a Longfellow proof that the holder's age attestation says age_over_18, made
        with the prover scripts/zk-setup.sh installs). Prints what was asked, what was disclosed,
        sizes and time per stage. --verbose also prints the Annex C request and the decrypted
        DeviceResponse in diagnostic notation.
        --pkcs11 first sets up a SoftHSM2 token in a temporary directory (removed at exit), creates the
        holder's device key in it, has the test issuer issue an mDL for that key, and answers both
        requests signing in the token (module: --pkcs11-module, default Debian's SoftHSM2).
        """

    static func run(_ args: [String]) {
        let o = Options(args, flags: ["--verbose", "-v", "--no-reader-auth", "--pkcs11"], help: help)
        o.check(allowed: ["--framing", "--protocol", "--pkcs11-module"])
        // "both" is the earlier name of "all".
        let which = o.value("--protocol").map { $0 == "both" ? "all" : $0 } ?? "all"
        guard ["all", "annexc", "openid4vp", "zk"].contains(which) else {
            fail(Exit.usage, "usage", "--protocol must be all, annexc, openid4vp or zk")
        }
        let framing: RequestFraming =
            switch o.value("--framing") ?? "digital" {
            case "data": .dataObject
            case "protocol": .protocolAndData
            case "requests": .requestList
            default: .digitalRequestList
            }
        let t = Date()
        let context: CredentialContext
        if o.flags.contains("--pkcs11") {
            context = tokenContext(modulePath: o.value("--pkcs11-module"))
        } else {
            if o.value("--pkcs11-module") != nil { fail(Exit.usage, "usage", "--pkcs11-module goes with --pkcs11") }
            context = BuiltIn.context(nil)
        }
        let loadMS = ms(t)

        do {
            if which == "all" || which == "annexc" {
                try perform(
                    context: context, loadMS: loadMS, verbose: o.flags.contains("--verbose") || o.flags.contains("-v"),
                    framing: framing, readerAuth: !o.flags.contains("--no-reader-auth"))
            }
            if which == "all" { print("") }
            if which == "all" || which == "openid4vp" {
                try performOpenID4VP(context: context, readerAuth: !o.flags.contains("--no-reader-auth"))
            }
            if which == "all" { print("") }
            if which == "all" || which == "zk" {
                // The age attestation is in the built-in context (the --pkcs11 context holds an mDL only).
                try performZeroKnowledge(context: o.flags.contains("--pkcs11") ? context : BuiltIn.context(nil))
            }
        } catch {
            fail(Exit.refused, error)
        }
    }

    static func ms(_ start: Date) -> Double { Date().timeIntervalSince(start) * 1000 }

    /// The "time per stage" table of a leg: labels padded, milliseconds right-aligned.
    static func printStages(_ stages: [(String, Double)], decimals: Int = 3) {
        print("  time per stage")
        let width = max(32, (stages.map(\.0.count).max() ?? 0) + 2)
        for (label, v) in stages {
            let t = fixed(v, decimals)
            print("    " + padded(label, width) + String(repeating: " ", count: max(0, 9 - t.count)) + t + " ms")
        }
    }

    /// The wallet's two phases on a request, each timed (milliseconds): parse, then respond approving
    /// everything shown.
    static func walletTurn(_ engine: DigitalCredentialsEngine, _ raw: Data, _ origin: Origin) throws(PresentmentError)
        -> (parsed: DigitalCredentialsRequest, response: Data, parseMS: Double, respondMS: Double)
    {
        var t = Date()
        let parsed = try engine.parse(rawRequest: raw, origin: origin.serialized)
        let parseMS = ms(t)
        t = Date()
        let response = try engine.respond(to: parsed)
        return (parsed, response, parseMS, ms(t))
    }

    /// A context whose one mDL's device key was born in a fresh SoftHSM2 token: the token set up in a
    /// temporary directory, the key generated there, the credential issued for it by the test issuer.
    static func tokenContext(modulePath: String?) -> CredentialContext {
        do {
            let sandbox = try SoftHSM2Sandbox.shared(modulePath: modulePath)
            let token = try sandbox.makeToken(label: "mdoc-respond-demo")
            let (uri, key) = try PKCS11KeyGeneration.generate(token.uri(object: "holder-mdl"))
            let builtIn = BuiltIn.context(nil)
            guard let mdl = builtIn.credential(id: "mdl") else {
                fail(Exit.io, "contextUnavailable", "the built-in mDL is missing")
            }
            var spaces = [(String, [MdocIssuer.Element])]()
            for id in try mdl.elements {
                guard let v = mdl.element(id) else { continue }
                if spaces.last?.0 != id.nameSpace { spaces.append((id.nameSpace, [])) }
                spaces[spaces.count - 1].1.append(.init(id.identifier, CBORValue(v)))
            }
            let now = Date()
            let issuer = MdocIssuer(signer: BuiltIn.signer("ds"), certificateChain: [BuiltIn.certificate("ds")])
            let issued = try issuer.issue(
                docType: mdl.docTypes[0], nameSpaces: spaces, deviceKey: key, signed: now,
                validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(30 * 86400))
            let context = try CredentialContext(
                entries: [.init(id: "mdl", issuerSigned: issued, deviceKeyReference: uri.string)],
                readerTrust: builtIn.readerTrust,
                keyResolver: ContextKeyResolver(directory: BuiltIn.contextDirectory, requirePrivateFiles: false))
            print("mdoc-respond demo: the holder's device key lives in a SoftHSM2 token")
            print("  token               \(safe(token.label)) in \(safe(sandbox.directory)) (temporary)")
            print("  device key          \(safe(uri.keyOnly.string)) (P-256, born in the token, not extractable)")
            print("  credential          an mDL issued by the test issuer for that key\n")
            return context
        } catch let e as PKCS11Error {
            fail(Exit.refused, PresentmentError(KeyRule.token, underlying: e))
        } catch let e as PresentmentError {
            fail(Exit.refused, e)
        } catch {
            fail(Exit.refused, "keyUnavailable", "the demo credential could not be issued")
        }
    }

    static func perform(
        context: CredentialContext, loadMS: Double, verbose: Bool, framing: RequestFraming, readerAuth: Bool
    ) throws(PresentmentError) {
        var t = Date()
        let engine = DigitalCredentialsEngine(context: context)
        let origin = try Origin("https://verifier.example")
        let ns = "org.iso.18013.5.1"
        let asked = [
            "family_name", "given_name", "birth_date", "age_over_21", "portrait", "driving_privileges",
            "resident_address",
        ]
        let doc = AnnexCReader.DocumentRequest(
            docType: "org.iso.18013.5.1.mDL",
            elements: asked.map { .init(ElementID(ns, $0), intentToRetain: $0 == "family_name") })
        t = Date()
        let signing: AnnexCReader.Signing =
            readerAuth ? .perDocument(signer: BuiltIn.signer("reader"), chain: [BuiltIn.certificate("reader")]) : .none
        let request = try AnnexCReader.makeRequest(documents: [doc], origin: origin, framing: framing, signing: signing)
        let buildMS = ms(t)
        t = Date()
        let (parsed, response, parseMS, respondMS) = try walletTurn(engine, request.rawRequest, origin)
        t = Date()
        let verified = try AnnexCReader.openResponse(
            response, for: request, issuerRoots: [BuiltIn.certificate("iaca")], at: Date())
        let verifyMS = ms(t)

        print("mdoc-respond demo: ISO/IEC 18013-7 Annex C on the built-in test data (TestVectors/)")
        print("  origin              \(parsed.origin)")
        print(
            "  request framing     \(parsed.details.annexC?.framing.rawValue ?? "-"), \(request.rawRequest.count) bytes"
        )
        print(
            "  reader              \(parsed.readerVerdict.subject.map { "\($0) (readerAuth verified, chains to the test reader root)" } ?? "not authenticated")"
        )
        print(
            "  transcript          \(hex(parsed.sessionTranscriptBytes.prefix(16)))… (\(parsed.sessionTranscriptBytes.count) bytes)"
        )
        print("  asked for           \(parsed.documents[0].docType): \(asked.joined(separator: ", "))")
        let cand = parsed.documents[0].candidates.first
        print(
            "  wallet holds        credential '\(cand?.credentialID ?? "-")'; not held: \(cand.map { $0.missing.isEmpty ? "none" : $0.missing.map(\.identifier).joined(separator: ", ") } ?? "-")"
        )
        print("  disclosed (verified by the reader against the test IACA):")
        for d in verified.documents {
            for e in d.elements {
                let id = e.element
                let v = e.value
                let shown =
                    v.type == .byteString ? "<\(v.byteStringSlice?.count ?? 0) bytes>" : CBORDiagnostic.describe(v)
                print("    \(id) = \(shown)")
            }
        }
        print(
            "  response            \(response.count) bytes sealed (HPKE P-256/AES-128-GCM); DeviceResponse \(verified.deviceResponse.count) bytes"
        )
        print(
            "  checks              issuer signature + chain, \(verified.documents[0].elements.count) digests, validity, device signature, only requested elements"
        )
        printStages([
            ("load context", loadMS), ("reader builds + signs request", buildMS),
            ("wallet parse + reader auth", parseMS), ("wallet respond (sign + seal)", respondMS),
            ("reader open + verify", verifyMS),
        ])
        if verbose {
            if let dr = Base64URL.decode(request.deviceRequest), let doc = try? CBORDocument(decoding: dr) {
                print(
                    "\nDeviceRequest:\n"
                        + CBORDiagnostic.describe(doc.root, options: .init(expandEmbedded: true, indent: 2)))
            }
            if let doc = try? CBORDocument(decoding: verified.deviceResponse) {
                print(
                    "\nDeviceResponse:\n"
                        + CBORDiagnostic.describe(doc.root, options: .init(expandEmbedded: true, indent: 2)))
            }
        }
    }

    /// The OpenID4VP leg: a signed request with a DCQL claim set, answered in `dc_api.jwt` through the
    /// one entry point, opened and verified by the verifier side.
    static func performOpenID4VP(context: CredentialContext, readerAuth: Bool) throws(PresentmentError) {
        let engine = DigitalCredentialsEngine(context: context)
        let origin = try Origin("https://verifier.example")
        let ns = "org.iso.18013.5.1"
        let query = OpenID4VPReader.CredentialQuery(
            id: "mdl", docType: "org.iso.18013.5.1.mDL",
            claims: [
                .init(ElementID(ns, "family_name"), id: "name"),
                .init(ElementID(ns, "age_over_25"), id: "a25"), .init(ElementID(ns, "age_over_21"), id: "a21"),
            ],
            claimSets: [["name", "a25"], ["name", "a21"]])
        var t = Date()
        let signing: OpenID4VPReader.Signing =
            readerAuth
            ? .signed(
                .init(
                    key: BuiltIn.signer("verifier"), chain: [BuiltIn.certificate("verifier")],
                    clientID: .sanDNS("verifier.example"))) : .unsigned
        let request = try OpenID4VPReader.makeRequest(queries: [query], origin: origin, signing: signing)
        let buildMS = ms(t)
        t = Date()
        let (parsed, response, parseMS, respondMS) = try walletTurn(engine, request.rawRequest, origin)
        t = Date()
        let verified = try OpenID4VPReader.openResponse(
            response, for: request, issuerRoots: [BuiltIn.certificate("iaca")], at: Date())
        let verifyMS = ms(t)
        let details = parsed.details.openID4VP
        print("mdoc-respond demo: OpenID4VP over the Digital Credentials API on the built-in test data")
        print(
            "  protocol            \(parsed.protocolIdentifier), response mode \(details?.responseMode.rawValue ?? "-")"
        )
        print(
            "  request             \(request.rawRequest.count) bytes; client_id \(parsed.signatures.first?.clientID ?? "none")"
        )
        print(
            "  verifier            \(parsed.readerVerdict.subject.map { "\($0) (JWS verified, chains to the test root)" } ?? "not authenticated")"
        )
        print(
            "  asked for           \(query.docType): family_name and age_over_25, or else family_name and age_over_21")
        print("  disclosed (verified by the verifier against the test IACA):")
        for d in verified.documents(for: "mdl") {
            for e in d.elements { print("    \(e.element) = \(CBORDiagnostic.describe(e.value))") }
        }
        print(
            "  response            \(response.count) bytes (JWE ECDH-ES/\(details?.encryption?.contentEncryption ?? "-") to the verifier's key)"
        )
        printStages([
            ("verifier builds + signs request", buildMS), ("wallet parse + verifier auth", parseMS),
            ("wallet respond (sign + encrypt)", respondMS), ("verifier open + verify", verifyMS),
        ])
    }

    /// The zero-knowledge leg: an age check as the EU age-verification profile asks it (Annex C, the
    /// age attestation's `age_over_18`, `zkRequired: true`, the v7 one-attribute Longfellow circuit),
    /// answered with a proof and verified by the verifier side.
    static func performZeroKnowledge(context: CredentialContext) throws(PresentmentError) {
        let installation = LongfellowInstallation.default
        print("mdoc-respond demo: a zero-knowledge age check (ISO/IEC 18013-7 Annex C with zkRequest, Longfellow)")
        guard installation.hasLibrary else {
            print(
                "  skipped             the Longfellow prover is not installed: run zk-setup.sh "
                    + "(scripts/ in the source, /usr/share/mdoc-respond/ from the .deb)")
            return
        }
        let engine = DigitalCredentialsEngine(context: context)
        let origin = try Origin("https://verifier.example")
        let av = "eu.europa.ec.av.1"
        guard let circuit = LongfellowCircuit.table.first(where: { $0.version == 7 && $0.attributes == 1 }) else {
            return
        }
        var t = Date()
        let request = try AnnexCReader.makeRequest(
            documents: [
                .init(
                    docType: av, elements: [.init(ElementID(av, "age_over_18"), intentToRetain: false)],
                    zkRequest: .init(specs: [circuit.spec], required: true))
            ], origin: origin)
        let buildMS = ms(t)
        let (parsed, response, parseMS, respondMS) = try walletTurn(engine, request.rawRequest, origin)
        t = Date()
        let verified = try AnnexCReader.openResponse(
            response, for: request, issuerRoots: [BuiltIn.certificate("iaca")], at: Date(),
            zkVerifier: LongfellowVerifier(installation: installation))
        let verifyMS = ms(t)
        print("  asked for           \(av): age_over_18, and only as a zero-knowledge proof (zkRequired)")
        if case .proof(let spec, _)? = parsed.documents.first?.zeroKnowledge?.answer {
            print(
                "  answered with       a proof: \(spec.system) v\(spec.version ?? 0), \(spec.attributeCount ?? 0) attribute, circuit \(String((spec.circuitHash ?? "").prefix(16)))…"
            )
        }
        print("  disclosed (proof verified by the verifier side; issuer chained to the test IACA):")
        for d in verified.documents {
            for e in d.elements { print("    \(e.element) = \(CBORDiagnostic.describe(e.value))") }
            print("    issuer              \(safe(d.documentSigner)) (the document-signer certificate)")
        }
        print(
            "  not disclosed       the MSO (validity, digests, device key), the issuer and device signatures, every other element"
        )
        print("  response            \(response.count) bytes (a ZkDocument, HPKE-sealed to the verifier)")
        printStages(
            [
                ("verifier builds request", buildMS), ("wallet parse + circuit match", parseMS),
                ("wallet respond (sign, prove, seal)", respondMS), ("verifier open + verify proof", verifyMS),
            ], decimals: 1)
    }
}
