import DigitalCredentials
import CryptoCore
import Foundation
import Testing
import TestSupport
@testable import AnnexC
@testable import AnnexCReader
@_spi(Testing) @testable import Presentment
import TestWorld
import MdocCBOR
#if canImport(Glibc)
    import Glibc
#endif

/// The credential context on disk: one writer at a time, nothing lost, keys private from their first
/// byte and never left behind, the directory itself checked.
@Suite("Annex C: context store (writer lock, key files, ids)")
struct ContextStoreTests {
    static func tempDir() throws -> URL {
        let u = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: u, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return u
    }

    static func mode(_ path: String) -> Int {
        var st = stat()
        return lstat(path, &st) == 0 ? Int(st.st_mode & 0o7777) : -1
    }

    /// Imports `entry` with its device key through a transaction, as the CLI does.
    static func importEntry(_ world: TestWorld, _ entry: CredentialContext.Entry, into dir: URL, id: String? = nil)
        throws -> String
    {
        var pem = Array(try world.deviceKeys[entry.deviceKeyReference]!.pkcs8PEM().utf8)
        var assigned = ""
        try CredentialContext.update(at: dir, create: true) { tx throws(PresentmentError) in
            let newID = id ?? tx.newCredentialID()
            let reference = try tx.storeDeviceKey(pem, name: newID)
            tx.entries.append(.init(id: newID, issuerSigned: entry.issuerSigned, deviceKeyReference: reference))
            assigned = newID
        }
        for i in pem.indices { pem[i] = 0 }
        return assigned
    }

