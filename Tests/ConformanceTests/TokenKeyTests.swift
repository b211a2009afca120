import Foundation
import Testing
import TestSupport
import TestWorld
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import HPKE
import MdocCBOR
import OpenID4VPReader
import PKCS11
import DigitalCredentials
#if canImport(Glibc)
    import Glibc
#endif

/// Device keys in a PKCS#11 token through the engine and the CLI binary: the whole holder journey
/// (key born in the token, credential issued for it, imported, presented, verified), every import
/// and signing failure typed, nothing written or answered on failure, and no PIN, PIN file or PIN
/// variable in any message.
extension ConformanceTests {
    static var tokenCLIRunnable: Bool { cliRunnable && TokenContext.runnable }

    /// A fresh directory for a CLI context (mode 0700).
    static func privateDirectory(_ name: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mdoc-\(name)-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        chmod(dir.path, 0o700)
        return dir
    }

    /// Checks `text` holds none of the PIN-related secrets.
    static func expectNoPINSecrets(
        _ text: String, pin: String, pinFile: String, pinEnv: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!text.contains(pin), "a PIN in: \(text)", sourceLocation: sourceLocation)
        #expect(!text.contains(pinFile), "the PIN file in: \(text)", sourceLocation: sourceLocation)
        if let pinEnv {
            #expect(!text.contains(pinEnv), "the PIN variable in: \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test(
        "The engine: a token failing mid-sign or gone is refused typed, with no response bytes",
        .enabled(if: TokenContext.runnable, TokenContext.skipNote))
    func tokenFailuresThroughTheEngine() throws {
        guard let afterOne = try TokenContext.faultModule("sign-error-after-1", user: "engine"),
            let removed = try TokenContext.faultModule("sign-removed", user: "engine"),
            let uninitialised = try TokenContext.faultModule("sign-not-initialized-after-1", user: "engine")
        else {
            #expect(!Prerequisites.required, "the fault module was not built beside the tests")
            return
        }
        let world = try TestWorld()
        let entry = try world.entry(id: "mdl")
        let token = try TokenContext.newToken("engine")
        let uri = try TokenContext.importKey(world.deviceKeys[entry.deviceKeyReference]!, into: token, label: "mdl")
        let request = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name", "portrait"])], origin: TestWorld.origin, framing: .dataObject)
        for (module, code, detail) in [
            (afterOne, PresentmentError.Code.signingFailed, "CKR_DEVICE_ERROR"),
            (removed, PresentmentError.Code.keyUnavailable, "CKR_DEVICE_REMOVED"),
            // Not transient (a forked child's module refusing its parent's initialisation): named so.
            (uninitialised, PresentmentError.Code.keyUnavailable, "not initialised in this process"),
        ] {
            var faulty = uri
            faulty.modulePath = module
            var e = entry
            e.deviceKeyReference = faulty.string
            // Loaded without touching the key (as a context read from disk is): the key is resolved
            // at the first signature. A module that fails after the key check fails at the response.
            let context = try CredentialContext(
                entries: [e], readerTrust: world.trusted,
                keyResolver: PKCS11KeyResolver(
                    moduleDirectories: try TokenContext.faultModuleDirectories(user: "engine")),
                validatingKeys: false)
            let engine = world.engine(context)
            let parsed = try engine.parse(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
            var produced: Data?
            do {
                produced = try engine.respond(to: parsed)
                Issue.record("answered through a failing token")
            } catch {
                #expect(error.code == code && error.detail.contains(detail), "\(error)")
                #expect(!error.detail.contains(token.pinFile) && !error.detail.contains("pkcs11:"), "\(error)")
            }
            #expect(produced == nil)
            expectRefusal(code) {
                try engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
            }
        }
    }

    @Test(
        "Key resolvers: the core's default reads key files only and refuses a pkcs11: reference typed; ContextKeyResolver signs with the token key",
        .enabled(if: TokenContext.runnable, TokenContext.skipNote))
    func defaultResolverRefusesTokenReferences() throws {
        let world = try TestWorld()
        var entry = try world.entry(id: "mdl")
        let token = try TokenContext.newToken("resolvers")
        let uri = try TokenContext.importKey(world.deviceKeys[entry.deviceKeyReference]!, into: token, label: "mdl")
        entry.deviceKeyReference = uri.string
        let dir = try Self.privateDirectory("resolvers")
        defer { try? FileManager.default.removeItem(at: dir) }
        expectRefusal(KeyRule.tokenNeedsResolver) { try FileKeyResolver(directory: dir).signer(for: uri.string) }
        expectRefusal(KeyRule.tokenNeedsResolver) { try FileKeyResolver(directory: dir).signer(for: "PKCS11:object=x") }
        // A store update checks every key with the default (file) resolver: nothing is written.
        expectRefusal(KeyRule.tokenNeedsResolver) {
            try CredentialContext.update(at: dir, create: true) { tx in tx.entries = [entry] }
        }
        #expect(try CredentialContext.load(from: dir)?.credentials.isEmpty ?? true)
        // With the composed resolver the same update succeeds, and the token key signs a response.
        try CredentialContext.update(at: dir, create: true, keyResolver: ContextKeyResolver(directory: dir)) { tx in
            tx.entries = [entry]
            tx.readerTrust = world.trusted
        }
        let loaded = try #require(
            try CredentialContext.load(from: dir, keyResolver: ContextKeyResolver(directory: dir)))
        let request = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, framing: .dataObject)
        let response = try world.engine(loaded).accept(
            rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        #expect(!response.isEmpty)
        // Loaded with the default resolver, the snapshot reads but its token key refuses at signing.
        let filesOnly = try #require(try CredentialContext.load(from: dir))
        expectRefusal(KeyRule.tokenNeedsResolver) {
            try world.engine(filesOnly).accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        }
    }

