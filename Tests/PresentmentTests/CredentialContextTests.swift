import DigitalCredentials
import Foundation
import Testing
import TestSupport
@testable import AnnexC
@testable import AnnexCReader
@_spi(Testing) @testable import Presentment
import TestWorld
import HPKE
import MdocCBOR

@Suite("Annex C: credential context")
struct CredentialContextTests {
    static func tempDir() throws -> URL {
        let u = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-ctx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
        return u
    }

    static func writeKey(_ signer: SoftwareSigner, to dir: URL, name: String, mode: Int = 0o600) throws {
        let keys = dir.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        let path = keys.appendingPathComponent(name).path
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data(try signer.pkcs8PEM().utf8), attributes: [.posixPermissions: mode]))
    }

    @Test("Write and load round trip through files: 0600, atomic, registration metadata, key files resolved")
    func roundTrip() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try CredentialContext.load(from: dir) == nil)
        let e1 = try world.entry(id: "mdl")
        let e2 = try world.entry(id: "pid", docType: TestWorld.pid, cancelled: true)
        try Self.writeKey(world.deviceKeys["keys/mdl.pem"]!, to: dir, name: "mdl.pem")
        try Self.writeKey(world.deviceKeys["keys/pid.pem"]!, to: dir, name: "pid.pem")
        let ctx = try CredentialContext(
            entries: [e1, e2],
            readerTrust: ReaderTrustPolicy(
                trustAnchors: [world.readerRoot], authorities: .only([[9, 9]]), requireReaderAuthentication: true),
            keyResolver: FileKeyResolver(directory: dir))
        try ctx.write(to: dir)
        let attrs = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("context.cbor").path)
        #expect((attrs[.posixPermissions] as! NSNumber).intValue & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
        let loaded = try #require(try CredentialContext.load(from: dir))
        #expect(loaded.credentials.map(\.id) == ["mdl", "pid"])
        #expect(loaded.credentials[1].isCancelled)
        #expect(loaded.readerTrust.requireReaderAuthentication)
        #expect(loaded.readerTrust.authorities == .only([[9, 9]]))
        #expect(loaded.readerTrust.trustAnchors.map(\.der) == [world.readerRoot.der])
        #expect(loaded.encoded() == ctx.encoded())
        #expect(loaded.registrations.map(\.docType) == [TestWorld.mDL, TestWorld.pid])
        #expect(loaded.registrations[0].invalidationDate == loaded.credentials[0].validUntil)
        #expect(loaded.credentials[0].element(ElementID(TestWorld.mDLNS, "family_name"))?.stringValue == "Mustermann")
        // Indexed in place inside the snapshot's buffer: the IssuerSigned it gives back, the snapshot it
        // writes and every item and issuerAuth the index finds are still the issued bytes.
        let original = ctx.credentials[0]
        let read = loaded.credentials[0]
        #expect(read.isIndexed)
        #expect(read.issuerSignedBytes == original.issuerSignedBytes)
        #expect(read.indexedBytes.count > original.issuerSignedBytes.count)
        #expect(loaded.encoded() == ctx.encoded())
        #expect(
            Array(read.indexedBytes[read.issuerAuthRange]) == Array(original.indexedBytes[original.issuerAuthRange]))
        for id in try original.elements {
            let r = try #require(read.itemRange(id))
            let o = try #require(original.itemRange(id))
            #expect(r.lowerBound != o.lowerBound)
            #expect(Array(read.indexedBytes[r]) == Array(original.indexedBytes[o]))
        }
        // A file-backed engine answers.
        let engine = TestWorld.engine(loaded, protocols: [.annexC]) { $0.clock = { TestWorld.now } }
        let req = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, signing: world.perDocumentSigning)
        expectRefusal(TrustRule.authorityNotAllowed, at: "docRequests[0].readerAuth") {
            // Authority [9, 9] refuses.
            try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example")
        }
        // Rewriting replaces the file whole.
        let again = try CredentialContext(entries: [e1], keyResolver: FileKeyResolver(directory: dir))
        try again.write(to: dir)
        #expect(try CredentialContext.load(from: dir)?.credentials.count == 1)
    }

    @Test(
        "A snapshot records each credential as checked: loading parses none, a request indexes only what it can select, and bytes no longer matching the record are checked in full then and refused"
    )
    func recordedChecks() throws {
        let world = try TestWorld()
        let mdl = try world.entry(id: "mdl")
        let pid = try world.entry(id: "pid", docType: TestWorld.pid)
        let good = try world.context([mdl, pid]).encoded()
        let root = try CBORDocument(decoding: good).root
        for (c, e) in zip(try #require(root["credentials"]).children, [mdl, pid]) {
            #expect(c["verified"]?.byteStringValue == MdocDigest.sha256(e.issuerSigned))
        }
        let mdlRequest = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        let pidRequest = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(TestWorld.pid, ["family_name"])], origin: TestWorld.origin)
        let origin = TestWorld.origin.serialized

        let loaded = try CredentialContext(encoded: good, keyResolver: world.resolver)
        #expect(loaded.credentials.allSatisfy { !$0.isIndexed })
        _ = try world.engine(loaded).accept(rawRequest: mdlRequest.rawRequest, origin: origin)
        #expect(loaded.credentials[0].isIndexed && !loaded.credentials[1].isIndexed)
        _ = try world.engine(loaded).parse(rawRequest: pidRequest.rawRequest, origin: origin)
        #expect(loaded.credentials[1].isIndexed)

        // The PID's family_name changed inside the snapshot (its CBOR still well formed): the snapshot
        // loads and the mDL still answers; the PID is checked in full when a request can select it.
        var tampered = good
        let pidRange = try #require(good.firstRange(of: pid.issuerSigned))
        let value = try #require(good[pidRange].firstRange(of: Array("Mustermann".utf8)))
        tampered[value.lowerBound] = UInt8(ascii: "N")
        let t = try CredentialContext(encoded: tampered, keyResolver: world.resolver)
        _ = try world.engine(t).accept(rawRequest: mdlRequest.rawRequest, origin: origin)
        expectRefusal(ContextRule.itemDigestMismatch) {
            try world.engine(t).accept(rawRequest: pidRequest.rawRequest, origin: origin)
        }
        expectRefusal(ContextRule.itemDigestMismatch) {
            try world.engine(t).parse(rawRequest: pidRequest.rawRequest, origin: origin)
        }
        #expect(throws: PresentmentError.self) { try t.credentials[1].elements }
        // A snapshot without the record (written before it existed) is checked in full at load.
        let unrecorded = TestWorld.snapshotWithoutRecords(tampered)
        #expect(unrecorded.count == tampered.count - 2 * (1 + 8 + 2 + 32))
        expectRefusal(ContextRule.itemDigestMismatch) {
            try CredentialContext(encoded: unrecorded, keyResolver: world.resolver)
        }
        _ = try CredentialContext(encoded: TestWorld.snapshotWithoutRecords(good), keyResolver: world.resolver)
    }

    @Test(
        "Bytes that differ from the record are read with every rule (a repeated key refuses them); bytes matching a record are read without the repeated-key check, and only that one"
    )
    func recordedBytesAndRepeatedKeys() throws {
        let world = try TestWorld()
        let mdl = try world.entry(id: "mdl")
        // The IssuerSigned map with its issuerAuth entry twice: well formed, every item still matching
        // its MSO digest and issuerAuth still verifying, but a repeated key.
        let root = try CBORDocument(decoding: mdl.issuerSigned).root
        let nameSpaces = try #require(root["nameSpaces"]).encodedBytes
        let issuerAuth = try #require(root["issuerAuth"]).encodedBytes
        let key = { (s: String) in CBORValue.text(s).encoded() }
        let doubled: [UInt8] =
            [0xa3] + key("nameSpaces") + nameSpaces + key("issuerAuth") + issuerAuth + key("issuerAuth") + issuerAuth
        let mso = try IssuerSigned(encoded: mdl.issuerSigned).mobileSecurityObject()
        func stored(_ bytes: [UInt8], record: [UInt8]) throws -> StoredCredential {
            try StoredCredential(
                recorded: "mdl", docTypes: [mso.docType], issuerSignedBytes: bytes, range: 0..<bytes.count,
                deviceKeyReference: mdl.deviceKeyReference, isCancelled: false,
                validFrom: mso.validityInfo.validFrom, validUntil: mso.validityInfo.validUntil, verifiedDigest: record,
                keyRecord: nil, resolver: world.resolver)
        }
        // Not what was recorded: checked in full, and the reader refuses the repeated key.
        let unrecorded = try stored(doubled, record: MdocDigest.sha256(mdl.issuerSigned))
        expectRefusal(ContextRule.issuerSignedInvalid) { _ = try unrecorded.index() }
        #expect(!unrecorded.isIndexed)
        // Exactly the recorded bytes: read as recorded, every element indexed.
        let recorded = try stored(doubled, record: MdocDigest.sha256(doubled))
        let plain = try stored(mdl.issuerSigned, record: [])
        #expect(try recorded.index().orderedItems.count == (try plain.index()).orderedItems.count)
        // Every other rule of the reader still applies to recorded bytes: truncated CBOR, recorded as
        // it is, is refused.
        let truncated = Array(doubled.dropLast())
        expectRefusal(ContextRule.issuerSignedInvalid) {
            _ = try stored(truncated, record: MdocDigest.sha256(truncated)).index()
        }
    }

    @Test(
        "The element index: every key found with its first value, in the right namespace; misses (another namespace, a prefix, a longer key, empty) find nothing; a repeated key is reported and keeps its first value"
    )
    func elementIndex() {
        // Identifiers of every length around the hash's eight-byte words, one of them in two namespaces,
        // bridged and native strings, an empty identifier, and more keys than the initial table's slots.
        let long = String(repeating: "x", count: 17)
        var pairs: [(ElementID, Int)] = [
            (ElementID("ns.a", "age_over_18"), 0), (ElementID("ns.b", "age_over_18"), 1), (ElementID("ns.a", ""), 2),
            (ElementID("ns.a", long), 3), (ElementID("ns.a", "é"), 4),
        ]
        for n in 1...24 { pairs.append((ElementID("ns.a", String(repeating: "k", count: n)), 100 + n)) }
        let (index, repeated) = ElementIndex.make(pairs)
        #expect(!repeated)
        for (id, value) in pairs { #expect(index[id] == value, "\(id)") }
        for miss in [
            ElementID("ns.c", "age_over_18"), ElementID("ns.a", "age_over_1"), ElementID("ns.a", "age_over_180"),
            ElementID("ns.b", ""), ElementID("ns.a", long + "x"), ElementID("ns.a", String(repeating: "k", count: 25)),
        ] {
            #expect(index[miss] == nil, "\(miss)")
        }
        let (again, twice) = ElementIndex.make(pairs + [(ElementID("ns.b", "age_over_18"), 9)])
        #expect(twice)
        #expect(again[ElementID("ns.b", "age_over_18")] == 1)
    }

    @Test("The element hash reads every byte: equal bytes hash alike at any address, any one byte changed changes it")
    func elementHash() {
        for length in 0...40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: 0x61 + $0 * 7) }
            let h = bytes.withUnsafeBufferPointer { ElementIndex.hash($0) }
            // The same bytes at every alignment inside a larger buffer.
            for offset in 0..<8 {
                let padded = [UInt8](repeating: 0xee, count: offset) + bytes + [0xdd, 0xdd]
                let moved = padded.withUnsafeBufferPointer {
                    ElementIndex.hash(UnsafeBufferPointer(rebasing: $0[offset..<(offset + length)]))
                }
                #expect(moved == h, "\(length) at \(offset)")
            }
            for position in 0..<length {
                var changed = bytes
                changed[position] ^= 0x01
                #expect(changed.withUnsafeBufferPointer { ElementIndex.hash($0) } != h, "\(position) of \(length)")
            }
            // A byte more or less is another identifier.
            #expect((bytes + [0]).withUnsafeBufferPointer { ElementIndex.hash($0) } != h)
        }
    }

    @Test(
        "A credential holding an element twice is refused when indexed: byte-equal identifiers, and identifiers equal only as strings (NFC and NFD); distinct look-alikes index"
    )
    func repeatedElements() throws {
        let world = try TestWorld()
        func index(_ names: [String]) throws {
            let entry = try world.entry(
                id: "r", elements: names.enumerated().map { .init($0.element, .text("v\($0.offset)")) })
            _ = try world.context([entry]).credentials[0].index()
        }
        let nfc = "na\u{00EF}ve"  // ï precomposed
        let nfd = "nai\u{0308}ve"  // i + combining diaeresis
        #expect(nfc == nfd && Array(nfc.utf8) != Array(nfd.utf8))
        for names in [["family_name", "family_name"], ["a", "b", "a"], [nfc, nfd], ["x", nfd, nfc]] {
            expectRefusal(ContextRule.repeatedElement) { try index(names) }
        }
        // Different as strings, including non-ASCII ones: indexed, each value reachable by its name.
        let names = ["family_name", nfc, "nai\u{0301}ve", "NAIVE", "given_name"]
        let entry = try world.entry(
            id: "r", elements: names.enumerated().map { .init($0.element, .text("v\($0.offset)")) })
        let c = try world.context([entry]).credentials[0]
        #expect(try c.elements.count == names.count)
        for (k, n) in names.enumerated() {
            #expect(c.element(ElementID(TestWorld.mDLNS, n))?.stringValue == "v\(k)", "\(n)")
        }
        #expect(c.element(ElementID(TestWorld.mDLNS, "naive")) == nil)
    }

    @Test("Corrupt, truncated, wrong-version, insecure and mismatched snapshots are refused with typed errors")
    func refusals() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let e1 = try world.entry(id: "mdl")
        try Self.writeKey(world.deviceKeys["keys/mdl.pem"]!, to: dir, name: "mdl.pem")
        let ctx = try CredentialContext(entries: [e1], keyResolver: FileKeyResolver(directory: dir))
        let good = ctx.encoded()
        let file = dir.appendingPathComponent("context.cbor").path
        func load(_ bytes: [UInt8], mode: Int = 0o600) -> PresentmentError.Code? {
            _ = FileManager.default.createFile(
                atPath: file, contents: Data(bytes), attributes: [.posixPermissions: mode])
            chmod(file, mode_t(mode))
            do {
                _ = try CredentialContext.load(from: dir)
                return nil
            } catch { return error.code }
        }
        #expect(load(good) == nil)
        #expect(load(Array(good.prefix(good.count / 2))) == .contextCorrupt)
        // A flipped byte: refused at load, or (inside a credential's bytes, which then no longer match
        // the snapshot's record) when the credential is first indexed.
        var flipped = good
        flipped[good.count / 2] ^= 0xff
        func loadAndIndex(_ bytes: [UInt8]) -> PresentmentError.Code? {
            if let refused = load(bytes) { return refused }
            do {
                _ = try CredentialContext.load(from: dir)?.credentials[0].elements
                return nil
            } catch { return error.code }
        }
        #expect(loadAndIndex(flipped) == .contextCorrupt)
        #expect(load([]) == .contextCorrupt)
        #expect(
            load(
                CBORValue.map([
                    .init(.text("format"), .text("mdoc-respond-context")), .init(.text("version"), .unsigned(2)),
                ]).encoded()) == .contextCorrupt)
        #expect(load(good, mode: 0o644) == .contextInsecure)
        // Keys are resolved when a credential first signs, not at load: a context with a bad key
        // loads, and only that credential refuses (keyUnavailable).
        func signing() -> PresentmentError.Code? {
            do {
                _ = try CredentialContext.load(from: dir)?.credentials[0].signer()
                return nil
            } catch { return error.code }
        }
        // A device key that does not match the MSO.
        try Self.writeKey(try SoftwareSigner.generate(), to: dir, name: "mdl.pem")
        #expect(load(good) == nil)
        #expect(signing() == .keyUnavailable)
        // A world-readable key file.
        try Self.writeKey(world.deviceKeys["keys/mdl.pem"]!, to: dir, name: "mdl.pem", mode: 0o644)
        chmod(dir.appendingPathComponent("keys/mdl.pem").path, 0o644)
        #expect(signing() == .keyUnavailable)
        // A symbolic link in place of the key file.
        unlink(dir.appendingPathComponent("keys/mdl.pem").path)
        try Self.writeKey(world.deviceKeys["keys/mdl.pem"]!, to: dir, name: "real.pem")
        symlink(dir.appendingPathComponent("keys/real.pem").path, dir.appendingPathComponent("keys/mdl.pem").path)
        #expect(signing() == .keyUnavailable)
        unlink(dir.appendingPathComponent("keys/mdl.pem").path)
        try Self.writeKey(world.deviceKeys["keys/mdl.pem"]!, to: dir, name: "mdl.pem")
        #expect(signing() == nil)
        // Key references must stay inside the context directory.
        expectRefusal(KeyRule.referenceNotRelative) {
            try FileKeyResolver(directory: dir).signer(for: "../etc/key.pem")
        }
        expectRefusal(KeyRule.referenceNotRelative) {
            try FileKeyResolver(directory: dir).signer(for: "/etc/key.pem")
        }
        // Validation before writing: an MSO docType mismatch and duplicate ids.
        expectRefusal(ContextRule.docTypesMismatch) {
            try CredentialContext(
                entries: [
                    .init(
                        id: "x", docTypes: ["other"], issuerSigned: e1.issuerSigned,
                        deviceKeyReference: e1.deviceKeyReference)
                ], keyResolver: world.resolver)
        }
        expectRefusal(ContextRule.duplicateID) {
            try CredentialContext(entries: [e1, e1], keyResolver: world.resolver)
        }
        // Around the pairwise bound (32): short and long ids (a long one is a heap string), the repeat
        // at the start, in the middle and at the end; the same ids all distinct are accepted, and the
        // snapshot they write reads back.
        for count in [2, 31, 32, 33, 40] {
            for long in [false, true] {
                let ids = (0..<count).map { long ? "a-credential-identifier-\($0)" : "c\($0)" }
                let entries = ids.map {
                    CredentialContext.Entry(
                        id: $0, issuerSigned: e1.issuerSigned, deviceKeyReference: e1.deviceKeyReference)
                }
                let distinct = try CredentialContext(entries: entries, keyResolver: world.resolver)
                #expect(distinct.credentials.map(\.id) == ids)
                let read = try CredentialContext(encoded: distinct.encoded(), keyResolver: world.resolver)
                #expect(read.credentials.map(\.id) == ids)
                var snapshotCases = 0
                for (first, second) in [(0, 1), (0, count - 1), (count / 2, count - 1), (count - 2, count - 1)]
                where first < second {
                    var repeated = entries
                    repeated[second].id = ids[first]
                    expectRefusal(ContextRule.duplicateID) {
                        try CredentialContext(entries: repeated, keyResolver: world.resolver)
                    }
                    // The same through a snapshot (a host app may write one by hand): the record's `id`
                    // member rewritten in place where the two ids have the same length.
                    let from = CBORValue.text("id").encoded() + CBORValue.text(ids[second]).encoded()
                    let to = CBORValue.text("id").encoded() + CBORValue.text(ids[first]).encoded()
                    var bytes = distinct.encoded()
                    guard from.count == to.count, let at = bytes.firstRange(of: from) else { continue }
                    bytes.replaceSubrange(at, with: to)
                    expectRefusal(ContextRule.duplicateID) {
                        try CredentialContext(encoded: bytes, keyResolver: world.resolver)
                    }
                    snapshotCases += 1
                }
                #expect(snapshotCases >= 1)
            }
        }
        expectRefusal(.contextCorrupt) {
            try CredentialContext(
                entries: [.init(id: "x", issuerSigned: [0xa0], deviceKeyReference: e1.deviceKeyReference)],
                keyResolver: world.resolver)
        }
    }
}

@Suite("ElementID: the namespace/identifier text form")
struct ElementIDTextTests {
    @Test("Reads what description writes, split at the last slash; refuses a missing or empty part")
    func parsing() {
        for id in [ElementID("org.iso.18013.5.1", "age_over_18"), ElementID("eu.europa.ec.eudi.pid.1", "given_name")] {
            #expect(ElementID(parsing: id.description) == id)
        }
        #expect(ElementID(parsing: "a/b/c") == ElementID("a/b", "c"))
        for bad in ["", "no-slash", "/elem", "ns/", "/"] { #expect(ElementID(parsing: bad) == nil, "\(bad)") }
    }
}
