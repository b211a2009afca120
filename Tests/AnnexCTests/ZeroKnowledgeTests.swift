import AnnexCReader
import DigitalCredentials
import Foundation
import Longfellow
import MdocCBOR
import Testing
@testable import AnnexC
import TestSupport
import TestWorld

/// Zero-knowledge answers end to end (ISO/IEC 18013-7 Annex C with `requestInfo.zkRequest`): the one
/// decision (a proof when a held circuit matches, a plain presentation only by the holder's separate
/// approval when the reader accepts one, otherwise a refusal), the ZkDocument the verifier side opens
/// and checks with the Longfellow verifier, and what never leaves the device. Proofs are made by the
/// installed ISRG library (`scripts/zk-setup.sh`); without it these tests are skipped, and fail under
/// CI.
@Suite("Zero-knowledge answers: Longfellow proofs over Annex C", .serialized)
struct ZeroKnowledgeTests {
    static let av = "eu.europa.ec.av.1"
    static let installation = LongfellowInstallation.default
    static var runnable: Bool { installation.hasLibrary || Prerequisites.required }
    static let skipNote: Comment = "the Longfellow prover is not installed (scripts/zk-setup.sh)"
    /// The circuit zk-age-verifier holds (v7, one attribute).
    static let v7one = LongfellowCircuit.table.first { $0.version == 7 && $0.attributes == 1 }!

    /// A world with an age-verification credential (`eu.europa.ec.av.1`, `age_over_18`) and an mDL.
    static func fixture() throws -> (TestWorld, CredentialContext) {
        let world = try TestWorld()
        let context = try world.context(
            [
                try world.entry(id: "av", docType: av, nameSpace: av, elements: [.init("age_over_18", .bool(true))]),
                try world.entry(id: "mdl"),
            ], trust: world.trusted)
        return (world, context)
    }

    static func ask(
        _ docType: String = av, _ ns: String = av, _ names: [String] = ["age_over_18"], specs: [ZkSystemSpec]? = nil,
        required: Bool = true
    ) -> AnnexCReader.DocumentRequest {
        AnnexCReader.DocumentRequest(
            docType: docType, elements: names.map { .init(ElementID(ns, $0), intentToRetain: false) },
            zkRequest: .init(specs: specs ?? [v7one.spec], required: required))
    }

    static func engine(
        _ context: CredentialContext, prover: Bool = true, protocols: Set<PresentationProtocol> = [.annexC]
    ) -> DigitalCredentialsEngine {
        TestWorld.engine(context, protocols: protocols) {
            $0.zeroKnowledge = prover ? .longfellow(installation) : ZeroKnowledgeSettings()
        }
    }

    @Test(
        "An age request that requires a proof is answered with a ZkDocument the verifier side checks; nothing linkable leaves",
        .enabled(if: runnable, skipNote))
    func proofAnswersAgeRequest() throws {
        let (world, context) = try Self.fixture()
        let engine = Self.engine(context)
        let request = try AnnexCReader.makeRequest(documents: [Self.ask()], origin: TestWorld.origin)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        let offer = try #require(parsed.documents[0].zeroKnowledge)
        guard case .proof(let spec, let seconds) = offer.answer else {
            Issue.record("not answered with a proof: \(offer.answer)")
            return
        }
        #expect(spec == Self.v7one.spec && seconds > 0 && offer.required)
        #expect(parsed.documents[0].candidates.first?.credentialID == "av")
        let response = try engine.respond(to: parsed)
        let opened = try AnnexCReader.openResponse(
            response, for: request, issuerRoots: [world.iaca], at: TestWorld.now,
            zkVerifier: LongfellowVerifier(installation: Self.installation))
        try Self.spool(opened, for: request, iaca: world.iaca)
        #expect(opened.documents.count == 1)
        let doc = try #require(opened.documents.first)
        #expect(doc.proof == Self.v7one.spec && doc.validUntil == nil && doc.docType == Self.av)
        #expect(doc.elements.map(\.element) == [ElementID(Self.av, "age_over_18")])
        #expect(doc.elements.first?.value.boolValue == true)
        // What a proof keeps on the device: no plain document, no MSO, no issuer or device signature,
        // no device key, no digests or salts.
        let plaintext = try DeviceResponse(encoded: opened.deviceResponse)
        #expect(plaintext.documents.isEmpty && plaintext.zkDocuments.count == 1)
        let stored = try #require(context.credential(id: "av"))
        let mso = try stored.issuerSigned.issuerAuth
        let leaks: [(String, [UInt8])] = [
            ("issuer signature", Array(mso.signature)), ("device key x", try stored.mobileSecurityObject.deviceKey.x),
            ("MSO", Array(try stored.issuerSigned.issuerAuth.payload ?? [])),
        ]
        for (what, bytes) in leaks where !bytes.isEmpty {
            #expect(!Self.contains(opened.deviceResponse, bytes), "\(what) left the device")
        }
        for item in try stored.issuerSigned.nameSpaces.flatMap(\.items) {
            #expect(!Self.contains(opened.deviceResponse, Array(item.random)), "an item salt left the device")
        }
    }

    /// Writes every ZkDocument of an opened answer to `$MDOC_ZK_SPOOL` (when set), with what a verifier
    /// needs, for the other Longfellow implementation to verify (Tests/interop/zk_peer.py --spool).
    static func spool(
        _ opened: AnnexCReader.VerifiedResponse, for request: AnnexCReader.BuiltRequest, iaca: Certificate
    )
        throws
    {
        guard let dir = ProcessInfo.processInfo.environment["MDOC_ZK_SPOOL"], !dir.isEmpty else { return }
        let response = try DeviceResponse(encoded: opened.deviceResponse)
        guard let items = response.item["zkDocuments"]?.children else { return }
        let transcript = AnnexCSessionTranscript(encryptionInfo: request.encryptionInfo, origin: request.origin).bytes
        for (zk, item) in zip(response.zkDocuments, items) {
            guard
                let spec = request.documents.compactMap({ $0.zkRequest }).flatMap(\.specs).first(where: {
                    $0.id == zk.zkSystemID
                })
            else { continue }
            let record: [String: Any] = [
                "zkDocument": hexString(item.encodedBytes), "transcript": hexString(transcript),
                "claims": zk.claims.map { [$0.nameSpace, $0.identifier, hexString($0.value.encodedBytes)] },
                "iaca": hexString(iaca.der), "zkSystemId": zk.zkSystemID, "docType": zk.docType,
                "circuitHash": spec.circuitHash ?? "", "at": MdocDate.formatDateTime(TestWorld.now),
            ]
            let url = URL(fileURLWithPath: dir).appendingPathComponent("\(UUID().uuidString).json")
            try JSONSerialization.data(withJSONObject: record).write(to: url)
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count, !needle.isEmpty else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