    @Test(
        "CLI: a key born in a token, a credential issued for it, imported by URI, presented over both protocols and verified",
        .enabled(if: ConformanceTests.tokenCLIRunnable, "the CLI binary and SoftHSM2 are needed"))
    func cliTokenJourney() throws {
        let world = try TestWorld()
        let token = try TokenContext.newToken("journey")
        let pin = try String(contentsOfFile: token.pinFile, encoding: .utf8)
        // 1. The holder's key is born in the token.
        let made = try #require(
            try Self.runCLI([
                "context", "device-key", "new", "--pkcs11-module", token.modulePath, "--token", token.label, "--label",
                "holder-mdl", "--pin-file", token.pinFile, "--json",
            ]))
        #expect(made.status == 0, "\(made.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: made.out) as? [String: String])
        let keyURI = try #require(json["uri"])
        let coseKey = try COSEKey(encoded: try Hex.decode(try #require(json["coseKey"])))
        #expect(
            keyURI.hasPrefix("pkcs11:") && !keyURI.contains("?") && json["pem"]?.contains("BEGIN PUBLIC KEY") == true)
        Self.expectNoPINSecrets(String(decoding: made.out, as: UTF8.self), pin: pin, pinFile: token.pinFile)
        // A second key with the same label is refused.
        let again = try #require(
            try Self.runCLI([
                "context", "device-key", "new", "--pkcs11-module", token.modulePath, "--token", token.label, "--label",
                "holder-mdl", "--pin-file", token.pinFile,
            ]))
        #expect(again.status == 1 && again.out.isEmpty && again.err.contains("exists in the token"))
        // 2. The issuer issues an mDL for that public key.
        let issued = try world.issuer.issue(
            docType: TestWorld.mDL, nameSpaces: [(TestWorld.mDLNS, TestWorld.mDLElements)], deviceKey: coseKey,
            signed: TestWorld.now - 86400, validFrom: TestWorld.now - 86400, validUntil: TestWorld.now + 86400 * 365)
        let dir = try Self.privateDirectory("token-ctx")
        defer { try? FileManager.default.removeItem(at: dir) }
        let issuedFile = dir.appendingPathComponent("issued.cbor")
        try Data(issued).write(to: issuedFile)
        // 3. The holder imports it with the key's URI; the context stores no PIN.
        let ctx = dir.appendingPathComponent("ctx").path
        #expect(try Self.runCLI(["context", "init", "--context", ctx])?.status == 0)
        let imported = try #require(
            try Self.runCLI([
                "context", "import", "--context", ctx, "--issuer-signed", issuedFile.path, "--device-key", keyURI,
                "--pkcs11-module", token.modulePath, "--pin-file", token.pinFile, "--id", "mdl",
            ]))
        #expect(imported.status == 0, "\(imported.err)")
        let snapshot = try Data(contentsOf: URL(fileURLWithPath: ctx + "/context.cbor"))
        #expect(snapshot.range(of: Data(pin.utf8)) == nil)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: ctx + "/keys").isEmpty,
            "no key file is written for a token key")
        let listed = try #require(try Self.runCLI(["context", "list", "--context", ctx, "--json"]))
        let listing = String(decoding: listed.out, as: UTF8.self)
        #expect(listed.status == 0 && listing.contains("\"deviceKey\":\"pkcs11:") && listing.contains("holder-mdl"))
        Self.expectNoPINSecrets(listing, pin: pin, pinFile: token.pinFile)
        // 4. Requests over both protocols answered from the token key and verified.
        let annexC = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name", "age_over_21"])], origin: TestWorld.origin, framing: .dataObject,
            signing: world.perDocumentSigning)
        let requestFile = dir.appendingPathComponent("request.json")
        try annexC.rawRequest.write(to: requestFile)
        let answered = try #require(
            try Self.runCLI([
                "respond", "--context", ctx, "--request", requestFile.path, "--origin", TestWorld.origin.serialized,
                "--clock", MdocDate.formatDateTime(TestWorld.now),
            ]))
        #expect(answered.status == 0, "\(answered.err)")
        let verified = try AnnexCReader.openResponse(
            answered.out, for: annexC, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(
            verified.documents.first?.elements.map(\.element.identifier).sorted() == ["age_over_21", "family_name"])
        let oid = try OpenID4VPReader.makeRequest(
            queries: [
                .init(id: "mdl", docType: TestWorld.mDL, claims: [.init(ElementID(TestWorld.mDLNS, "given_name"))])
            ],
            origin: TestWorld.origin)
        try oid.rawRequest.write(to: requestFile)
        let oidAnswer = try #require(
            try Self.runCLI([
                "respond", "--context", ctx, "--request", requestFile.path, "--origin", TestWorld.origin.serialized,
                "--clock", MdocDate.formatDateTime(TestWorld.now),
            ]))
        #expect(oidAnswer.status == 0, "\(oidAnswer.err)")
        let oidVerified = try OpenID4VPReader.openResponse(
            oidAnswer.out, for: oid, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(oidVerified.documents(for: "mdl").first?.elements.map(\.element.identifier) == ["given_name"])
        // 5. Without the PIN the answer is refused, typed, with nothing on stdout and no secret.
        let moved = token.pinFile + ".moved"
        try FileManager.default.moveItem(atPath: token.pinFile, toPath: moved)
        defer { try? FileManager.default.moveItem(atPath: moved, toPath: token.pinFile) }
        try annexC.rawRequest.write(to: requestFile)
        let refused = try #require(
            try Self.runCLI([
                "respond", "--context", ctx, "--request", requestFile.path, "--origin", TestWorld.origin.serialized,
                "--clock", MdocDate.formatDateTime(TestWorld.now),
            ]))
        #expect(refused.status == 1 && refused.out.isEmpty)
        #expect(
            refused.err.contains("error[keyUnavailable]") && refused.err.contains("pinUnavailable"), "\(refused.err)")
        Self.expectNoPINSecrets(refused.err, pin: pin, pinFile: token.pinFile)
    }

    @Test(
        "CLI: every import failure with a token key is typed, writes nothing and prints no PIN secret",
        .enabled(if: ConformanceTests.tokenCLIRunnable, "the CLI binary and SoftHSM2 are needed"))
    func cliTokenImportFailures() throws {
        let world = try TestWorld()
        let token = try TokenContext.newToken("import-failures")
        let pin = try String(contentsOfFile: token.pinFile, encoding: .utf8)
        let (uri, key) = try PKCS11KeyGeneration.generate(token.uri(object: "holder"))
        let (_, otherKey) = try PKCS11KeyGeneration.generate(token.uri(object: "other"))
        let dir = try Self.privateDirectory("token-import")
        defer { try? FileManager.default.removeItem(at: dir) }
        func issue(_ k: COSEKey, _ name: String) throws -> String {
            let bytes = try world.issuer.issue(
                docType: TestWorld.mDL, nameSpaces: [(TestWorld.mDLNS, TestWorld.mDLElements)], deviceKey: k,
                signed: TestWorld.now - 86400, validFrom: TestWorld.now - 86400, validUntil: TestWorld.now + 86400)
            let f = dir.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: f))
            return f
        }
        let forHolder = try issue(key, "holder.cbor")
        let forOther = try issue(otherKey, "other.cbor")
        let ctx = dir.appendingPathComponent("ctx").path
        #expect(try Self.runCLI(["context", "init", "--context", ctx])?.status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: ctx + "/context.cbor"))
        let wrongPIN = dir.appendingPathComponent("wrong-pin").path
        try SoftHSM2Sandbox.writePrivate(Array("wrong-pin-value".utf8), to: wrongPIN)
        let keyOnly = uri.keyOnly.string
        let envName = "MDOC_TEST_UNSET_PIN_\(UInt32.random(in: 0...UInt32.max))"
        let rows: [(args: [String], status: Int32, text: String)] = [
            (
                [
                    "--issuer-signed", forHolder, "--device-key", keyOnly, "--pkcs11-module", token.modulePath,
                    "--pin-file", wrongPIN,
                ], 1, "pinIncorrect"
            ),
            (
                [
                    "--issuer-signed", forHolder, "--device-key", keyOnly, "--pkcs11-module", token.modulePath,
                    "--pin-env", envName,
                ], 1, "pinUnavailable"
            ),
            (
                [
                    "--issuer-signed", forHolder, "--device-key", token.uri(object: "missing").keyOnly.string,
                    "--pkcs11-module", token.modulePath, "--pin-file", token.pinFile,
                ], 1, "keyNotFound"
            ),
            (
                [
                    "--issuer-signed", forOther, "--device-key", keyOnly, "--pkcs11-module", token.modulePath,
                    "--pin-file", token.pinFile,
                ], 1, "does not match the MSO deviceKey"
            ),
            (
                [
                    "--issuer-signed", forHolder, "--device-key", keyOnly, "--pkcs11-module", "/nonexistent/module.so",
                    "--pin-file", token.pinFile,
                ], 1, "moduleUnavailable"
            ),
            (
                [
                    "--issuer-signed", forHolder, "--device-key", "pkcs11:token=\(token.label);object=missing",
                    "--pkcs11-module", token.modulePath, "--pin-file", token.pinFile,
                ], 1, "keyNotFound"
            ),
            (
                [
                    "--issuer-signed", forHolder, "--device-key", keyOnly + "?pin-value=\(pin)", "--pkcs11-module",
                    token.modulePath,
                ], 2, "carries a PIN value"
            ),
            (["--issuer-signed", forHolder, "--device-key", keyOnly], 2, "needs --pkcs11-module"),
            (
                [
                    "--issuer-signed", forHolder, "--device-key", keyOnly, "--pkcs11-module", token.modulePath,
                    "--pin-file", token.pinFile, "--pin-env", "X",
                ], 2, "exclusive"
            ),
            (
                [
                    "--issuer-signed", forHolder, "--device-key", dir.appendingPathComponent("k.pem").path,
                    "--pkcs11-module", token.modulePath,
                ], 2, "goes with a pkcs11: device key"
            ),
        ]
        for row in rows {
            let r = try #require(try Self.runCLI(["context", "import", "--context", ctx] + row.args))
            #expect(r.status == row.status && r.err.contains(row.text), "\(row.text): \(r.status) \(r.err)")
            #expect(r.out.isEmpty, "\(row.text): printed \(String(decoding: r.out, as: UTF8.self))")
            Self.expectNoPINSecrets(r.err, pin: pin, pinFile: token.pinFile, pinEnv: envName)
            #expect(!r.err.contains(wrongPIN) && !r.err.contains("wrong-pin-value"), "\(r.err)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: ctx + "/context.cbor")) == before, "\(row.text)")
        }
        // The same import with the right PIN succeeds.
        let ok = try #require(
            try Self.runCLI([
                "context", "import", "--context", ctx, "--issuer-signed", forHolder, "--device-key", keyOnly,
                "--pkcs11-module", token.modulePath, "--pin-file", token.pinFile,
            ]))
        #expect(ok.status == 0, "\(ok.err)")
        print("CLI token import failures: \(rows.count) rows, each refused with nothing written")
    }

    @Test(
        "CLI: demo --pkcs11 sets up a SoftHSM2 token, signs both protocols' answers in it, and removes it",
        .enabled(if: ConformanceTests.tokenCLIRunnable, "the CLI binary and SoftHSM2 are needed"))
    func cliTokenDemo() throws {
        let r = try #require(try Self.runCLI(["demo", "--pkcs11"]))
        let out = String(decoding: r.out, as: UTF8.self)
        #expect(r.status == 0, "\(r.err)")
        #expect(out.contains("device key lives in a SoftHSM2 token") && out.contains("born in the token"))
        #expect(out.contains("ISO/IEC 18013-7 Annex C") && out.contains("OpenID4VP over the Digital Credentials API"))
        let dirLine = try #require(out.split(separator: "\n").first { $0.contains("(temporary)") })
        let dir = try #require(dirLine.split(separator: " ").first { $0.hasPrefix("/tmp/mdoc-softhsm-") })
        #expect(!FileManager.default.fileExists(atPath: String(dir)), "the demo's token directory is removed")
        let bad = try #require(try Self.runCLI(["demo", "--pkcs11", "--pkcs11-module", "/nonexistent/softhsm.so"]))
        #expect(bad.status == 1 && bad.err.contains("moduleUnavailable") && bad.out.isEmpty)
    }
}