    @Test("Default ids are never reused, even after removals; an explicit id that exists is refused")
    func defaultIDs() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let e = try world.entry(id: "source")
        #expect(try Self.importEntry(world, e, into: dir) == "credential-1")
        #expect(try Self.importEntry(world, e, into: dir) == "credential-2")
        try CredentialContext.update(at: dir) { tx in tx.entries.removeAll { $0.id == "credential-1" } }
        #expect(try Self.importEntry(world, e, into: dir) == "credential-3")
        try CredentialContext.update(at: dir) { tx in tx.entries.removeAll { $0.id == "credential-3" } }
        #expect(try Self.importEntry(world, e, into: dir) == "credential-4")
        // A hand-chosen id in the default form moves the counter past it.
        #expect(try Self.importEntry(world, e, into: dir, id: "credential-9") == "credential-9")
        #expect(try Self.importEntry(world, e, into: dir) == "credential-10")
        let ids = try #require(try CredentialContext.load(from: dir)).credentials.map(\.id)
        #expect(ids == ["credential-2", "credential-4", "credential-9", "credential-10"])
        // A duplicate id never reaches the disk.
        expectRefusal(.duplicateCredential) { _ = try Self.importEntry(world, e, into: dir, id: "credential-2") }
        #expect(try CredentialContext.load(from: dir)?.credentials.count == 4)
    }

    @Test(
        "A failed change leaves the snapshot untouched, removes only the keys it stored, and never a key another credential references"
    )
    func failedImport() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = try world.entry(id: "good")
        #expect(try Self.importEntry(world, good, into: dir, id: "a") == "a")
        let before = try Data(contentsOf: dir.appendingPathComponent("context.cbor"))
        let keyA = try Data(contentsOf: dir.appendingPathComponent("keys/a.pem"))
        // A change storing a key under the name another credential's key has, then failing validation
        // (this key does not match the MSO).
        let wrong = Array(try SoftwareSigner.generate().pkcs8PEM().utf8)
        var stored = ""
        expectRefusal(KeyRule.keyMismatch) {
            try CredentialContext.update(at: dir) { tx throws(PresentmentError) in
                stored = try tx.storeDeviceKey(wrong, name: "a")
                tx.entries.append(.init(id: "b", issuerSigned: good.issuerSigned, deviceKeyReference: stored))
            }
        }
        #expect(
            stored.hasPrefix("keys/a-") && stored.hasSuffix(".pem"), "an existing key file is never replaced: \(stored)"
        )
        #expect(access(dir.appendingPathComponent(stored).path, F_OK) != 0, "the failed change's own key is removed")
        #expect(try Data(contentsOf: dir.appendingPathComponent("keys/a.pem")) == keyA)
        #expect(try Data(contentsOf: dir.appendingPathComponent("context.cbor")) == before)
        let ctx = try #require(try CredentialContext.load(from: dir))
        _ = try ctx.credentials[0].signer()
        // A body that throws: the same.
        expectRefusal(ContextRule.unknownCredential) {
            try CredentialContext.update(at: dir) { tx throws(PresentmentError) in
                _ = try tx.storeDeviceKey(wrong, name: "c")
                throw PresentmentError(ContextRule.unknownCredential)
            }
        }
        #expect(access(dir.appendingPathComponent("keys/c.pem").path, F_OK) != 0)
    }

    @Test(
        "Key files are created 0600 from the first byte; keys no snapshot references and temporaries of killed writers are removed by the next writer"
    )
    func keyFilesAndGarbage() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        // (The CLI test runs writers under umask 000: the mode is 0600 whatever the umask.)
        let e = try world.entry(id: "k")
        _ = try Self.importEntry(world, e, into: dir, id: "one")
        _ = try Self.importEntry(world, e, into: dir, id: "two")
        let keys = dir.appendingPathComponent("keys").path
        #expect(Self.mode(keys + "/one.pem") == 0o600 && Self.mode(keys + "/two.pem") == 0o600)
        #expect(Self.mode(keys) == 0o700 && Self.mode(dir.appendingPathComponent("context.cbor").path) == 0o600)
        #expect(Self.mode(dir.appendingPathComponent(".lock").path) == 0o600)
        // What killed writers leave: temporaries (with a dead pid) in both directories, an orphaned key.
        let deadPID = 999_999
        let leftovers = [
            keys + "/.three.pem.\(deadPID).17.tmp", dir.path + "/.context.cbor.\(deadPID).42.tmp", keys + "/orphan.pem",
        ]
        for p in leftovers {
            #expect(
                FileManager.default.createFile(
                    atPath: p, contents: Data("-----BEGIN PRIVATE KEY-----".utf8),
                    attributes: [.posixPermissions: 0o600]))
        }
        // Removing a credential removes its key once the snapshot no longer references it.
        try CredentialContext.update(at: dir) { tx in tx.entries.removeAll { $0.id == "one" } }
        for p in leftovers { #expect(access(p, F_OK) != 0, "\(p) survived") }
        #expect(access(keys + "/one.pem", F_OK) != 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys) == ["two.pem"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == [".lock", "context.cbor", "keys"])
        // A live writer's temporary (this process) is left alone.
        let mine = keys + "/.x.pem.\(getpid()).5.tmp"
        _ = FileManager.default.createFile(atPath: mine, contents: Data(), attributes: [.posixPermissions: 0o600])
        try CredentialContext.update(at: dir) { _ in }
        #expect(access(mine, F_OK) == 0)
        unlink(mine)
    }

    @Test(
        "The context directory must be the user's own and not writable by group or others; files are checked through their descriptor"
    )
    func directoryRules() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try Self.importEntry(world, try world.entry(id: "x"), into: dir, id: "x")
        for mode in [0o770, 0o702, 0o777] {
            chmod(dir.path, mode_t(mode))
            expectRefusal(ContextRule.directoryWritable) {
                try CredentialContext.load(from: dir)
            }
            expectRefusal(ContextRule.directoryWritable) {
                try CredentialContext.update(at: dir) { _ in }
            }
        }
        chmod(dir.path, 0o755)
        #expect(try CredentialContext.load(from: dir)?.credentials.count == 1)
        chmod(dir.path, 0o700)
        if geteuid() == 0 {
            // Owned by another user (root can hand it over to nobody).
            chown(dir.path, 65534, 65534)
            expectRefusal(ContextRule.directoryNotOwned) {
                try CredentialContext.load(from: dir)
            }
            chown(dir.path, 0, 0)
        }
        // A symbolic link in place of the snapshot is not followed.
        let file = dir.appendingPathComponent("context.cbor").path
        try FileManager.default.moveItem(atPath: file, toPath: file + ".real")
        symlink(file + ".real", file)
        expectRefusal(ContextRule.pathIsLink) { try CredentialContext.load(from: dir) }
    }

    @Test("A keys/ that is a symbolic link is refused by readers and writers, and no file in its target is touched")
    func keyDirectorySymlink() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        let elsewhere = try Self.tempDir()
        defer {
            try? FileManager.default.removeItem(at: dir)
            try? FileManager.default.removeItem(at: elsewhere)
        }
        _ = try Self.importEntry(world, try world.entry(id: "mdl"), into: dir)
        let keys = dir.appendingPathComponent("keys").path
        // The reported attack: keys/ replaced by a link to a directory with an unrelated .pem file.
        let victim = elsewhere.appendingPathComponent("unrelated.pem").path
        try Data("not ours".utf8).write(to: URL(fileURLWithPath: victim))
        for name in try FileManager.default.contentsOfDirectory(atPath: keys) {
            try FileManager.default.moveItem(
                atPath: keys + "/" + name, toPath: elsewhere.appendingPathComponent(name).path)
        }
        try FileManager.default.removeItem(atPath: keys)
        #expect(symlink(elsewhere.path, keys) == 0)
        expectRefusal(ContextRule.keyDirectoryNotDirectory) {
            try CredentialContext.load(from: dir)
        }
        expectRefusal(.contextInsecure) { try CredentialContext.update(at: dir) { _ in } }
        expectRefusal(.contextInsecure) { try CredentialContext.update(at: dir, create: true) { _ in } }
        #expect(FileManager.default.fileExists(atPath: victim))
    }

    @Test(
        "One writer at a time: a held lock makes a writer wait, then fail with contextBusy after its bound; it never proceeds unlocked"
    )
    func busyLock() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try Self.importEntry(world, try world.entry(id: "x"), into: dir, id: "x")
        let held = try CredentialContext.WriterLock.acquire(directory: dir.path, timeout: 1)
        let start = Date()
        expectRefusal(ContextRule.busy) {
            try CredentialContext.update(at: dir, lockTimeout: 0.3) { tx in tx.entries[0].isCancelled = true }
        }
        #expect(Date().timeIntervalSince(start) >= 0.3)
        #expect(try CredentialContext.load(from: dir)?.credentials[0].isCancelled == false)
        // A writer that waits gets the lock once it is released.
        let done = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var error: Error? }
        let box = Box()
        let d = dir
        Thread.detachNewThread {
            do { try CredentialContext.update(at: d, lockTimeout: 10) { tx in tx.entries[0].isCancelled = true } } catch
            { box.error = error }
            done.signal()
        }
        usleep(200_000)
        #expect(
            try CredentialContext.load(from: dir)?.credentials[0].isCancelled == false,
            "the waiting writer must not proceed while the lock is held")
        held.release()
        done.wait()
        #expect(box.error == nil)
        #expect(try CredentialContext.load(from: dir)?.credentials[0].isCancelled == true)
    }

    @Test(
        "A writer refused as busy closes its lock file once: readers on other threads never lose a descriptor to it"
    )
    func busyWriterClosesOnce() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try Self.importEntry(world, try world.entry(id: "x"), into: dir, id: "x")
        let held = try CredentialContext.WriterLock.acquire(directory: dir.path, timeout: 1)
        defer { held.release() }
        // One thread is refused as busy over and over (each refusal opens and closes the lock file);
        // this one reads the snapshot meanwhile. A second close of a refused writer's descriptor would
        // close whatever this thread had just opened under the same number.
        let stop = LockedValue(false)
        let d = dir
        let refusals = LockedValue(0)
        Thread.detachNewThread {
            while !stop.withLock({ $0 }) {
                do { _ = try CredentialContext.WriterLock.acquire(directory: d.path, timeout: 0) } catch {
                    refusals.withLock { $0 += 1 }
                }
            }
        }
        // At least 3,000 loads, and on until the other thread has been refused 100 times (on a loaded
        // machine it may get little time): the run proves the overlap it claims, within a bound.
        var failures = 0
        var loads = 0
        while loads < 3000 || (refusals.withLock { $0 } <= 100 && loads < 300_000) {
            do { _ = try CredentialContext.load(from: dir) } catch { failures += 1 }
            loads += 1
        }
        stop.withLock { $0 = true }
        #expect(failures == 0)
        #expect(refusals.withLock { $0 } > 100)
    }

    @Test("Only the key of the credential that signs is resolved: a missing key refuses that credential alone")
    func resolveOnlyTheKeyUsed() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try Self.importEntry(world, try world.entry(id: "m"), into: dir, id: "m")
        _ = try Self.importEntry(world, try world.entry(id: "p", docType: TestWorld.pid), into: dir, id: "p")
        // The PID's key disappears (a removal in progress): the snapshot still loads, the mDL answers,
        // and only a request the PID must answer is refused.
        unlink(dir.appendingPathComponent("keys/p.pem").path)
        let ctx = try #require(try CredentialContext.load(from: dir))
        let engine = TestWorld.engine(ctx, protocols: [.annexC]) { $0.clock = { TestWorld.now } }
        let mdl = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        _ = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: mdl.rawRequest, origin: "https://verifier.example"), for: mdl,
            issuerRoots: [world.iaca], at: TestWorld.now)
        let pid = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(TestWorld.pid, ["age_over_18"])], origin: TestWorld.origin)
        expectRefusal(KeyRule.fileMissing) {
            try engine.accept(rawRequest: pid.rawRequest, origin: "https://verifier.example")
        }
        // Once resolved, a key is kept for the snapshot's life.
        unlink(dir.appendingPathComponent("keys/m.pem").path)
        _ = try engine.accept(rawRequest: mdl.rawRequest, origin: "https://verifier.example")
    }

    @Test("Concurrent writers on several threads lose no update")
    func concurrentThreads() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        for id in ["a", "b", "c", "d"] { _ = try Self.importEntry(world, try world.entry(id: id), into: dir, id: id) }
        let anchors = try (0..<8).map { i -> Certificate in
            let k = try SoftwareSigner.generate()
            return try Certificate.issue(
                subject: .init(commonName: "Root \(i)"), publicKey: k.publicKey, issuer: nil, issuerKey: k,
                serial: UInt64(i + 1),
                notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerRoot)
        }
        let group = DispatchGroup()
        final class Failures: @unchecked Sendable {
            let lock = NSLock()
            var list = [String]()
        }
        let failures = Failures()
        let d = dir
        for t in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                do {
                    // Each thread: cancel one credential (threads 0-3) or add one anchor (4-7), plus a trust anchor each.
                    try CredentialContext.update(at: d) { tx in tx.readerTrust.trustAnchors.append(anchors[t]) }
                    if t < 4 { try CredentialContext.update(at: d) { tx in tx.entries[t].isCancelled = true } }
                } catch {
                    failures.lock.lock()
                    failures.list.append("\(t): \(error)")
                    failures.lock.unlock()
                }
                group.leave()
            }
        }
        group.wait()
        #expect(failures.list.isEmpty, "\(failures.list)")
        let ctx = try #require(try CredentialContext.load(from: dir))
        #expect(Set(ctx.readerTrust.trustAnchors.map(\.der)) == Set(anchors.map(\.der)))
        #expect(ctx.credentials.allSatisfy { $0.isCancelled })
    }
}
