import DigitalCredentials
import Foundation
import Testing
import TestSupport
@_spi(Testing) @testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import TestWorld
import HPKE
import MdocCBOR

@Suite("Annex C: end to end through accept and the reader side")
struct EndToEndTests {
    enum SigningMode: String, CaseIterable, Sendable { case none, perDocument, all }

    struct Combo: CustomTestStringConvertible, Sendable {
        let framing: RequestFraming
        let version: AnnexCReader.Version
        let signing: SigningMode
        var testDescription: String { "\(framing.rawValue) v\(version.rawValue) signing:\(signing.rawValue)" }
    }

    static var combos: [Combo] {
        var out = [Combo]()
        for f in RequestFraming.allCases {
            for v in AnnexCReader.Version.allCases {
                for s in SigningMode.allCases where !(s == .all && v == .v1_0) {
                    out.append(Combo(framing: f, version: v, signing: s))
                }
            }
        }
        return out
    }

    @Test(
        "accept answers every framing, 1.0 and 1.1, with and without reader authentication; the reader verifies it",
        arguments: combos)
    func matrix(_ c: Combo) throws {
        let world = try TestWorld()
        let entry = try world.entry(id: "mdl")
        let engine = world.engine(try world.context([entry], trust: world.trusted))
        let signing: AnnexCReader.Signing =
            switch c.signing {
            case .none: .none
            case .perDocument: world.perDocumentSigning
            case .all: world.allSigning
            }
        let asked = ["family_name", "given_name", "birth_date", "portrait", "age_over_18", "document_number"]
        let req = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(asked)], origin: TestWorld.origin, framing: c.framing, signing: signing,
            version: c.version)
        let parsed = try engine.parse(rawRequest: req.rawRequest, origin: "https://verifier.example")
        #expect(parsed.details.annexC?.framing == c.framing)
        if c.signing == .none {
            #expect(parsed.readerVerdict == ReaderVerdict.notAuthenticated)
        } else {
            guard case .trusted(let subject, let aki) = parsed.readerVerdict else {
                Issue.record("expected a trusted reader")
                return
            }
            #expect(subject.contains("Test Reader"))
            #expect(aki == world.readerRoot.subjectKeyIdentifier)
        }
        let response = try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example")
        // Framing of the answer: raw CBOR for the data object, the Android envelope otherwise.
        if c.framing == .dataObject {
            #expect(response.first == 0x82)
        } else {
            #expect(String(decoding: response.prefix(12), as: UTF8.self) == "{\"protocol\":")
        }
        let verified = try AnnexCReader.openResponse(response, for: req, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(verified.documents.count == 1)
        #expect(Set(verified.documents[0].elements.map(\.element.identifier)) == Set(asked))
        let portrait = verified.documents[0].elements.first { $0.element.identifier == "portrait" }?.value
        #expect(portrait?.byteStringValue == TestWorld.portrait)
        // The released items are the issuer's bytes, verbatim.
        let stored = engine.context.credentials[0]
        let dr = try DeviceResponse(encoded: verified.deviceResponse)
        for ns in dr.documents[0].issuerSigned.nameSpaces {
            for item in ns.items {
                #expect(
                    Array(item.bytes)
                        == Array(
                            stored.indexedBytes[stored.itemRange(ElementID(ns.name, item.elementIdentifier))!]))
            }
        }
        #expect(
            Array(dr.documents[0].issuerSigned.issuerAuth.item.encodedBytes)
                == Array(stored.indexedBytes[stored.issuerAuthRange]))
        // Deterministic encoding of everything we wrote.
        _ = try CBORDocument(decoding: verified.deviceResponse, options: .init(requirePreferredEncoding: true))
    }

    @Test(
        "Released items are spliced verbatim whether they lie next to each other in the issuer's encoding or not: all, every other, the first and last, one"
    )
    func splicedRuns() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let stored = engine.context.credentials[0]
        // The held elements in the issuer's order (the order of their bytes in IssuerSigned).
        let held = try stored.elements.filter { $0.nameSpace == TestWorld.mDLNS }
            .sorted { stored.itemRange($0)!.lowerBound < stored.itemRange($1)!.lowerBound }
        #expect(held.count >= 6)
        let patterns: [[ElementID]] = [
            held, held.enumerated().filter { $0.offset % 2 == 0 }.map(\.element), [held.first!, held.last!], [held[1]],
            Array(held[1...3]) + [held[5]],
        ]
        for asked in patterns {
            let req = try AnnexCReader.makeRequest(
                documents: [TestWorld.ask(asked.map(\.identifier))], origin: TestWorld.origin, framing: .dataObject)
            let response = try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example")
            let verified = try AnnexCReader.openResponse(
                response, for: req, issuerRoots: [world.iaca], at: TestWorld.now)
            let dr = try DeviceResponse(encoded: verified.deviceResponse)
            let items = dr.documents[0].issuerSigned.nameSpaces.flatMap { ns in ns.items.map { (ns.name, $0) } }
            #expect(items.map { ElementID($0.0, $0.1.elementIdentifier) } == asked)
            for (ns, item) in items {
                let range = try #require(stored.itemRange(ElementID(ns, item.elementIdentifier)))
                #expect(Array(item.bytes) == Array(stored.indexedBytes[range]))
            }
        }
    }

    @Test("DeviceResponse shape: version 1.0, status 0, detached ES256 deviceSignature, empty DeviceNameSpaces")
    func shape() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let req = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["age_over_18"])], origin: TestWorld.origin)
        let v = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"), for: req,
            issuerRoots: [world.iaca], at: TestWorld.now)
        let dr = try DeviceResponse(encoded: v.deviceResponse)
        #expect(dr.version == "1.0" && dr.status == 0)
        let doc = dr.documents[0]
        #expect(Array(doc.deviceSigned.nameSpacesBytes) == [0xd8, 0x18, 0x41, 0xa0])
        guard case .signature(let sig) = doc.deviceSigned.deviceAuth else {
            Issue.record("no signature")
            return
        }
        #expect(Array(sig.headers.protectedBytes) == [0xa1, 0x01, 0x26])
        #expect(sig.headers.unprotected.count == 0)
        #expect(sig.payload == nil)
        #expect(sig.signature.count == 64)
        let head: [UInt8] = h("a3 66737461747573 00 6776657273696f6e 63312e30 69646f63756d656e7473")
        #expect(Array(v.deviceResponse.prefix(head.count)) == head)
    }

    @Test(
        "Two documents (mDL and EU PID), 1.1 use cases: mandatory sets answered, unsatisfiable mandatory refused, optional dropped"
    )
    func multiDocument() throws {
        let world = try TestWorld()
        let engine = world.engine(
            try world.context([try world.entry(id: "mdl"), try world.entry(id: "pid", docType: TestWorld.pid)]))
        let docs = [
            TestWorld.ask(["family_name", "age_over_21"]),
            TestWorld.ask(TestWorld.pid, ["nationality", "age_over_18"]),
        ]
        // Both mandatory in one set.
        let r1 = try AnnexCReader.makeRequest(
            documents: docs, origin: TestWorld.origin, version: .v1_1,
            useCases: [.init(mandatory: true, documentSets: [[0, 1]])])
        let v1 = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: r1.rawRequest, origin: "https://verifier.example"), for: r1,
            issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(v1.documents.map(\.docType) == [TestWorld.mDL, TestWorld.pid])
        // 1.0 with two DocRequests: both answered.
        let r0 = try AnnexCReader.makeRequest(documents: docs, origin: TestWorld.origin, version: .v1_0)
        #expect(
            try AnnexCReader.openResponse(
                try engine.accept(rawRequest: r0.rawRequest, origin: "https://verifier.example"), for: r0,
                issuerRoots: [world.iaca], at: TestWorld.now
            ).documents.count == 2)
        // A photo ID nobody holds: mandatory alone → refused; offered as an alternative set → the held one is used.
        let withPhoto = docs + [TestWorld.ask("org.iso.23220.photoid.1", ["family_name"], nameSpace: "org.iso.23220.1")]
        let r2 = try AnnexCReader.makeRequest(
            documents: withPhoto, origin: TestWorld.origin, version: .v1_1,
            useCases: [.init(mandatory: true, documentSets: [[2]])])
        expectRefusal(SelectionRule.mandatoryUseCase) {
            try engine.accept(rawRequest: r2.rawRequest, origin: "https://verifier.example")
        }
        let r3 = try AnnexCReader.makeRequest(
            documents: withPhoto, origin: TestWorld.origin, version: .v1_1,
            useCases: [
                .init(mandatory: true, documentSets: [[2], [0]]), .init(mandatory: false, documentSets: [[1, 2]]),
            ])
        let v3 = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: r3.rawRequest, origin: "https://verifier.example"), for: r3,
            issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(v3.documents.map(\.docType) == [TestWorld.mDL])
        // 1.0 with an unheld docType: no matching credential.
        let r4 = try AnnexCReader.makeRequest(documents: withPhoto, origin: TestWorld.origin, version: .v1_0)
        expectRefusal(SelectionRule.noUsableCredential) {
            try engine.accept(rawRequest: r4.rawRequest, origin: "https://verifier.example")
        }
        // The report policy lists the unanswered optional document in documentErrors.
        let reporting = world.engine(engine.context) { $0.annexC.missingElements = .report }
        let v5 = try AnnexCReader.openResponse(
            try reporting.accept(rawRequest: r3.rawRequest, origin: "https://verifier.example"), for: r3,
            issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(v5.documentErrors.map(\.docType).sorted() == [TestWorld.pid, "org.iso.23220.photoid.1"].sorted())
    }

    @Test("Partial availability: missing elements omitted by default, reported as errors (code 0) on request")
    func partial() throws {
        let world = try TestWorld()
        let ctx = try world.context([try world.entry(id: "mdl")])
        let req = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name", "resident_address", "age_over_65"])], origin: TestWorld.origin)
        let parsed = try world.engine(ctx).parse(rawRequest: req.rawRequest, origin: "https://verifier.example")
        #expect(parsed.documents[0].candidates[0].releasable.map(\.identifier) == ["family_name"])
        #expect(parsed.documents[0].candidates[0].missing.map(\.identifier) == ["age_over_65", "resident_address"])
        let v = try AnnexCReader.openResponse(
            try world.engine(ctx).accept(rawRequest: req.rawRequest, origin: "https://verifier.example"), for: req,
            issuerRoots: [], at: TestWorld.now)
        #expect(v.documents[0].elements.map(\.element.identifier) == ["family_name"])
        #expect(try DeviceResponse(encoded: v.deviceResponse).documents[0].errors.isEmpty)
        let reporting = world.engine(ctx) { $0.annexC.missingElements = .report }
        let v2 = try AnnexCReader.openResponse(
            try reporting.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"), for: req,
            issuerRoots: [], at: TestWorld.now)
        let errors = try DeviceResponse(encoded: v2.deviceResponse).documents[0].errors
        #expect(errors.map(\.element).sorted() == ["age_over_65", "resident_address"])
        #expect(errors.allSatisfy { $0.code == 0 })
        // Nothing held at all: refused, never an empty response.
        let none = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["resident_address"])], origin: TestWorld.origin)
        expectRefusal(SelectionRule.nothingReleasable) {
            try world.engine(ctx).accept(rawRequest: none.rawRequest, origin: "https://verifier.example")
        }
    }

    @Test(
        "Per-element approval releases only what the user approved; a consent summary narrower than the request refuses"
    )
    func approval() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let req = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name", "birth_date", "portrait"])], origin: TestWorld.origin)
        let parsed = try engine.parse(rawRequest: req.rawRequest, origin: "https://verifier.example")
        let only = try engine.respond(to: parsed, approving: .elements([ElementID(TestWorld.mDLNS, "family_name")]))
        let v = try AnnexCReader.openResponse(only, for: req, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(v.documents[0].elements.map(\.element.identifier) == ["family_name"])
        let per = try engine.respond(
            to: parsed,
            approving: .perDocument([
                0: [ElementID(TestWorld.mDLNS, "portrait"), ElementID(TestWorld.mDLNS, "birth_date")]
            ]))
        #expect(
            Set(
                try AnnexCReader.openResponse(per, for: req, issuerRoots: [world.iaca], at: TestWorld.now).documents[0]
                    .elements.map(\.element.identifier)) == ["portrait", "birth_date"])
        // Approving something not requested releases nothing extra.
        let extra = try engine.respond(
            to: parsed,
            approving: .elements([
                ElementID(TestWorld.mDLNS, "family_name"), ElementID(TestWorld.mDLNS, "document_number"),
            ]))
        #expect(
            try AnnexCReader.openResponse(extra, for: req, issuerRoots: [world.iaca], at: TestWorld.now).documents[0]
                .elements.map(\.element.identifier) == ["family_name"])
        // Nothing approved: refused.
        expectRefusal(SelectionRule.nothingReleasable) {
            try engine.respond(to: parsed, approving: .elements([]))
        }
        // Consent summary.
        let shown = ConsentedRequest(documents: [
            TestWorld.mDL: [ElementID(TestWorld.mDLNS, "family_name"), ElementID(TestWorld.mDLNS, "birth_date")]
        ])
        expectRefusal(SelectionRule.requestNotShown) {
            try engine.respond(to: parsed, consented: shown)
        }
        var all = shown
        all.documents[TestWorld.mDL]!.insert(ElementID(TestWorld.mDLNS, "portrait"))
        _ = try engine.respond(to: parsed, consented: all)
    }

    @Test(
        "Credential selection never uses a cancelled, expired or not-yet-valid credential, and honours an explicit choice"
    )
    func selection() throws {
        let world = try TestWorld()
        let day: TimeInterval = 86400
        let entries = [
            try world.entry(id: "cancelled", cancelled: true),
            try world.entry(id: "expired", validFrom: TestWorld.now - 400 * day, validUntil: TestWorld.now - day),
            try world.entry(id: "future", validFrom: TestWorld.now + day, validUntil: TestWorld.now + 400 * day),
        ]
        let engine = world.engine(try world.context(entries))
        let req = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        #expect(
            try engine.parse(rawRequest: req.rawRequest, origin: "https://verifier.example").documents[0].candidates
                .isEmpty)
        expectRefusal(SelectionRule.noUsableCredential) {
            try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example")
        }
        let good1 = try world.entry(id: "a", elements: [.init("family_name", .text("A"))])
        let good2 = try world.entry(id: "b")
        let engine2 = world.engine(try world.context(entries + [good1, good2]))
        let parsed = try engine2.parse(rawRequest: req.rawRequest, origin: "https://verifier.example")
        #expect(parsed.documents[0].candidates.map(\.credentialID) == ["a", "b"])
        let viaB = try engine2.accept(rawRequest: req.rawRequest, origin: "https://verifier.example", credentialID: "b")
        let v = try AnnexCReader.openResponse(viaB, for: req, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(v.documents[0].elements[0].value.stringValue == "Mustermann")
        expectRefusal(SelectionRule.unknownCredentialID) {
            try engine2.accept(rawRequest: req.rawRequest, origin: "https://verifier.example", credentialID: "nope")
        }
    }

    @Test("alternativeDataElements (1.1): a missing element is replaced by a fully held alternative set")
    func alternatives() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let ns = TestWorld.mDLNS
        let doc = AnnexCReader.DocumentRequest(
            docType: TestWorld.mDL, elements: [.init(ElementID(ns, "age_over_16"), intentToRetain: false)],
            alternatives: [
                .init(ElementID(ns, "age_over_16"), [[ElementID(ns, "age_in_years")], [ElementID(ns, "birth_date")]])
            ])
        let req = try AnnexCReader.makeRequest(documents: [doc], origin: TestWorld.origin, version: .v1_1)
        let v = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"), for: req,
            issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(v.documents[0].elements.map(\.element.identifier) == ["birth_date"])
        // In a 1.0 request the same requestInfo is not honoured.
        let req0 = try AnnexCReader.makeRequest(documents: [doc], origin: TestWorld.origin, version: .v1_0)
        expectRefusal(SelectionRule.nothingReleasable) {
            try engine.accept(rawRequest: req0.rawRequest, origin: "https://verifier.example")
        }
    }

    @Test("maximumResponseSize is enforced; the self-check passes on good credentials")
    func limitsAndSelfCheck() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")])) { $0.selfCheck = true }
        let small = AnnexCReader.DocumentRequest(
            docType: TestWorld.mDL, elements: [.init(ElementID(TestWorld.mDLNS, "portrait"), intentToRetain: false)],
            maximumResponseSize: 4000)
        let req = try AnnexCReader.makeRequest(documents: [small], origin: TestWorld.origin, version: .v1_1)
        expectRefusal(ResponseRule.tooLarge) {
            try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example")
        }
        let big = AnnexCReader.DocumentRequest(
            docType: TestWorld.mDL, elements: [.init(ElementID(TestWorld.mDLNS, "portrait"), intentToRetain: false)],
            maximumResponseSize: 20000)
        let req2 = try AnnexCReader.makeRequest(documents: [big], origin: TestWorld.origin, version: .v1_1)
        _ = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: req2.rawRequest, origin: "https://verifier.example"), for: req2,
            issuerRoots: [world.iaca], at: TestWorld.now)
    }

    @Test("One engine serves concurrent accepts from several threads")
    func concurrency() async throws {
        let world = try TestWorld()
        let engine = world.engine(
            try world.context([try world.entry(id: "mdl"), try world.entry(id: "pid", docType: TestWorld.pid)]))
        let iaca = world.iaca
        try await withThrowingTaskGroup(of: Int.self) { group in
            for t in 0..<4 {
                group.addTask {
                    var n = 0
                    for i in 0..<25 {
                        let doc =
                            (t + i) % 2 == 0
                            ? TestWorld.ask(["family_name", "portrait"]) : TestWorld.ask(TestWorld.pid, ["age_over_18"])
                        let req = try AnnexCReader.makeRequest(
                            documents: [doc], origin: TestWorld.origin, framing: RequestFraming.allCases[i % 4])
                        let v = try AnnexCReader.openResponse(
                            try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"), for: req,
                            issuerRoots: [iaca], at: TestWorld.now)
                        if v.documents[0].docType == doc.docType { n += 1 }
                    }
                    return n
                }
            }
            var total = 0
            for try await n in group { total += n }
            #expect(total == 100)
        }
    }
}
