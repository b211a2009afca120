import AnnexCReader
import CryptoCore
import DigitalCredentials
import Foundation
import MdocCBOR
import Testing
import TestSupport
import TestWorld

@_spi(Testing) @testable import Presentment

@Suite("Key records: a snapshot keeps what its writer checked of each device key file")
struct KeyRecordTests {
    /// The mDL issued to a device key kept in a context directory's key file, and the snapshot a
    /// validating writer makes of it.
    struct Holder {
        let world: TestWorld
        let entry: CredentialContext.Entry
        let dir: URL
        let keyBytes: [UInt8]
        let snapshot: [UInt8]
        var device: SoftwareSigner { world.deviceKeys["keys/mdl.pem"]! }

        init() throws {
            world = try TestWorld()
            entry = try world.entry(id: "mdl")
            dir = try CredentialContextTests.tempDir()
            try CredentialContextTests.writeKey(world.deviceKeys["keys/mdl.pem"]!, to: dir, name: "mdl.pem")
            keyBytes = Array(try Data(contentsOf: dir.appendingPathComponent("keys/mdl.pem")))
            snapshot = try CredentialContext(entries: [entry], keyResolver: FileKeyResolver(directory: dir)).encoded()
        }
    }

    /// Replaces the key file's content (0600).
    static func replaceKey(in dir: URL, with bytes: [UInt8]) {
        let path = dir.appendingPathComponent("keys/mdl.pem").path
        unlink(path)
        #expect(
            FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
    }

    /// The `keyVerified` record of the snapshot's first credential.
    static func record(_ snapshot: [UInt8]) throws -> [UInt8]? {
        let list = try #require(try CBORDocument(decoding: snapshot).root["credentials"])
        for c in list.children { return c["keyVerified"]?.byteStringValue }
        return nil
    }

    @Test(
        "A validating writer records the SHA-256 of each key file; loading keeps it, and a request signs with it through the file and context resolvers"
    )
    func recorded() throws {
        let h = try Holder()
        defer { try? FileManager.default.removeItem(at: h.dir) }
        let (world, entry, dir, keyBytes, snapshot) = (h.world, h.entry, h.dir, h.keyBytes, h.snapshot)
        #expect(try Self.record(snapshot) == MdocDigest.sha256(keyBytes))
        // A writer that resolved no key records none; nor does a resolver that keeps keys elsewhere.
        let unvalidated = try CredentialContext(
            entries: [entry], keyResolver: FileKeyResolver(directory: dir), validatingKeys: false)
        #expect(try Self.record(unvalidated.encoded()) == nil)
        #expect(try Self.record(try world.context([entry]).encoded()) == nil)

        for resolver: any DeviceKeyResolver in [FileKeyResolver(directory: dir), ContextKeyResolver(directory: dir)] {
            let loaded = try CredentialContext(encoded: snapshot, keyResolver: resolver)
            let engine = TestWorld.engine(loaded, protocols: [.annexC]) { $0.clock = { TestWorld.now } }
            let request = try AnnexCReader.makeRequest(
                documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
            // The verifier checks the device signature with the MSO's deviceKey.
            _ = try AnnexCReader.openResponse(
                try engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized), for: request,
                issuerRoots: [world.iaca], at: TestWorld.now)
            #expect(loaded.encoded() == snapshot)
        }
        // Without the records (an older snapshot) the credential and its key are checked in full.
        let older = TestWorld.snapshotWithoutRecords(snapshot)
        #expect(try Self.record(older) == nil)
        let full = try CredentialContext(encoded: older, keyResolver: FileKeyResolver(directory: dir))
        #expect(try full.credentials[0].signer().publicKey == world.deviceKeys["keys/mdl.pem"]!.publicKey)
        let context = ContextKeyResolver(directory: dir)
        #expect(try context.recordedSigner(for: "keys/mdl.pem", recorded: nil).record == MdocDigest.sha256(keyBytes))
    }

    @Test(
        "A record vouches for exactly the bytes it names: changed key bytes are checked in full (the key pair, then the MSO's deviceKey)"
    )
    func changedBytes() throws {
        let h = try Holder()
        defer { try? FileManager.default.removeItem(at: h.dir) }
        let (dir, keyBytes, snapshot) = (h.dir, h.keyBytes, h.snapshot)
        let goodRecord = try #require(try Self.record(snapshot))
        let device = h.device
        let files = FileKeyResolver(directory: dir)
        func signer() throws(PresentmentError) -> any COSESigner {
            try CredentialContext(encoded: snapshot, keyResolver: files).credentials[0].signer()
        }

        // Another key's scalar under the device key's public point (the point ends the PKCS#8 DER).
        let other = try SoftwareSigner.generate()
        let devicePoint = device.privateKey.publicKey.rawRepresentation
        let otherDER = try other.privateKey.pkcs8DER()
        let inconsistent = Array(otherDER.dropLast(devicePoint.count)) + devicePoint
        Self.replaceKey(in: dir, with: inconsistent)
        // Without a record of these bytes the key pair is checked and refused, whatever was recorded
        // of the file before.
        expectRefusal(KeyRule.notPKCS8) { try files.signer(for: "keys/mdl.pem") }
        expectRefusal(KeyRule.notPKCS8) { try files.recordedSigner(for: "keys/mdl.pem", recorded: nil) }
        expectRefusal(KeyRule.notPKCS8) { try files.recordedSigner(for: "keys/mdl.pem", recorded: goodRecord) }
        expectRefusal(KeyRule.notPKCS8) { try signer() }
        // A record of these very bytes is what skips the check (so only a writer that checked them
        // may make one): the pair is taken as recorded, its point still validated.
        let taken = try files.recordedSigner(for: "keys/mdl.pem", recorded: MdocDigest.sha256(inconsistent))
        #expect(taken.signer.publicKey == device.publicKey)
        var offCurve = inconsistent
        offCurve[offCurve.count - 1] ^= 0x01
        Self.replaceKey(in: dir, with: offCurve)
        expectRefusal(KeyRule.notPKCS8) {
            try files.recordedSigner(for: "keys/mdl.pem", recorded: MdocDigest.sha256(offCurve))
        }

        // A sound key that is not the MSO's: checked in full, then refused against the deviceKey.
        Self.replaceKey(in: dir, with: Array(try other.pkcs8PEM().utf8))
        expectRefusal(KeyRule.keyMismatch) { try signer() }
        // The recorded bytes back: signing works again.
        Self.replaceKey(in: dir, with: keyBytes)
        #expect(try signer().publicKey == device.publicKey)
    }
}
