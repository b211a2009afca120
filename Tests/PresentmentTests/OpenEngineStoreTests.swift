import AnnexCReader
import DigitalCredentials
import Foundation
import MdocCBOR
import Presentment
import Testing
import TestWorld

/// An engine opened over a context directory answers from the store as it is now: a credential
/// cancelled, removed, replaced or reinstated on disk is seen by the next call, a request parsed before
/// a cancel is refused at `respond`, and a credential whose validity ended after `parse` is not presented.
@Suite("An open engine sees the store as it is now", .serialized)
struct OpenEngineStoreTests {
    static let origin = TestWorld.origin.serialized

    /// A context directory holding one mDL (`mdl`), and an Annex C request for it.
    static func setup(validUntil: Date? = nil) throws -> (TestWorld, URL, AnnexCReader.BuiltRequest) {
        let world = try TestWorld()
        let dir = try ContextStoreTests.tempDir()
        let entry =
            try validUntil.map { try world.entry(id: "mdl", validUntil: $0) } ?? world.entry(id: "mdl")
        _ = try ContextStoreTests.importEntry(world, entry, into: dir, id: "mdl")
        let request = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(TestWorld.mDL, ["family_name"], nameSpace: TestWorld.mDLNS)],
            origin: TestWorld.origin)
        return (world, dir, request)
    }

    static func engine(_ dir: URL, clock: @escaping @Sendable () -> Date = { TestWorld.now }) throws
        -> DigitalCredentialsEngine
    {
        var c = DigitalCredentialsEngine.Configuration(protocols: [.annexC])
        c.clock = clock
        c.zeroKnowledge = ZeroKnowledgeSettings()
        return try DigitalCredentialsEngine(contextDirectory: dir, configuration: c)
    }

    static func setCancelled(_ dir: URL, _ cancelled: Bool) throws {
        try CredentialContext.update(at: dir) { tx in tx.entries[0].isCancelled = cancelled }
    }

    @Test("Cancelled between two accepts of one engine: refused; reinstated: answered again")
    func cancelBetweenAccepts() throws {
        let (world, dir, request) = try Self.setup()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try Self.engine(dir)
        _ = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: request.rawRequest, origin: Self.origin), for: request,
            issuerRoots: [world.iaca], at: TestWorld.now)
        try Self.setCancelled(dir, true)
        expectRefusal(SelectionRule.noUsableCredential) {
            try engine.accept(rawRequest: request.rawRequest, origin: Self.origin)
        }
        #expect(try engine.currentContext().credential(id: "mdl")?.isCancelled == true)
        try Self.setCancelled(dir, false)
        _ = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: request.rawRequest, origin: Self.origin), for: request,
            issuerRoots: [world.iaca], at: TestWorld.now)
    }

    @Test("Cancelled, removed or replaced between parse and respond: respond refuses (credentialWithdrawn)")
    func changedBetweenParseAndRespond() throws {
        let (world, dir, request) = try Self.setup()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try Self.engine(dir)
        // Cancelled.
        var parsed = try engine.parse(rawRequest: request.rawRequest, origin: Self.origin)
        #expect(parsed.documents[0].candidates.first?.credentialID == "mdl")
        try Self.setCancelled(dir, true)
        expectRefusal(SelectionRule.credentialWithdrawn) { try engine.respond(to: parsed) }
        // Reinstated: the same parsed request answers again.
        try Self.setCancelled(dir, false)
        _ = try AnnexCReader.openResponse(
            try engine.respond(to: parsed), for: request, issuerRoots: [world.iaca], at: TestWorld.now)
        // Replaced under the same id by another credential.
        parsed = try engine.parse(rawRequest: request.rawRequest, origin: Self.origin)
        try CredentialContext.update(at: dir) { tx in tx.entries.removeAll() }
        _ = try ContextStoreTests.importEntry(world, try world.entry(id: "mdl"), into: dir, id: "mdl")
        #expect(try engine.currentContext().credential(id: "mdl")?.isUsable(at: TestWorld.now) == true)
        expectRefusal(SelectionRule.credentialWithdrawn) { try engine.respond(to: parsed) }
        // Removed.
        parsed = try engine.parse(rawRequest: request.rawRequest, origin: Self.origin)
        try CredentialContext.update(at: dir) { tx in tx.entries.removeAll() }
        expectRefusal(SelectionRule.credentialWithdrawn) { try engine.respond(to: parsed) }
        expectRefusal(SelectionRule.noUsableCredential) {
            try engine.accept(rawRequest: request.rawRequest, origin: Self.origin)
        }
    }

    @Test("The snapshot removed under an open engine: every call refused (context.noContext), nothing stale")
    func snapshotRemoved() throws {
        let (_, dir, request) = try Self.setup()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try Self.engine(dir)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: Self.origin)
        try FileManager.default.removeItem(at: dir.appendingPathComponent(CredentialContext.fileName))
        expectRefusal(ContextRule.noContext) { try engine.accept(rawRequest: request.rawRequest, origin: Self.origin) }
        expectRefusal(ContextRule.noContext) { try engine.respond(to: parsed) }
    }

    @Test("Validity ends between parse and respond: respond refuses (credentialNotValidNow), accept passes it over")
    func expiresBetweenParseAndRespond() throws {
        let end = TestWorld.now.addingTimeInterval(60)
        let (_, dir, request) = try Self.setup(validUntil: end)
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = TestClock(TestWorld.now)
        let engine = try Self.engine(dir, clock: { clock.now })
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: Self.origin)
        #expect(parsed.documents[0].candidates.count == 1)
        clock.now = end.addingTimeInterval(1)
        expectRefusal(SelectionRule.credentialNotValidNow) { try engine.respond(to: parsed) }
        expectRefusal(SelectionRule.noUsableCredential) {
            try engine.accept(rawRequest: request.rawRequest, origin: Self.origin)
        }
    }

    @Test("A snapshot engine (bytes in memory) is fixed: its credentials' validity is still checked at respond")
    func snapshotEngineChecksValidity() throws {
        let world = try TestWorld()
        let end = TestWorld.now.addingTimeInterval(60)
        let context = try world.context([try world.entry(id: "mdl", validUntil: end)])
        let clock = TestClock(TestWorld.now)
        let engine = TestWorld.engine(context, protocols: [.annexC]) { c in c.clock = { clock.now } }
        let request = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(TestWorld.mDL, ["family_name"], nameSpace: TestWorld.mDLNS)],
            origin: TestWorld.origin)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: Self.origin)
        clock.now = end.addingTimeInterval(1)
        expectRefusal(SelectionRule.credentialNotValidNow) { try engine.respond(to: parsed) }
    }
}

