import Foundation
import MdocCBOR

/// `mdoc-respond demo`: a whole mdoc presentation on freshly generated test keys. An issuer signs an
/// mDL (IssuerSigned + MSO), a reader signs a DeviceRequest (readerAuth over ReaderAuthentication), the
/// wallet verifies the reader, builds a DeviceResponse releasing only what was asked (issuer items
/// spliced verbatim), signs DeviceAuthentication with the device key, and the reader verifies all of it.
/// (The Annex C transport — origin-bound transcript and HPKE — joins this demo when the engine lands.)
enum Demo {
    static let help = """
    usage: mdoc-respond demo [--verbose]

    Runs an ISO 18013-5 presentation end to end on test keys generated for the run and prints what
    was asked, what was released, sizes and time per stage. --verbose also prints the DeviceRequest
    and DeviceResponse in diagnostic notation.
    """

    struct Failure: Error { let stage: String }

    static func run(_ args: [String]) {
        var verbose = false
        for a in args {
            switch a {
            case "-h", "--help": print(help); exit(Exit.ok)
            case "--verbose", "-v": verbose = true
            default: fail(Exit.usage, "usage", "unknown option '\(a)'")
            }
        }
        do {
            try perform(verbose: verbose)
        } catch let f as Failure {
            fail(Exit.refused, "demo", "stage failed: \(f.stage)")
        } catch {
            fail(Exit.refused, "demo", "\(error)")
        }
    }

    static func time<T>(_ label: String, _ timings: inout [(String, Double)], _ body: () throws -> T) rethrows -> T {
        let t0 = Date()
        let r = try body()
        timings.append((label, Date().timeIntervalSince(t0) * 1000))
        return r
    }

