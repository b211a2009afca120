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

/// `accept` (the best match per DocRequest) against `respond(to: parse(…))` (the consent model), and the
/// consent path's summaries and narrowed approvals against independently computed expectations.
extension EndToEndTests {
    /// The DeviceResponse with every device signature zeroed (ECDSA signatures differ run to run).
    static func unsigned(_ plaintext: [UInt8]) throws -> [UInt8] {
        var out = plaintext
        for doc in try DeviceResponse(encoded: plaintext).documents {
            guard case .signature(let sig) = doc.deviceSigned.deviceAuth else { continue }
            let s = Array(sig.signature)
            guard let at = (0...(out.count - s.count)).first(where: { out[$0..<($0 + s.count)].elementsEqual(s) })
            else { continue }
            out.replaceSubrange(at..<(at + s.count), with: [UInt8](repeating: 0, count: s.count))
        }
        return out
    }

    @Test(
        "A credential holding two namespaces answers from both: each keyed once in issuerSigned.nameSpaces with its items, the response deterministically encoded and verified by the reader"
    )
    func twoNameSpaces() throws {
        let world = try TestWorld()
        let aamva = "org.iso.18013.5.1.aamva"
        let context = try world.context(
            [
                try world.entry(
                    id: "a", moreNameSpaces: [(aamva, [.init("DHS_compliance", .text("F")), .init("sex", .int(1))])])
            ], trust: world.trusted)
        let engine = world.engine(context)
        let asked = [
            ElementID(TestWorld.mDLNS, "family_name"), ElementID(aamva, "sex"), ElementID(aamva, "DHS_compliance"),
            ElementID(TestWorld.mDLNS, "age_over_21"),
        ]
        let request = try AnnexCReader.makeRequest(
            documents: [.init(docType: TestWorld.mDL, elements: asked.map { .init($0, intentToRetain: false) })],
            origin: TestWorld.origin)
        let answer = try engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        let opened = try AnnexCReader.openResponse(
            answer, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(Set(opened.documents.flatMap { $0.elements.map(\.element) }) == Set(asked))
        let bytes = opened.deviceResponse
        #expect(try CBORValue(CBORDocument(decoding: bytes).root).encoded() == bytes)
        let nameSpaces = try DeviceResponse(encoded: bytes).documents[0].issuerSigned.nameSpaces
        #expect(nameSpaces.map(\.name) == [TestWorld.mDLNS, aamva])
    }

    @Test(
        "accept and respond(to: parse(…)) answer alike (documents, items, errors, refusals, alternatives); consent summaries and narrowed approvals release exactly what is computed"
    )
    func directPlanMatchesTwoPhases() throws {
        let world = try TestWorld()
        let day: TimeInterval = 86400
        let ns = TestWorld.mDLNS
        let context = try world.context(
            [
                try world.entry(id: "cancelled", cancelled: true),
                try world.entry(id: "expired", validFrom: TestWorld.now - 400 * day, validUntil: TestWorld.now - day),
                try world.entry(
                    id: "a", elements: [.init("family_name", .text("A")), .init("age_in_years", .int(40))]),
                try world.entry(id: "b"),
                try world.entry(id: "pid", docType: TestWorld.pid),
                try world.entry(id: "b2"),
            ], trust: world.trusted)
        let photo = TestWorld.ask("org.iso.23220.photoid.1", ["family_name"], nameSpace: "org.iso.23220.1")
        let docs = [
            TestWorld.ask(["family_name", "age_over_21"]),
            TestWorld.ask(TestWorld.pid, ["nationality", "age_over_18"]),
        ]
        let alt = AnnexCReader.DocumentRequest(
            docType: TestWorld.mDL,
            elements: [
                .init(ElementID(ns, "age_over_16"), intentToRetain: false),
                .init(ElementID(ns, "family_name"), intentToRetain: true),
            ],
            alternatives: [
                .init(
                    ElementID(ns, "age_over_16"),
                    [
                        [ElementID(ns, "age_over_99")], [ElementID(ns, "age_in_years")],
                        [ElementID(ns, "birth_date")],
                    ])
            ])
        let overlapping = AnnexCReader.DocumentRequest(
            docType: TestWorld.mDL,
            elements: ["age_over_16", "age_over_17", "age_over_19", "age_over_20", "birth_date"].map {
                .init(ElementID(ns, $0), intentToRetain: false)
            },
            alternatives: [
                .init(ElementID(ns, "age_over_16"), [[ElementID(ns, "birth_date"), ElementID(ns, "issue_date")]]),
                .init(
                    ElementID(ns, "age_over_17"),
                    [[ElementID("org.iso.18013.5.1.aamva", "DHS_compliance")], [ElementID(ns, "age_in_years")]]),
                .init(
                    ElementID(ns, "age_over_19"),
                    [
                        (0..<9).map { ElementID(ns, "e\($0)") },
                        [ElementID(ns, "issue_date"), ElementID(ns, "expiry_date")],
                    ]),
                .init(ElementID(ns, "age_over_99"), [[ElementID(ns, "portrait")]]),
            ])
        var requests: [AnnexCReader.BuiltRequest] = [
            try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin),
            try AnnexCReader.makeRequest(
                documents: [TestWorld.ask(["family_name", "birth_date", "portrait", "resident_address"])],
                origin: TestWorld.origin),
            try AnnexCReader.makeRequest(documents: [TestWorld.ask(["age_in_years"])], origin: TestWorld.origin),
            try AnnexCReader.makeRequest(documents: [TestWorld.ask(["resident_address"])], origin: TestWorld.origin),
            try AnnexCReader.makeRequest(documents: docs, origin: TestWorld.origin, version: .v1_0),
            try AnnexCReader.makeRequest(documents: docs + [photo], origin: TestWorld.origin, version: .v1_0),
            try AnnexCReader.makeRequest(
                documents: docs + [photo], origin: TestWorld.origin, version: .v1_1,
                useCases: [
                    .init(mandatory: true, documentSets: [[2], [0]]), .init(mandatory: false, documentSets: [[1, 2]]),
                ]),
            try AnnexCReader.makeRequest(
                documents: docs + [photo], origin: TestWorld.origin, version: .v1_1,
                useCases: [.init(mandatory: false, documentSets: [[2]]), .init(mandatory: false, documentSets: [[1]])]),
            try AnnexCReader.makeRequest(
                documents: docs + [photo], origin: TestWorld.origin, version: .v1_1,
                useCases: [.init(mandatory: true, documentSets: [[2]])]),
            try AnnexCReader.makeRequest(documents: [alt], origin: TestWorld.origin, version: .v1_1),
            try AnnexCReader.makeRequest(documents: [alt], origin: TestWorld.origin, version: .v1_0),
            try AnnexCReader.makeRequest(documents: [photo], origin: TestWorld.origin),
            // Alternatives that overlap requested elements and each other, a two-element set, and sets
            // the engine must ignore (outside the namespace, too large, for an element not requested).
            try AnnexCReader.makeRequest(documents: [overlapping], origin: TestWorld.origin, version: .v1_1),
            try AnnexCReader.makeRequest(
                documents: [overlapping, TestWorld.ask(TestWorld.pid, ["age_over_18"])], origin: TestWorld.origin,
                version: .v1_1,
                useCases: [.init(mandatory: true, documentSets: [[0, 1]])]),
            // The same docType asked twice, each answered by its own best credential.
            try AnnexCReader.makeRequest(
                documents: [TestWorld.ask(["family_name"]), TestWorld.ask(["age_in_years", "portrait"])],
                origin: TestWorld.origin),
            // maximumResponseSize: one too small for the portrait, one ample.
            try AnnexCReader.makeRequest(
                documents: [
                    .init(
                        docType: TestWorld.mDL, elements: [.init(ElementID(ns, "portrait"))], maximumResponseSize: 4000)
                ],
                origin: TestWorld.origin, version: .v1_1),
            try AnnexCReader.makeRequest(
                documents: [
                    .init(
                        docType: TestWorld.mDL,
                        elements: [.init(ElementID(ns, "portrait")), .init(ElementID(ns, "family_name"))],
                        maximumResponseSize: 60000)
                ], origin: TestWorld.origin, version: .v1_1),
        ]
        // Every framing, signed per document, signed with readerAuthAll, and by a reader the holder does
        // not trust (answered with its verdict).
        let otherKey = try SoftwareSigner.generate()
        let selfSigned = try Certificate.issue(
            subject: .init(commonName: "Unanchored Reader"), publicKey: otherKey.publicKey, issuer: nil,
            issuerKey: otherKey,
            serial: 3, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerAuthentication
        )
        for framing in RequestFraming.allCases {
            requests.append(
                try AnnexCReader.makeRequest(
                    documents: [TestWorld.ask(["family_name", "age_over_21"])], origin: TestWorld.origin,
                    framing: framing,
                    signing: world.perDocumentSigning))
            requests.append(
                try AnnexCReader.makeRequest(
                    documents: docs, origin: TestWorld.origin, framing: framing, signing: world.allSigning,
                    version: .v1_1))
            requests.append(
                try AnnexCReader.makeRequest(
                    documents: [alt], origin: TestWorld.origin, framing: framing,
                    signing: .perDocument(signer: otherKey, chain: [selfSigned]), version: .v1_1))
        }
        let key = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
        var compared = 0
        var refusals = 0
        var narrowedApprovals = 0
        for policy in [MissingElementPolicy.omit, .report] {
            let engine = world.engine(context) {
                $0.annexC.missingElements = policy
                $0.annexC.ephemeralKeySource = { key }
            }
            for (r, request) in requests.enumerated() {
                for id in [nil, "a", "b", "pid", "expired", "nope"] as [String?] {
                    let label = "request \(r), credential \(id ?? "any"), \(policy)"
                    let direct = Result { () throws(PresentmentError) in
                        try engine.accept(
                            rawRequest: request.rawRequest, origin: "https://verifier.example", credentialID: id)
                    }
                    // The two-phase reference, as accept used to run it.
                    let reference = Result { () throws(PresentmentError) -> Data in
                        let parsed = try engine.parse(
                            rawRequest: request.rawRequest, origin: "https://verifier.example")
                        var using = [Int: String]()
                        if let id {
                            guard engine.context.credential(id: id) != nil else {
                                throw PresentmentError(SelectionRule.unknownCredentialID)
                            }
                            for d in parsed.documents { using[d.index] = id }
                        }
                        return try engine.respond(to: parsed, using: using)
                    }
                    switch (direct, reference) {
                    case (.success(let a), .success(let b)):
                        let pa = try AnnexCReader.openResponse(
                            a, for: request, issuerRoots: [world.iaca], at: TestWorld.now
                        ).deviceResponse
                        let pb = try AnnexCReader.openResponse(
                            b, for: request, issuerRoots: [world.iaca], at: TestWorld.now
                        ).deviceResponse
                        #expect(try Self.unsigned(pa) == Self.unsigned(pb), "\(label)")
                        // Deterministically encoded (keys in bytewise order, shortest heads, definite
                        // lengths): re-encoding the decoded response reproduces it byte for byte.
                        #expect(try CBORValue(CBORDocument(decoding: pa).root).encoded() == pa, "\(label)")
                        compared += 1
                        // The consent path with the model's own summary answers the same; with one element
                        // of a substitution withheld, exactly that whole substitution disappears.
                        let parsed = try engine.parse(
                            rawRequest: request.rawRequest, origin: "https://verifier.example")
                        var using = [Int: String]()
                        if let id { for d in parsed.documents { using[d.index] = id } }
                        let summary = parsed.consentSummary(using: using)
                        let viaSummary = try engine.respond(to: parsed, using: using, consented: summary)
                        let pc = try AnnexCReader.openResponse(
                            viaSummary, for: request, issuerRoots: [world.iaca], at: TestWorld.now
                        ).deviceResponse
                        #expect(try Self.unsigned(pa) == Self.unsigned(pc), "\(label): consented summary")
                        for d in parsed.documents {
                            let byID = using[d.index].flatMap { id in d.candidates.first { $0.credentialID == id } }
                            guard let chosen = byID ?? d.candidates.first else { continue }
                            let direct = Set(chosen.releasable)
                            for sub in chosen.substitutions {
                                guard let withheld = sub.replacement.first(where: { !direct.contains($0) }) else {
                                    continue
                                }
                                var approved = [Int: Set<ElementID>]()
                                for other in parsed.documents {
                                    let c =
                                        using[other.index].flatMap { id in
                                            other.candidates.first { $0.credentialID == id }
                                        } ?? other.candidates.first
                                    approved[other.index] = Set(c?.shownElements ?? [])
                                }
                                approved[d.index]!.remove(withheld)
                                // Expected, computed here: everything shown but the withheld element's whole set
                                // (elements of that set also held directly or in another substitution stay).
                                var expected = direct
                                for other in chosen.substitutions
                                where other != sub && other.replacement.allSatisfy({ approved[d.index]!.contains($0) })
                                {
                                    expected.formUnion(other.replacement)
                                }
                                if expected.isEmpty && approved[d.index]!.isEmpty {
                                    // Document-level consent (`[i: []]`): presented with no element.
                                    let bare = try engine.respond(
                                        to: parsed, using: using, approving: .perDocument(approved), consented: summary)
                                    let v = try AnnexCReader.openResponse(
                                        bare, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
                                    let doc = v.documents.first { $0.docType == d.docType }
                                    #expect(doc != nil && doc!.elements.isEmpty, "\(label): document-level consent")
                                    var absent = approved
                                    absent[d.index] = nil
                                    if parsed.documents.count == 1 {
                                        #expect(throws: PresentmentError.self, "\(label): document not approved") {
                                            try engine.respond(
                                                to: parsed, using: using, approving: .perDocument(absent),
                                                consented: summary)
                                        }
                                    }
                                    narrowedApprovals += 1
                                    continue
                                }
                                if expected.isEmpty {
                                    #expect(
                                        throws: PresentmentError.self,
                                        "\(label): withholding \(withheld) leaves nothing"
                                    ) {
                                        try engine.respond(
                                            to: parsed, using: using, approving: .perDocument(approved),
                                            consented: summary)
                                    }
                                    narrowedApprovals += 1
                                    continue
                                }
                                let narrowed = try engine.respond(
                                    to: parsed, using: using, approving: .perDocument(approved), consented: summary)
                                var heldByType = [String: Set<ElementID>]()
                                var approvedByType = [String: Set<ElementID>]()
                                for other in parsed.documents {
                                    let c =
                                        using[other.index].flatMap { id in
                                            other.candidates.first { $0.credentialID == id }
                                        } ?? other.candidates.first
                                    heldByType[other.docType] = Set(
                                        try c.map { try engine.context.credential(id: $0.credentialID)!.elements } ?? []
                                    )
                                    approvedByType[other.docType] = approved[other.index]
                                }
                                let consent = AnnexCReader.HolderConsent(held: heldByType, approved: approvedByType)
                                let v = try AnnexCReader.openResponse(
                                    narrowed, for: request, issuerRoots: [world.iaca], at: TestWorld.now,
                                    consent: consent)
                                let got = Set(
                                    v.documents.first { $0.docType == d.docType }?.elements.map(\.element) ?? [])
                                #expect(got == expected, "\(label): withholding \(withheld)")
                                narrowedApprovals += 1
                            }
                        }
                    case (.failure(let a), .failure(let b)):
                        #expect(a == b, "\(label)")
                        refusals += 1
                    default:
                        Issue.record("\(label): accept \(direct) but respond(to: parse) \(reference)")
                    }
                }
            }
        }
        // The scenarios exercise both outcomes.
        #expect(
            compared >= 100 && refusals >= 60 && narrowedApprovals >= 10,
            "compared \(compared), refusals \(refusals), narrowed \(narrowedApprovals)")
        print(
            "accept vs respond(to: parse): \(requests.count) requests × 6 credential choices × 2 policies: \(compared) answers compared, \(refusals) refusals compared, "
                + "\(narrowedApprovals) narrowed approvals checked")
    }
}
