import AnnexC
import AnnexCReader
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR

/// `mdoc-respond demo`: the whole Annex C flow on the built-in test data. A page's request is built
/// (signed by the test reader), the wallet answers it from the built-in context, and the reader opens
/// and verifies the answer against the test IACA.
enum Demo {
    static let help = """
        usage: mdoc-respond demo [--verbose] [--framing data|protocol|requests|digital] [--no-reader-auth]

        Runs the Annex C flow end to end on the built-in test data (TestVectors/): request → parse and
        reader authentication → selection → DeviceResponse → device signature → HPKE seal → the verifier
        opens and verifies. Prints what was asked, what was disclosed, sizes and time per stage.
        --verbose also prints the request and the decrypted DeviceResponse in diagnostic notation.
        """

    static func run(_ args: [String]) {
        let o = Options(args, flags: ["--verbose", "-v", "--no-reader-auth"], help: help)
        o.check(allowed: ["--framing"])
        let framing: RequestFraming =
            switch o.value("--framing") ?? "digital" {
            case "data": .dataObject
            case "protocol": .protocolAndData
            case "requests": .requestList
            default: .digitalRequestList
            }
        do {
            try perform(
                verbose: o.flags.contains("--verbose") || o.flags.contains("-v"), framing: framing,
                readerAuth: !o.flags.contains("--no-reader-auth"))
        } catch {
            fail(Exit.refused, error.code.rawValue, error.detail)
        }
    }

    static func ms(_ start: Date) -> Double { Date().timeIntervalSince(start) * 1000 }

    static func perform(verbose: Bool, framing: RequestFraming, readerAuth: Bool) throws(AnnexCError) {
        var t = Date()
        let context = BuiltIn.context(nil)
        let loadMS = ms(t)
        let engine = AnnexCEngine(context: context)
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
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: origin.serialized)
        let parseMS = ms(t)
        t = Date()
        let response = try engine.respond(to: parsed)
        let respondMS = ms(t)
        t = Date()
        let verified = try AnnexCReader.openResponse(
            response, for: request, issuerRoots: [BuiltIn.certificate("iaca")], at: Date())
        let verifyMS = ms(t)

        print("mdoc-respond demo: ISO/IEC 18013-7 Annex C on the built-in test data (TestVectors/)")
        print("  origin              \(parsed.origin)")
        print("  request framing     \(parsed.framing?.rawValue ?? "-"), \(request.rawRequest.count) bytes")
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
        print("  time per stage")
        for (label, v) in [
            ("load context", loadMS), ("reader builds + signs request", buildMS),
            ("wallet parse + reader auth", parseMS),
            ("wallet respond (sign + seal)", respondMS), ("reader open + verify", verifyMS),
        ] {
            let t = fixed(v, 3)
            print("    " + padded(label, 32) + String(repeating: " ", count: max(0, 8 - t.count)) + t + " ms")
        }
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
}