/// A clock a test moves.
final class TestClock: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var value: Date
    init(_ start: Date) { value = start }
    var now: Date {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

extension OpenEngineStoreTests {
    @Test("The consent model says why each held credential of a requested docType is not usable; errors name none")
    func unusableCredentialsShown() throws {
        let world = try TestWorld()
        let context = try world.context([
            try world.entry(id: "cancelled", cancelled: true),
            try world.entry(id: "expired", validUntil: TestWorld.now.addingTimeInterval(-60)),
            try world.entry(id: "future", validFrom: TestWorld.now.addingTimeInterval(60)),
        ])
        let engine = TestWorld.engine(context, protocols: [.annexC])
        let request = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(TestWorld.mDL, ["family_name"], nameSpace: TestWorld.mDLNS)],
            origin: TestWorld.origin)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: Self.origin)
        let excluded = parsed.documents[0].excluded
        #expect(excluded.map(\.credentialID) == ["cancelled", "expired", "future"])
        #expect(excluded.map(\.reason) == [.cancelled, .expired, .notYetValid])
        #expect(parsed.documents[0].candidates.isEmpty)
        do {
            _ = try engine.accept(rawRequest: request.rawRequest, origin: Self.origin)
            Issue.record("answered with no usable credential")
        } catch {
            #expect(error.is(SelectionRule.noUsableCredential))
            for id in ["cancelled", "expired", "future"] { #expect(!error.detail.contains(id)) }
        }
    }
}
