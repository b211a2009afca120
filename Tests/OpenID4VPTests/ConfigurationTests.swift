import AnnexCReader
import Foundation
import MdocCBOR
import OpenID4VPReader
import Testing
import TestWorld
import WebEncoding
import Presentment

@testable import DigitalCredentials

/// The one configuration: the JSON the C ABI, Python and the CLI's `--config` read (each member onto one
/// field), its refusals by rule and member, and what the facade-level members do (which protocols
/// answer, how selection refusals are disclosed).
@Suite("Configuration: one value, one JSON reader, protocols and error disclosure")
struct ConfigurationTests {
    static func document(_ json: String) throws(ConfigurationError) -> ConfigurationDocument {
        try ConfigurationDocument(json: Array(json.utf8))
    }

    @Test("Each JSON member maps onto one field of the configuration")
    func membersMapOneToOne() throws {
        let d = try Self.document(
            #"""
            {"testing":true,"clock":"2030-01-02T03:04:05Z","protocol":"openID4VP","protocols":["openID4VP","annexC"],
             "missingElements":"report","selfCheck":true,"allowAppOrigins":true,"preferA256GCM":false,
             "errorDisclosure":"uniform",
             "limits":{"maxRequestBytes":1000,"maxDocuments":3,"maxRequestedElements":40,"maxAlternativeSetSize":5,
                       "maxNestingDepth":7,"maxDataItems":900},
             "keyDirectory":"/keys","pkcs11ModuleDirectories":["/m1","/m2"]}
            """#)
        let c = d.configuration
        #expect(c.clock() == Date(timeIntervalSince1970: 1_893_553_445))
        #expect(c.preference == .openID4VP && c.protocols == [.annexC, .openID4VP])
        #expect(c.annexC.missingElements == .report && c.selfCheck && c.allowAppOrigins)
        #expect(!c.openID4VP.preferA256GCM && c.errorDisclosure == .uniform)
        #expect(c.limits == RequestLimits(maxRequestBytes: 1000, maxDocuments: 3, maxRequestedElements: 40))
        #expect(c.annexC.maxAlternativeSetSize == 5 && c.annexC.maxNestingDepth == 7 && c.annexC.maxDataItems == 900)
        #expect(d.keyDirectory == "/keys" && d.moduleDirectories == ["/m1", "/m2"])
        // The limit's earlier names (one per protocol before the limits were one) set the same field.
        for alias in ["maxDocRequests", "maxCredentialQueries", "maxDocuments"] {
            #expect(try Self.document(#"{"limits":{"\#(alias)":2}}"#).configuration.limits.maxDocuments == 2)
        }
        // Every protocol preference names an enabled protocol to consider first (the order's one rule).
        for p in DigitalCredentialsEngine.Preference.allCases {
            #expect((p.preferred == nil) == (p == .answerable), "\(p)")
        }
        // zeroKnowledge: off, or a directory (here without a library: no prover) with its limits.
        #expect(try Self.document(#"{"zeroKnowledge":{"enabled":false}}"#).configuration.zeroKnowledge.prover == nil)
        let zk = try Self.document(
            #"{"zeroKnowledge":{"directory":"/nonexistent/zk","maxProofsPerResponse":2,"maxConcurrentProofs":2,"proofTimeLimit":30}}"#
        )
        #expect(zk.zkDirectory == "/nonexistent/zk" && zk.zkMaxConcurrentProofs == 2 && zk.zkTimeLimit == 30)
        #expect(
            zk.configuration.zeroKnowledge.prover == nil && zk.configuration.zeroKnowledge.maxProofsPerResponse == 2)
        // Nothing given: the defaults.
        let defaults = try ConfigurationDocument(json: nil).configuration
        #expect(defaults.protocols == Set(PresentationProtocol.allCases) && defaults.preference == .answerable)
        #expect(defaults.errorDisclosure == .exact && defaults.limits == RequestLimits())
    }

    @Test("A bad member is refused by its rule and its fixed name, never the input's text")
    func refusalsByRule() {
        let cases: [(String, ConfigurationError.Rule, String)] = [
            ("not json", .notJSON, "configuration"),
            ("[]", .notObject, "configuration"),
            (#"{"clokc":"2026-06-01T00:00:00Z"}"#, .unknownMember, "clokc"),
            (#"{"a b\u0007":1}"#, .unknownMember, "(a member whose name is not a plain identifier)"),
            (#"{"clock":"yesterday"}"#, .notDate, "clock"),
            (#"{"clock":1}"#, .notDate, "clock"),
            (#"{"clock":"2030-01-02T03:04:05Z"}"#, .testingOnly, "clock"),
            (#"{"clock":"2030-01-02T03:04:05Z","testing":false}"#, .testingOnly, "clock"),
            (#"{"testing":1}"#, .notBoolean, "testing"),
            (#"{"protocol":"smtp"}"#, .notOneOf, "protocol"),
            (#"{"protocols":[]}"#, .notList, "protocols"),
            (#"{"protocols":"annexC"}"#, .notList, "protocols"),
            (#"{"protocols":["annexC","smtp"]}"#, .notOneOf, "protocols"),
            (#"{"errorDisclosure":"vague"}"#, .notOneOf, "errorDisclosure"),
            (#"{"missingElements":"drop"}"#, .notOneOf, "missingElements"),
            (#"{"selfCheck":"yes"}"#, .notBoolean, "selfCheck"),
            (#"{"limits":[]}"#, .notObject, "limits"),
            (#"{"limits":{"maxRequestBytes":0}}"#, .outOfRange, "limits.maxRequestBytes"),
            (#"{"limits":{"maxDocRequests":1.5}}"#, .outOfRange, "limits.maxDocRequests"),
            (#"{"limits":{"maxDocuments":1073741825}}"#, .outOfRange, "limits.maxDocuments"),
            (#"{"limits":{"bogus":1}}"#, .unknownMember, "limits.bogus"),
            (#"{"trust":1}"#, .notObject, "trust"),
            (#"{"trust":{"anchors":"AAAA"}}"#, .notList, "trust.anchors"),
            (#"{"trust":{"anchors":["!!"]}}"#, .notCertificate, "trust.anchors"),
            (#"{"trust":{"anchors":["AAAA"]}}"#, .notCertificate, "trust.anchors"),
            (#"{"trust":{"authorities":["xyz"]}}"#, .notKeyIdentifier, "trust.authorities"),
            (#"{"trust":{"authorities":[]}}"#, .emptyAllowList, "trust.authorities"),
            (#"{"trust":{"signerProfile":"anyone"}}"#, .notOneOf, "trust.signerProfile"),
            (#"{"trust":{"replacePolicy":1}}"#, .notBoolean, "trust.replacePolicy"),
            (#"{"trust":{"bogus":true}}"#, .unknownMember, "trust.bogus"),
            (#"{"keyDirectory":""}"#, .notPath, "keyDirectory"),
            (#"{"pkcs11ModuleDirectories":["relative"]}"#, .notPath, "pkcs11ModuleDirectories"),
            (#"{"zeroKnowledge":[]}"#, .notObject, "zeroKnowledge"),
            (#"{"zeroKnowledge":{"directory":"relative"}}"#, .notPath, "zeroKnowledge.directory"),
            (#"{"zeroKnowledge":{"enabled":"yes"}}"#, .notBoolean, "zeroKnowledge.enabled"),
            (#"{"zeroKnowledge":{"maxConcurrentProofs":0}}"#, .outOfRange, "zeroKnowledge.maxConcurrentProofs"),
            (#"{"zeroKnowledge":{"maxProofsPerResponse":17}}"#, .outOfRange, "zeroKnowledge.maxProofsPerResponse"),
            (#"{"zeroKnowledge":{"proofTimeLimit":0}}"#, .outOfRange, "zeroKnowledge.proofTimeLimit"),
            (#"{"zeroKnowledge":{"bogus":1}}"#, .unknownMember, "zeroKnowledge.bogus"),
        ]
        for (json, rule, member) in cases {
            do {
                _ = try Self.document(json)
                Issue.record("accepted \(json)")
            } catch {
                #expect(error.rule == rule && error.member == member, "\(json)")
                #expect(error.detail.hasPrefix("configuration.\(rule.rawValue): "), "\(json)")
                // The operator's own unknown member is named (a typo to fix); a value never is.
                #expect(!error.detail.contains("smtp") && !error.detail.contains("\u{07}"), "\(json)")
                if rule == .unknownMember { #expect(error.detail.contains(member), "\(json)") }
            }
        }
        // Every rule is exercised by the table but the one that needs a context (widensPolicy, below) and
        // the one an entry point applies (notApplicable: the C ABI's and the CLI's tests).
        let covered = Set(cases.map(\.1)).union([.widensPolicy, .notApplicable])
        #expect(covered == Set(ConfigurationError.Rule.allCases))
    }

    @Test("Trust members narrow the stored policy; a widening one is refused unless replacePolicy")
    func trustNarrowsOnly() throws {
        let world = try TestWorld()
        let other = try TestWorld()
        let stored = ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireReaderAuthentication: true)
        let context = try world.context([try world.entry(id: "mdl")], trust: stored)
        func anchors(_ certs: [Certificate]) -> String {
            "[" + certs.map { "\"" + Data($0.der).base64EncodedString() + "\"" }.joined(separator: ",") + "]"
        }
        let widening: [(String, String)] = [
            (#"{"trust":{"anchors":\#(anchors([other.readerRoot]))}}"#, "trust.anchors"),
            (#"{"trust":{"requireReaderAuthentication":false}}"#, "trust.requireReaderAuthentication"),
            (#"{"trust":{"signerProfile":"requestSigner"}}"#, "trust.signerProfile"),
        ]
        for (json, member) in widening {
            do {
                _ = try Self.document(json).configuration(over: context)
                Issue.record("widened by \(member)")
            } catch { #expect(error.rule == .widensPolicy && error.member == member) }
        }
        // Narrowing passes and applies; the stored requirement is kept.
        let narrowed = try Self.document(#"{"trust":{"requireTrustedReader":true}}"#).configuration(over: context)
        let inForce = try narrowed.readerTrustInForce(over: context)
        #expect(inForce?.requireTrustedReader == true)
        #expect(inForce?.requireReaderAuthentication == true)
        #expect(inForce?.trustAnchors.map(\.der) == [world.readerRoot.der])
        // replacePolicy lets the members replace it.
        let replaced = try Self.document(
            #"{"trust":{"anchors":\#(anchors([other.readerRoot])),"requireReaderAuthentication":false,"replacePolicy":true}}"#
        ).configuration(over: context)
        #expect(try replaced.readerTrustInForce(over: context)?.trustAnchors.map(\.der) == [other.readerRoot.der])
        #expect(try replaced.readerTrustInForce(over: context)?.requireReaderAuthentication == false)
        // No trust member: the engine reads the context's policy.
        #expect(try Self.document("{}").configuration(over: context).readerTrustInForce(over: context) == nil)
    }

    /// An Annex C request and an OpenID4VP request for the mDL's family name.
    static func requests(docType: String = TestWorld.mDL) throws -> (annexC: Data, openID4VP: Data) {
        let a = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(docType, ["family_name"], nameSpace: TestWorld.mDLNS)], origin: TestWorld.origin)
        let o = try OpenID4VPReader.makeRequest(
            queries: [.init(id: "q", docType: docType, claims: [.init(ElementID(TestWorld.mDLNS, "family_name"))])],
            origin: TestWorld.origin)
        return (a.rawRequest, o.rawRequest)
    }

    @Test("protocols: only the enabled front ends answer; an entry of another protocol is no entry")
    func protocolsEnable() throws {
        let world = try TestWorld()
        let context = try world.context([try world.entry(id: "mdl")], trust: world.trusted)
        let (annexC, openID4VP) = try Self.requests()
        let origin = TestWorld.origin.serialized
        let onlyAnnexC = TestWorld.engine(context, protocols: [.annexC])
        let onlyOpenID4VP = TestWorld.engine(context, protocols: [.openID4VP])
        let both = TestWorld.engine(context)
        #expect(!(try onlyAnnexC.accept(rawRequest: annexC, origin: origin)).isEmpty)
        expectRefusal(FramingRule.noEntry) { try onlyAnnexC.accept(rawRequest: openID4VP, origin: origin) }
        expectRefusal(FramingRule.noEntry) { try onlyAnnexC.parse(rawRequest: openID4VP, origin: origin) }
        #expect(!(try onlyOpenID4VP.accept(rawRequest: openID4VP, origin: origin)).isEmpty)
        expectRefusal(FramingRule.noEntry) { try onlyOpenID4VP.accept(rawRequest: annexC, origin: origin) }
        #expect(try both.parse(rawRequest: annexC, origin: origin).protocolIdentifier == "org-iso-mdoc")
        #expect(try both.parse(rawRequest: openID4VP, origin: origin).protocolIdentifier == "openid4vp-v1-unsigned")
        // From JSON, the same.
        var fromJSON = try Self.document(#"{"protocols":["openID4VP"]}"#).configuration(over: context)
        fromJSON.clock = { TestWorld.now }
        let engine = DigitalCredentialsEngine(context: context, configuration: fromJSON)
        expectRefusal(FramingRule.noEntry) { try engine.accept(rawRequest: annexC, origin: origin) }
    }

    @Test(
        "errorDisclosure uniform: every selection refusal is one rule (notAnswered) in both protocols, at accept and respond; other refusals unchanged"
    )
    func uniformDisclosure() throws {
        let world = try TestWorld()
        let context = try world.context([try world.entry(id: "mdl")], trust: world.trusted)
        let origin = TestWorld.origin.serialized
        let exact = TestWorld.engine(context)
        let uniform = TestWorld.engine(context) { $0.errorDisclosure = .uniform }
        let notHeld = try Self.requests(docType: "org.iso.23220.photoid.1")
        let held = try Self.requests()
        for raw in [notHeld.annexC, notHeld.openID4VP] {
            // Exact: the page could tell "no such credential" from "declined".
            expectRefusal(SelectionRule.noUsableCredential) { try exact.accept(rawRequest: raw, origin: origin) }
            expectRefusal(SelectionRule.notAnswered) { try uniform.accept(rawRequest: raw, origin: origin) }
            let parsed = try uniform.parse(rawRequest: raw, origin: origin)
            expectRefusal(SelectionRule.notAnswered) { try uniform.respond(to: parsed) }
        }
        for raw in [held.annexC, held.openID4VP] {
            // A decline (nothing approved) reads the same as a credential not held.
            let declined = try exact.parse(rawRequest: raw, origin: origin)
            expectRefusal(SelectionRule.nothingReleasable) { try exact.respond(to: declined, approving: .elements([])) }
            let declinedUniform = try uniform.parse(rawRequest: raw, origin: origin)
            expectRefusal(SelectionRule.notAnswered) {
                try uniform.respond(to: declinedUniform, approving: .elements([]))
            }
            // Refusals that are not about the holder's credentials keep their rule.
            expectRefusal(OriginRule.scheme) { try uniform.accept(rawRequest: raw, origin: "ftp://verifier.example") }
            #expect(!(try uniform.accept(rawRequest: raw, origin: origin)).isEmpty)
        }
        // Set from JSON, the same.
        var fromJSON = try Self.document(#"{"errorDisclosure":"uniform"}"#).configuration(over: context)
        fromJSON.clock = { TestWorld.now }
        let engine = DigitalCredentialsEngine(context: context, configuration: fromJSON)
        expectRefusal(SelectionRule.notAnswered) { try engine.accept(rawRequest: notHeld.annexC, origin: origin) }
    }

    @Test("The consent model shows the engine's time when it is fixed for testing or far from the system's")
    func fixedClockIsShown() throws {
        let world = try TestWorld()
        let context = try world.context([try world.entry(id: "mdl")], trust: world.trusted)
        let request = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        let origin = TestWorld.origin.serialized
        // TestWorld's clock is a fixed date months away from the system's.
        let far = try TestWorld.engine(context).parse(rawRequest: request.rawRequest, origin: origin)
        #expect(far.fixedClock == TestWorld.now)
        // The system's time (the credential is valid now too): nothing shown.
        var system = DigitalCredentialsEngine.Configuration(protocols: [.annexC])
        system.zeroKnowledge = ZeroKnowledgeSettings()
        let near = try DigitalCredentialsEngine(context: context, configuration: system).parse(
            rawRequest: request.rawRequest, origin: origin)
        #expect(near.fixedClock == nil)
        // A clock close to the system's but marked as fixed for testing: shown.
        let fixed = Date()
        system.clock = { fixed }
        system.clockFixedForTesting = true
        let marked = try DigitalCredentialsEngine(context: context, configuration: system).parse(
            rawRequest: request.rawRequest, origin: origin)
        #expect(marked.fixedClock == fixed)
        let json = try JSONValue.parse(Array(ConsentModelJSON.request(far).utf8))
        #expect(json["fixedClock"]?.string == MdocDate.formatDateTime(TestWorld.now))
    }
}

/// Collects events (a test observer).
final class CollectingObserver: EngineObserver, @unchecked Sendable {
    // @unchecked: `events` is guarded by `lock`.
    private let lock = NSLock()
    private var collected = [EngineEvent]()
    var events: [EngineEvent] { lock.withLock { collected } }
    func observe(_ event: EngineEvent) { lock.withLock { collected.append(event) } }
}

extension ConfigurationTests {
    @Test("An observer gets one event per call, both protocols, with the outcome and no content")
    func observerEvents() throws {
        let world = try TestWorld()
        let context = try world.context([try world.entry(id: "mdl")], trust: world.trusted)
        let observer = CollectingObserver()
        let engine = TestWorld.engine(context) { $0.observer = observer }
        let origin = TestWorld.origin.serialized
        let annexC = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        let oid = try OpenID4VPReader.makeRequest(
            queries: [
                .init(id: "m", docType: TestWorld.mDL, claims: [.init(ElementID(TestWorld.mDLNS, "family_name"))])
            ],
            origin: TestWorld.origin)
        _ = try engine.accept(rawRequest: annexC.rawRequest, origin: origin)
        let parsed = try engine.parse(rawRequest: oid.rawRequest, origin: origin)
        _ = try engine.respond(to: parsed)
        expectRefusal(FramingRule.noFraming) { try engine.accept(rawRequest: Data("{}".utf8), origin: origin) }
        let events = observer.events
        #expect(events.map(\.operation) == [.accept, .parse, .respond, .accept])
        #expect(events.map(\.presentationProtocol) == [.annexC, .openID4VP, .openID4VP, nil])
        #expect(events.prefix(3).allSatisfy { $0.code == nil && $0.rule == nil })
        #expect(events[3].rule == PresentmentError.Rule(FramingRule.noFraming))
        #expect(events[1].readerStatus == .notAuthenticated && events[0].readerStatus == nil)
        #expect(events.allSatisfy { $0.seconds >= 0 && $0.seconds < 10 })
        // Stage durations: the stages each call ran, in order, adding up to at most the call's time.
        #expect(
            events.map { $0.stages.map(\.stage) } == [
                [.read, .check, .plan, .build, .seal], [.read, .check, .plan], [.plan, .build, .seal], [],
            ])
        #expect(
            events.allSatisfy { e in
                e.stages.allSatisfy { $0.seconds >= 0 } && e.stages.map(\.seconds).reduce(0, +) <= e.seconds
            })
        #expect(events[0].json.contains(#""stages":{"read":"#) && events[3].json.hasSuffix(#""stages":{}}"#))
        for e in events {
            #expect(!e.json.contains("verifier.example") && !e.json.contains("family_name") && !e.json.contains("mdl"))
        }
    }
}

extension ConfigurationTests {
    @Test(
        "Trust members narrow the store's policy as it is at each call: a named anchor keeps its stored purpose, and an anchor removed from the store refuses every call"
    )
    func narrowingFollowsTheStore() throws {
        let world = try TestWorld()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-narrow-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let entry = try world.entry(id: "mdl")
        var pem = Array(try world.deviceKeys[entry.deviceKeyReference]!.pkcs8PEM().utf8)
        defer { for i in pem.indices { pem[i] = 0 } }
        // The store: the reader root as an mdoc-reader anchor under a request-signer profile.
        try CredentialContext.update(at: dir, create: true) { tx throws(PresentmentError) in
            let reference = try tx.storeDeviceKey(pem, name: "mdl")
            tx.entries.append(.init(id: "mdl", issuerSigned: entry.issuerSigned, deviceKeyReference: reference))
            tx.readerTrust.signerProfile = .requestSigner
            try tx.readerTrust.addAnchor(world.readerRoot, purpose: .mdocReader)
        }
        let initial = try #require(try CredentialContext.load(from: dir))
        let json = #"{"trust":{"anchors":["\#(Data(world.readerRoot.der).base64EncodedString())"]}}"#
        var configuration = try ConfigurationDocument(json: Array(json.utf8)).configuration(over: initial)
        configuration.clock = { TestWorld.now }
        configuration.zeroKnowledge = ZeroKnowledgeSettings()
        let engine = try DigitalCredentialsEngine(contextDirectory: dir, configuration: configuration)
        // A signer without the reader EKU under that root: the anchor's stored purpose (mdoc reader) holds.
        let key = try SoftwareSigner.generate()
        let cert = try Certificate.issue(
            subject: .init(commonName: "No EKU Verifier"), publicKey: key.publicKey, issuer: world.readerRoot,
            issuerKey: world.readerRootKey, serial: 91, notBefore: TestWorld.now - 86400,
            notAfter: TestWorld.now + 86400, profile: .requestSignerWithoutReaderEKU(dnsNames: ["verifier.example"]))
        let request = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin,
            signing: .perDocument(signer: key, chain: [cert]))
        let origin = TestWorld.origin.serialized
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: origin)
        #expect(parsed.readerVerdict == .signedNotTrusted(subject: cert.subject, reason: .lacksReaderExtendedKeyUsage))
        // The holder removes the anchor: the configuration's anchor would now widen the store's policy.
        try CredentialContext.update(at: dir) { tx in tx.readerTrust.removeAnchor(der: world.readerRoot.der) }
        expectRefusal(ContextRule.configurationWidensStore) {
            try engine.accept(rawRequest: request.rawRequest, origin: origin)
        }
        let plain = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        expectRefusal(ContextRule.configurationWidensStore) {
            try engine.parse(rawRequest: plain.rawRequest, origin: origin)
        }
    }
}
