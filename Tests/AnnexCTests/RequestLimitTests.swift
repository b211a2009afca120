import DigitalCredentials
import Foundation
import WebEncoding
import Testing
import TestSupport
import TestWorld
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import HPKE
import MdocCBOR

/// The planner's index sort, and the request limits.
extension RequestRuleTests {
    @Test("The planner's index sort matches the standard sort at every size, in order, reversed and shuffled")
    func indexSort() {
        var rng = SystemRandomNumberGenerator()
        for n in 0...40 {
            for input in [
                Array(0..<n), Array((0..<n).reversed()), (0..<n).map { _ in Int.random(in: 0..<8, using: &rng) },
                Array(0..<n).shuffled(using: &rng),
            ] {
                var a = input
                Planner.sortIndices(&a)
                #expect(a == input.sorted(), "n = \(n)")
            }
        }
    }

    @Test("Limits: request size, DocRequest count, element count (alternatives included)")
    func limits() throws {
        let engine = TestWorld.engine(
            try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:])), protocols: [.annexC]
        ) { $0.limits = RequestLimits(maxRequestBytes: 4096, maxDocuments: 2, maxRequestedElements: 10) }
        let huge = Data(
            ("{\"deviceRequest\":\"" + String(repeating: "A", count: 5000) + "\",\"encryptionInfo\":\"\(Self.ei)\"}")
                .utf8)
        expectRefusal(FramingRule.tooLarge) {
            try engine.parse(rawRequest: huge, origin: "https://v.example")
        }
        let elements = (0..<11).map { AnnexCReader.ElementRequest(ElementID("ns", "e\($0)")) }
        let many = try AnnexCReader.makeRequest(
            documents: [.init(docType: "d", elements: elements)], origin: try Origin("https://v.example"))
        expectRefusal(AnnexCRule.tooManyElements) {
            try engine.parse(rawRequest: many.rawRequest, origin: "https://v.example")
        }
        // Alternatives count against the same limit: 2 requested + 1 entry naming 2 sets of 4 = 11 references.
        let alts = (0..<2).map { k in (0..<4).map { ElementID("ns", "a\(k)\($0)") } }
        let substituted = try AnnexCReader.makeRequest(
            documents: [
                .init(
                    docType: "d",
                    elements: [
                        .init(ElementID("ns", "x"), intentToRetain: false),
                        .init(ElementID("ns", "y"), intentToRetain: false),
                    ],
                    alternatives: [.init(ElementID("ns", "x"), alts)])
            ], origin: try Origin("https://v.example"), version: .v1_1)
        expectRefusal(AnnexCRule.tooManyElements) {
            try engine.parse(rawRequest: substituted.rawRequest, origin: "https://v.example")
        }
        let fewer = try AnnexCReader.makeRequest(
            documents: [
                .init(
                    docType: "d", elements: [.init(ElementID("ns", "x"), intentToRetain: false)],
                    alternatives: [.init(ElementID("ns", "x"), [alts[0]])])
            ],
            origin: try Origin("https://v.example"), version: .v1_1)
        #expect(
            try engine.parse(rawRequest: fewer.rawRequest, origin: "https://v.example").documents[0].alternatives.count
                == 1)
        let docs = try AnnexCReader.makeRequest(
            documents: Array(
                repeating: .init(docType: "d", elements: [.init(ElementID("ns", "e"), intentToRetain: false)]), count: 3
            ), origin: try Origin("https://v.example"))
        expectRefusal(AnnexCRule.tooManyDocRequests) {
            try engine.parse(rawRequest: docs.rawRequest, origin: "https://v.example")
        }
    }
}
