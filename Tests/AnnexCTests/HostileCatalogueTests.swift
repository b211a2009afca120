import DigitalCredentials
import Foundation
import WebEncoding
import Testing
import TestSupport
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import TestWorld
import HPKE
import MdocCBOR
#if canImport(Glibc)
    import Glibc
#endif

/// The hostile-input catalogue: every case must be refused with its exact error code, and `accept`
/// must produce no bytes at all.
@Suite("Annex C: hostile-input catalogue")
struct HostileCatalogueTests {
    typealias Case = HostileCatalogue.Case
    static let origin = HostileCatalogue.origin
    static func data(_ dr: String, _ ei: String) -> [UInt8] { HostileCatalogue.data(dr, ei) }
    static func catalogue(world: TestWorld) throws -> [Case] { try HostileCatalogue.requests(world: world) }

    @Test("Every catalogued hostile input is refused with its exact code and no response bytes")
    func catalogue() throws {
        let world = try TestWorld()
        try Self.runCatalogue(
            world, world.engine(try world.context([try world.entry(id: "mdl")], trust: world.trusted)))
    }

    @Test(
        "Every catalogued hostile input is refused the same way when the device key lives in a SoftHSM2 token",
        .enabled(if: TokenContext.runnable, TokenContext.skipNote))
    func catalogueWithTokenKeys() throws {
        let world = try TestWorld()
        let context = try world.tokenContext([try world.entry(id: "mdl")], trust: world.trusted)
        #expect(context.entries[0].deviceKeyReference.hasPrefix("pkcs11:"))
        let engine = world.engine(context)
        try Self.runCatalogue(world, engine)
        // And the token context answers a good request.
        let good = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, framing: .dataObject,
            signing: world.perDocumentSigning)
        let v = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: good.rawRequest, origin: Self.origin), for: good,
            issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(v.documents.count == 1)
    }

    /// Runs every catalogue row and every truncation of a valid request against `engine`.
    static func runCatalogue(_ world: TestWorld, _ engine: DigitalCredentialsEngine) throws {
        let cases = try Self.catalogue(world: world)
        #expect(cases.count >= 100)
        var refused = 0
        for c in cases {
            var produced: Data?
            do {
                produced = try engine.accept(rawRequest: Data(c.json), origin: c.origin)
                Issue.record("\(c.name): accepted")
            } catch {
                #expect(c.expected.mismatch(error) == nil, "\(c.name): \(c.expected.mismatch(error) ?? "")")
                #expect(
                    !error.detail.contains("verifier.example") && !error.detail.contains("other.example"),
                    "\(c.name): message echoes the origin")
                refused += 1
            }
            #expect(produced == nil, "\(c.name): produced bytes")
        }
        // Truncation of a valid signed request at every byte of its DeviceRequest: never accepted.
        let good = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name", "portrait"])], origin: TestWorld.origin, framing: .dataObject,
            signing: world.perDocumentSigning)
        let drBytes = Base64URL.decode(good.deviceRequest)!
        var truncations = 0
        for cut in 0..<drBytes.count {
            let raw = Data(Self.data(Base64URL.encode(drBytes.prefix(cut)), good.encryptionInfo))
            expectRefusal(cut == 0 ? .malformedRequest : .invalidDeviceRequest) {
                try engine.accept(rawRequest: raw, origin: Self.origin)
            }
            truncations += 1
        }
        print(
            "hostile catalogue: \(refused) named cases refused with the expected code; \(truncations) truncations of a valid request refused"
        )
    }

    @Test(
        "COSE header controls: a readerAuth with alg protected and crit naming a protected x5chain is accepted (the rows above fail on their fault alone)"
    )
    func criticalHeaderControl() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")], trust: world.trusted))
        let req = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, framing: .dataObject)
        let dr = try DeviceRequest(encoded: Base64URL.decode(req.deviceRequest)!)
        let items = dr.docRequests[0].itemsRequestBytes
        let transcript = AnnexCSessionTranscript(encryptionInfo: req.encryptionInfo, origin: TestWorld.origin)
        let rab = MdocAuthentication.readerAuthenticationBytes(
            sessionTranscript: transcript.bytes, itemsRequestBytes: items)
        func request(protected: [CBORValue.MapEntry], unprotected: [CBORValue.MapEntry]) throws -> Data {
            let p = CBORValue.map(protected).encoded()
            let sig = try world.readerKey.sign(
                COSESign1.signatureStructure(protected: p, externalAAD: [UInt8](), payload: rab))
            let readerAuth = CBORValue.array([.bytes(p), .map(unprotected), .null, .bytes(sig)])
            let dr = RequestCBOR.deviceRequest(
                docRequests: .array([RequestCBOR.docRequest(.encoded(Array(items)), readerAuth: readerAuth)]))
            return Data(Self.data(Base64URL.encode(dr.encoded()), req.encryptionInfo))
        }
        let x5: CBORValue.MapEntry = .init(.int(33), .bytes(world.readerCert.der))
        let ok = try request(
            protected: [.init(.int(1), .int(-7)), .init(.int(2), .array([.int(33)])), x5], unprotected: [])
        guard case .trusted = try engine.parse(rawRequest: ok, origin: Self.origin).readerVerdict else {
            Issue.record("crit [33] with x5chain protected refused")
            return
        }
        let plain = try request(protected: [.init(.int(1), .int(-7))], unprotected: [x5])
        guard case .trusted = try engine.parse(rawRequest: plain, origin: Self.origin).readerVerdict else {
            Issue.record("plain readerAuth refused")
            return
        }
    }

    /// Hostile `alternativeDataElements` that must still be answered, releasing exactly the requested
    /// element the credential holds and nothing the alternatives aim at.
    static func alternativeRows() -> [(name: String, alternatives: [AnnexCReader.AlternativeElements])] {
        let ns = TestWorld.mDLNS
        func e(_ n: String, _ space: String = ns) -> ElementID { ElementID(space, n) }
        let everything = TestWorld.mDLElements.map { e($0.identifier) }
        return [
            ("every mDL element as one set for a missing element", [.init(e("age_over_25"), [everything])]),
            ("seven elements, one over the default bound", [.init(e("age_over_25"), [Array(everything.prefix(7))])]),
            (
                "a set in another namespace naming mDL element names",
                [.init(e("age_over_25"), [[e("portrait", "org.iso.18013.5.1.aamva")], [e("portrait", "")]])]
            ),
            (
                "a set mixing the namespace with another",
                [.init(e("age_over_25"), [[e("birth_date"), e("portrait", "x")]])]
            ),
            ("an alternative for an element not requested", [.init(e("age_over_99"), [[e("portrait")]])]),
            ("an alternative for the held element itself", [.init(e("family_name"), [[e("portrait")]])]),
            (
                "an alternative entry repeated, the last one hostile",
                [.init(e("age_over_25"), [[e("document_number")]]), .init(e("age_over_25"), [everything])]
            ),
        ]
    }

    @Test(
        "Hostile alternativeDataElements rows: answered, and nothing beyond the requested held element leaves the device (accept and with a narrow approval)"
    )
    func alternativeCatalogue() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let held = [TestWorld.mDL: Set(try engine.context.credentials[0].elements)]
        var rows = 0
        for row in Self.alternativeRows() {
            let doc = AnnexCReader.DocumentRequest(
                docType: TestWorld.mDL,
                elements: [
                    .init(ElementID(TestWorld.mDLNS, "age_over_25"), intentToRetain: false),
                    .init(ElementID(TestWorld.mDLNS, "family_name"), intentToRetain: false),
                ],
                alternatives: row.alternatives)
            let req = try AnnexCReader.makeRequest(documents: [doc], origin: TestWorld.origin, version: .v1_1)
            let all = try AnnexCReader.openResponse(
                try engine.accept(rawRequest: req.rawRequest, origin: Self.origin), for: req, issuerRoots: [world.iaca],
                at: TestWorld.now, consent: .init(held: held))
            // (A repeated entry is answered by its last one, which is not honoured: the earlier harmless set is not used either.)
            #expect(all.documents[0].elements.map(\.element.identifier) == ["family_name"], "\(row.name)")
            let parsed = try engine.parse(rawRequest: req.rawRequest, origin: Self.origin)
            let narrow = try engine.respond(
                to: parsed,
                approving: .elements([
                    ElementID(TestWorld.mDLNS, "age_over_25"), ElementID(TestWorld.mDLNS, "family_name"),
                ]))
            let v = try AnnexCReader.openResponse(
                narrow, for: req, issuerRoots: [world.iaca], at: TestWorld.now, consent: .init(held: held))
            #expect(
                v.documents[0].elements.map(\.element.identifier) == ["family_name"],
                "\(row.name): approving the requested elements released a substitute")
            rows += 1
        }
        print("hostile alternatives: \(rows) rows answered with nothing beyond what was shown and approved")
    }

    /// The credential-context rows of the catalogue: damaged, insecure or mismatched snapshots are
    /// refused at load with their exact code; unusable credentials make `accept` refuse with its exact
    /// code and no bytes.
    @Test("Credential-context catalogue: each damaged snapshot or unusable credential refused with its exact code")
    func contextCatalogue() throws {
        let world = try TestWorld()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-ctxcat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let keys = dir.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        let entry = try world.entry(id: "mdl")
        let key = world.deviceKeys["keys/mdl.pem"]!
        func writeKey(_ signer: SoftwareSigner?, mode: Int = 0o600) throws {
            let path = keys.appendingPathComponent("mdl.pem").path
            unlink(path)
            guard let signer else { return }
            #expect(
                FileManager.default.createFile(
                    atPath: path, contents: Data(try signer.pkcs8PEM().utf8), attributes: [.posixPermissions: mode]))
            chmod(path, mode_t(mode))
        }
        try writeKey(key)
        let good = try CredentialContext(entries: [entry], keyResolver: FileKeyResolver(directory: dir)).encoded()
        let file = dir.appendingPathComponent("context.cbor").path
        func load(_ bytes: [UInt8]?, mode: Int = 0o600) -> Result<CredentialContext?, PresentmentError> {
            unlink(file)
            if let bytes {
                _ = FileManager.default.createFile(
                    atPath: file, contents: Data(bytes), attributes: [.posixPermissions: mode])
                chmod(file, mode_t(mode))
            }
            do { return .success(try CredentialContext.load(from: dir)) } catch { return .failure(error) }
        }
        var rows = 0
        func expectLoad(_ name: String, _ bytes: [UInt8]?, mode: Int = 0o600, _ code: PresentmentError.Code?) {
            switch load(bytes, mode: mode) {
            case .success(let ctx):
                if let code {
                    Issue.record("\(name): loaded, expected \(code)")
                } else if bytes != nil {
                    #expect(ctx != nil, "\(name)")
                } else {
                    #expect(ctx == nil, "\(name): missing snapshot must load as nil")
                }
            case .failure(let e):
                #expect(e.code == code, "\(name): \(e)")
            }
            rows += 1
        }
        // A value inside an issuer-signed item (its digest then fails), located by its bytes.
        let marker = Array("Mustermann".utf8)
        let at = try #require(
            (0...(good.count - marker.count)).first { Array(good[$0..<($0 + marker.count)]) == marker })
        var valueFlipped = good
        valueFlipped[at] ^= 0x20
        var formatRenamed = good
        let fmt = Array("mdoc-respond-context".utf8)
        if let f = (0...(good.count - fmt.count)).first(where: { Array(good[$0..<($0 + fmt.count)]) == fmt }) {
            formatRenamed[f] = UInt8(ascii: "x")
        }
        expectLoad("context: the good snapshot", good, nil)
        expectLoad("context: missing (no snapshot yet)", nil, nil)
        expectLoad("context: empty file", [], .contextCorrupt)
        expectLoad("context: truncated to one byte", Array(good.prefix(1)), .contextCorrupt)
        expectLoad("context: truncated at half", Array(good.prefix(good.count / 2)), .contextCorrupt)
        expectLoad("context: truncated by one byte", Array(good.dropLast()), .contextCorrupt)
        expectLoad("context: trailing garbage", good + [0x00], .contextCorrupt)
        expectLoad("context: not CBOR", Array("{\"credentials\": []}".utf8), .contextCorrupt)
        // An older snapshot (no record of the check) is checked in full at load.
        expectLoad(
            "context: an element value altered, no record (older snapshot)",
            TestWorld.snapshotWithoutRecords(valueFlipped), .contextCorrupt)
        expectLoad("context: the good snapshot without records", TestWorld.snapshotWithoutRecords(good), nil)
        expectLoad("context: format name altered", formatRenamed, .contextCorrupt)
        expectLoad(
            "context: wrong version",
            CBORValue.map([
                .init(.text("format"), .text("mdoc-respond-context")), .init(.text("version"), .unsigned(2)),
            ]).encoded(), .contextCorrupt)
        // The holder's signer profile: stored only when not the default; an unknown name is damage.
        var profiled = try CredentialContext(
            entries: [entry], readerTrust: ReaderTrustPolicy(signerProfile: .requestSigner),
            keyResolver: FileKeyResolver(directory: dir)
        ).encoded()
        expectLoad("context: the requestSigner profile", profiled, nil)
        let profileName = Array("requestSigner".utf8)
        if let f = (0...(profiled.count - profileName.count)).first(where: {
            Array(profiled[$0..<($0 + profileName.count)]) == profileName
        }) {
            profiled[f + profileName.count - 1] = UInt8(ascii: "x")
        }
        expectLoad("context: an unknown signer profile", profiled, .contextCorrupt)
        expectLoad("context: world-readable file", good, mode: 0o644, .contextInsecure)
        expectLoad("context: group-readable file", good, mode: 0o640, .contextInsecure)
        expectLoad("context: world-writable file", good, mode: 0o602, .contextInsecure)
        // Directory rules: the context directory must be the user's own and not group/world-writable.
        _ = load(good)
        for (name, mode) in [("group-writable", 0o770), ("world-writable", 0o757)] {
            chmod(dir.path, mode_t(mode))
            switch load(good) {
            case .success: Issue.record("context: \(name) directory loaded")
            case .failure(let e): #expect(e.code == .contextInsecure, "context: \(name) directory: \(e)")
            }
            chmod(dir.path, 0o700)
            rows += 1
        }
        // keys/ as a symbolic link (readers would follow it; writers would remove files in its target).
        let aside = dir.appendingPathComponent("keys-aside")
        try FileManager.default.moveItem(at: keys, to: aside)
        symlink(aside.path, keys.path)
        switch load(good) {
        case .success: Issue.record("context: keys/ as a symbolic link loaded")
        case .failure(let e): #expect(e.code == .contextInsecure, "context: keys/ symlink: \(e)")
        }
        rows += 1
        unlink(keys.path)
        try FileManager.default.moveItem(at: aside, to: keys)
        // Device keys are resolved when their credential signs: the snapshot loads, and `accept` refuses
        // with keyUnavailable and no bytes.
        let keyRequest = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        func expectSigningRefused(_ name: String) {
            do {
                let ctx = try #require(try CredentialContext.load(from: dir))
                let engine = TestWorld.engine(ctx, protocols: [.annexC]) { $0.clock = { TestWorld.now } }
                var produced: Data?
                do { produced = try engine.accept(rawRequest: keyRequest.rawRequest, origin: Self.origin) } catch {
                    #expect(error.code == .keyUnavailable, "\(name): \(error)")
                }
                #expect(produced == nil, "\(name): produced bytes")
            } catch {
                Issue.record("\(name): did not load: \(error)")
            }
            rows += 1
        }
        // A recorded snapshot whose credential bytes no longer match the record: it loads (nothing is
        // parsed at load), and the credential is checked in full when a request can select it.
        do {
            expectLoad("context: an element value altered (the record no longer matches)", valueFlipped, nil)
            let ctx = try #require(try CredentialContext.load(from: dir))
            let engine = TestWorld.engine(ctx, protocols: [.annexC]) { $0.clock = { TestWorld.now } }
            var produced: Data?
            do { produced = try engine.accept(rawRequest: keyRequest.rawRequest, origin: Self.origin) } catch {
                #expect(error.code == .contextCorrupt && error.is(ContextRule.itemDigestMismatch), "\(error)")
            }
            #expect(produced == nil, "an altered credential produced bytes")
            _ = load(good)
        }
        try writeKey(try SoftwareSigner.generate())
        expectSigningRefused("context: device key does not match the MSO")
        try writeKey(key, mode: 0o644)
        expectSigningRefused("context: world-readable device key file")
        try writeKey(nil)
        expectSigningRefused("context: device key file missing")
        try writeKey(key)
        // Unusable credentials: the engine refuses, with no response bytes.
        let request = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        let day: TimeInterval = 86400
        let unusable: [(String, CredentialContext.Entry)] = [
            (
                "credential: expired",
                try world.entry(
                    id: "old", validFrom: TestWorld.now.addingTimeInterval(-400 * day),
                    validUntil: TestWorld.now.addingTimeInterval(-day))
            ),
            (
                "credential: not yet valid",
                try world.entry(
                    id: "future", validFrom: TestWorld.now.addingTimeInterval(day),
                    validUntil: TestWorld.now.addingTimeInterval(400 * day))
            ),
            ("credential: cancelled", try world.entry(id: "gone", cancelled: true)),
            ("credential: other docType only", try world.entry(id: "pid", docType: TestWorld.pid)),
        ]
        for (name, e) in unusable {
            let engine = world.engine(try world.context([e]))
            var produced: Data?
            do { produced = try engine.accept(rawRequest: request.rawRequest, origin: Self.origin) } catch {
                #expect(error.code == .noMatchingCredential, "\(name): \(error)")
            }
            #expect(produced == nil, "\(name): produced bytes")
            rows += 1
        }
        print("context catalogue: \(rows) named rows refused (or loaded) exactly as catalogued")
        #expect(rows == 28)
    }
}