    static func perform(verbose: Bool) throws {
        var timings = [(String, Double)]()
        let docType = "org.iso.18013.5.1.mDL"
        let ns = "org.iso.18013.5.1"

        // Issuer side: the credential the wallet holds.
        let issuer = try SoftwareSigner.generate(curve: .p256)
        let device = try SoftwareSigner.generate(curve: .p256)
        let elements: [(String, CBORValue)] = [
            ("family_name", .text("Mustermann")), ("given_name", .text("Erika")),
            ("birth_date", .tagged(1004, .text("1964-08-12"))), ("age_over_18", .bool(true)),
            ("age_over_21", .bool(true)), ("document_number", .text("T22000129")),
            ("issuing_country", .text("DE")), ("portrait", .bytes([UInt8](repeating: 0xab, count: 4096))),
        ]
        let issuerSigned: [UInt8] = try time("issue credential", &timings) {
            var items = [[UInt8]]()
            var digests = [CBORValue.MapEntry]()
            for (i, (id, value)) in elements.enumerated() {
                var random = [UInt8](repeating: 0, count: 16)
                for k in 0..<16 { random[k] = UInt8.random(in: 0...255) }
                let item = CBORValue.embedded(.map([
                    .init(.text("digestID"), .unsigned(UInt64(i))), .init(.text("random"), .bytes(random)),
                    .init(.text("elementIdentifier"), .text(id)), .init(.text("elementValue"), value),
                ])).encoded()
                items.append(item)
                digests.append(.init(.unsigned(UInt64(i)), .bytes(sha256(item))))
            }
            let now = Date()
            let mso: CBORValue = .map([
                .init(.text("version"), .text("1.0")), .init(.text("digestAlgorithm"), .text("SHA-256")),
                .init(.text("docType"), .text(docType)),
                .init(.text("valueDigests"), .map([.init(.text(ns), .map(digests))])),
                .init(.text("deviceKeyInfo"), .map([.init(.text("deviceKey"), device.publicKey.cborValue)])),
                .init(.text("validityInfo"), .map([
                    .init(.text("signed"), .tagged(0, .text(MdocDate.formatDateTime(now)))),
                    .init(.text("validFrom"), .tagged(0, .text(MdocDate.formatDateTime(now)))),
                    .init(.text("validUntil"), .tagged(0, .text(MdocDate.formatDateTime(now.addingTimeInterval(365 * 86400))))),
                ])),
            ])
            let issuerAuth = try COSESign1.sign(payload: CBORValue.embedded(mso).encoded(), detached: false, signer: issuer)
            var w = CBORWriter()
            w.writeMapHeader(count: 2)
            w.writeText("nameSpaces"); w.writeMapHeader(count: 1); w.writeText(ns)
            w.writeArrayHeader(count: items.count); for i in items { w.writeRaw(i) }
            w.writeText("issuerAuth"); w.writeRaw(issuerAuth)
            return w.bytes
        }

        // A stand-in SessionTranscript (Annex C binds it to the origin; see the engine).
        let transcript = CBORValue.array([.null, .null, .array([.text("demo"), .bytes(sha256(Array("demo".utf8)))])]).encoded()

        // Reader side: ask for three elements and sign the request.
        let reader = try SoftwareSigner.generate(curve: .p256)
        let asked = ["family_name", "age_over_21", "portrait"]
        let requestBytes: [UInt8] = try time("reader builds request", &timings) {
            let itemsRequest = CBORValue.embedded(.map([
                .init(.text("docType"), .text(docType)),
                .init(.text("nameSpaces"), .map([.init(.text(ns), .map(asked.map { .init(.text($0), .bool(false)) }))])),
            ])).encoded()
            let rab = MdocAuthentication.readerAuthenticationBytes(sessionTranscript: transcript, itemsRequestBytes: itemsRequest)
            let readerAuth = try COSESign1.sign(payload: rab, detached: true, signer: reader)
            var w = CBORWriter()
            w.writeMapHeader(count: 2)
            w.writeText("version"); w.writeText("1.0")
            w.writeText("docRequests"); w.writeArrayHeader(count: 1)
            w.writeMapHeader(count: 2)
            w.writeText("itemsRequest"); w.writeRaw(itemsRequest)
            w.writeText("readerAuth"); w.writeRaw(readerAuth)
            return w.bytes
        }

        // Wallet side: parse, verify the reader, select, respond.
        let request = try time("wallet parses request", &timings) { try DeviceRequest(encoded: requestBytes) }
        let docRequest = request.docRequests[0]
        try time("wallet verifies readerAuth", &timings) {
            guard let ra = docRequest.readerAuth else { throw Failure(stage: "readerAuth missing") }
            let rab = MdocAuthentication.readerAuthenticationBytes(sessionTranscript: transcript, itemsRequestBytes: docRequest.itemsRequestBytes)
            try ra.verify(key: reader.publicKey, detachedPayload: rab)
        }
        let stored = try IssuerSigned(encoded: issuerSigned)
        let wanted = Set(docRequest.itemsRequest.nameSpaces.flatMap { $0.elements.map(\.identifier) })
        let response: [UInt8] = try time("wallet builds and signs response", &timings) {
            let released = stored.nameSpaces[0].items.filter { wanted.contains($0.elementIdentifier) }
            let dab = MdocAuthentication.deviceAuthenticationBytes(sessionTranscript: transcript, docType: docType,
                                                                   deviceNameSpacesBytes: MdocAuthentication.emptyDeviceNameSpacesBytes)
            var w = CBORWriter(capacity: issuerSigned.count + 512)
            w.writeMapHeader(count: 3)
            w.writeText("status"); w.writeUnsigned(0)
            w.writeText("version"); w.writeText("1.0")
            w.writeText("documents"); w.writeArrayHeader(count: 1)
            w.writeMapHeader(count: 3)
            w.writeText("docType"); w.writeText(docType)
            w.writeText("deviceSigned"); w.writeMapHeader(count: 2)
            w.writeText("nameSpaces"); w.writeRaw(MdocAuthentication.emptyDeviceNameSpacesBytes)
            w.writeText("deviceAuth"); w.writeMapHeader(count: 1)
            w.writeText("deviceSignature")
            try COSESign1.sign(into: &w, payload: dab, detached: true, signer: device)
            w.writeText("issuerSigned"); w.writeMapHeader(count: 2)
            w.writeText("issuerAuth"); w.writeRaw(stored.issuerAuth.item.encodedBytes)
            w.writeText("nameSpaces"); w.writeMapHeader(count: 1); w.writeText(ns)
            w.writeArrayHeader(count: released.count); for r in released { w.writeRaw(r.bytes) }
            return w.bytes
        }

        // Reader verifies the response.
        let disclosed: [(String, String)] = try time("reader verifies response", &timings) {
            let resp = try DeviceResponse(encoded: response)
            guard let doc = resp.documents.first, doc.docType == docType else { throw Failure(stage: "document missing") }
            try doc.issuerSigned.issuerAuth.verify(key: issuer.publicKey)
            let mso = try doc.issuerSigned.mobileSecurityObject()
            try doc.issuerSigned.checkValueDigests(against: mso)
            guard mso.validityInfo.contains(Date()) else { throw Failure(stage: "MSO validity") }
            guard case .signature(let sig) = doc.deviceSigned.deviceAuth else { throw Failure(stage: "device signature missing") }
            let dab = MdocAuthentication.deviceAuthenticationBytes(sessionTranscript: transcript, docType: doc.docType, deviceNameSpacesBytes: doc.deviceSigned.nameSpacesBytes)
            try sig.verify(key: mso.deviceKey, detachedPayload: dab)
            var out = [(String, String)]()
            for n in doc.issuerSigned.nameSpaces {
                for i in n.items {
                    guard wanted.contains(i.elementIdentifier) else { throw Failure(stage: "unrequested element released") }
                    let v = i.elementValue.type == .byteString ? "<\(i.elementValue.byteStringSlice?.count ?? 0) bytes>" : CBORDiagnostic.describe(i.elementValue)
                    out.append((i.elementIdentifier, v))
                }
            }
            return out
        }

        print("mdoc-respond demo: an ISO 18013-5 presentation on freshly generated test keys")
        print("  document type     \(docType)")
        print("  reader asked for  \(asked.joined(separator: ", "))  (readerAuth ES256: verified)")
        print("  credential holds  \(elements.count) elements; released \(disclosed.count):")
        for (k, v) in disclosed { print("    \(ns)/\(k) = \(v)") }
        print("  request  \(requestBytes.count) bytes;  response \(response.count) bytes (issuer items spliced verbatim)")
        print("  issuer signature, \(disclosed.count) value digests, MSO validity and device signature: verified by the reader")
        print("  time per stage:")
        for (label, ms) in timings { print("    " + label.padding(toLength: 36, withPad: " ", startingAt: 0) + String(format: "%8.3f ms", ms)) }
        if verbose {
            print("\nDeviceRequest:\n" + CBORDiagnostic.describe(try CBORDocument(decoding: requestBytes).root, options: .init(expandEmbedded: true, indent: 2)))
            print("\nDeviceResponse:\n" + CBORDiagnostic.describe(try CBORDocument(decoding: response).root, options: .init(expandEmbedded: true, indent: 2)))
        }
    }

    static func sha256(_ b: [UInt8]) -> [UInt8] { MdocDigest.sha256(b) }
}
