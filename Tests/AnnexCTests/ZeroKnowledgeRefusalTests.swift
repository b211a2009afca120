import AnnexCReader
import DigitalCredentials
import Foundation
import Longfellow
import MdocCBOR
import Testing
import TestSupport
import TestWorld

/// Every way a proof request is refused, each with its rule and no output: the decision's own rules
/// (no circuit, attribute count, namespaces, a tampered spec, an unusable credential, too many proofs,
/// an unapproved fallback, a partial approval) and the prover's (a library with another contract or
/// checksums, a missing or altered circuit, a prover that fails, panics or overruns its time budget).
/// The prover's failures use a stand-in library compiled here with the system C compiler, exporting
/// the ISRG library's uniffi symbols.
@Suite("Zero-knowledge refusals: never a plain presentation where a proof is required", .serialized)
struct ZeroKnowledgeRefusalTests {
    typealias Z = ZeroKnowledgeTests
    static let origin = TestWorld.origin.serialized
    static let nsLocation = "docRequests[0].itemsRequest.requestInfo.zkRequest"

    /// Refused with `rule` by `accept`, and by `parse` too when the rule is the decision's.
    static func expectRefused<R: RefusalRule>(
        _ engine: DigitalCredentialsEngine, _ doc: AnnexCReader.DocumentRequest, _ rule: R, atParse: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let request = try AnnexCReader.makeRequest(documents: [doc], origin: TestWorld.origin)
        expectRefusal(rule, sourceLocation: sourceLocation) {
            try engine.accept(rawRequest: request.rawRequest, origin: origin)
        }
        if atParse {
            expectRefusal(rule, sourceLocation: sourceLocation) {
                try engine.parse(rawRequest: request.rawRequest, origin: origin)
            }
        } else {
            let parsed = try engine.parse(rawRequest: request.rawRequest, origin: origin)
            expectRefusal(rule, sourceLocation: sourceLocation) { try engine.respond(to: parsed) }
        }
    }

    @Test(
        "The decision refuses what no held circuit proves: unknown hash, tampered block parameter, attribute count, two namespaces",
        .enabled(if: Z.runnable, Z.skipNote))
    func decisionRules() throws {
        let (_, context) = try Z.fixture()
        let engine = Z.engine(context)
        let v7 = Z.v7one.spec
        let unknown = ZkSystemSpec(
            id: "x", system: v7.system, circuitHash: String(repeating: "0", count: 64), version: 7, attributeCount: 1,
            blockEncHash: 4151, blockEncSig: 4096)
        try Self.expectRefused(engine, Z.ask(specs: [unknown]), ZeroKnowledgeRule.noCircuit, atParse: true)
        let tampered = ZkSystemSpec(
            id: v7.id, system: v7.system, circuitHash: v7.circuitHash, version: 7, attributeCount: 1,
            blockEncHash: 4151,
            blockEncSig: 4097)
        try Self.expectRefused(engine, Z.ask(specs: [tampered]), ZeroKnowledgeRule.noCircuit, atParse: true)
        let otherSystem = ZkSystemSpec(
            id: v7.id, system: "longfellow-libzk-v2", circuitHash: v7.circuitHash, version: 7, attributeCount: 1,
            blockEncHash: 4151, blockEncSig: 4096)
        try Self.expectRefused(engine, Z.ask(specs: [otherSystem]), ZeroKnowledgeRule.unknownSystem, atParse: true)
        // Only unknown systems, and for another attribute count: the system is named, not the count.
        let otherTwo = ZkSystemSpec(
            id: "y", system: "another-zk", circuitHash: nil, version: nil, attributeCount: 2, blockEncHash: nil,
            blockEncSig: nil)
        try Self.expectRefused(engine, Z.ask(specs: [otherTwo]), ZeroKnowledgeRule.unknownSystem, atParse: true)
        // Multipaz's default v6 circuit (137e5a75…, one attribute): no held circuit matches (v6 does not
        // prove the credentials tried), refused at the decision before any prover work.
        let v6 = ZkSystemSpec(
            id: "longfellow-libzk-v1_6_1_4096_2945_137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6",
            system: v7.system, circuitHash: "137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6",
            version: 6, attributeCount: 1, blockEncHash: 4096, blockEncSig: 2945)
        try Self.expectRefused(engine, Z.ask(specs: [v6]), ZeroKnowledgeRule.noCircuit, atParse: true)
        #expect(LongfellowCircuit.table.allSatisfy { $0.version == 7 })
        // Two claims against a one-attribute circuit: the reader's specs are for another count.
        try Self.expectRefused(
            engine, Z.ask(TestWorld.mDL, TestWorld.mDLNS, ["age_over_18", "age_over_21"]),
            ZeroKnowledgeRule.attributeCount, atParse: true)
        // Claims in two namespaces (one circuit proves one namespace).
        let two = AnnexCReader.DocumentRequest(
            docType: TestWorld.mDL,
            elements: [
                .init(ElementID(TestWorld.mDLNS, "age_over_18"), intentToRetain: false),
                .init(ElementID("org.iso.18013.5.1.aamva", "age_over_18"), intentToRetain: false),
            ],
            zkRequest: .init(
                specs: [LongfellowCircuit.table.first { $0.version == 7 && $0.attributes == 2 }!.spec], required: true))
        try Self.expectRefused(engine, two, ZeroKnowledgeRule.nameSpaces, atParse: true)
        // The location names the zkRequest; the detail never echoes the reader's ids or hashes.
        let request = try AnnexCReader.makeRequest(documents: [Z.ask(specs: [unknown])], origin: TestWorld.origin)
        do {
            _ = try engine.accept(rawRequest: request.rawRequest, origin: Self.origin)
        } catch {
            #expect(error.location == Self.nsLocation && !error.detail.contains(String(repeating: "0", count: 64)))
        }
    }

    @Test(
        "A credential that cannot answer (cancelled, expired, a claim not held) and a partial approval give no presentation at all",
        .enabled(if: Z.runnable, Z.skipNote))
    func unusableCredentials() throws {
        let world = try TestWorld()
        let av = Z.av
        let cancelled = try world.context(
            [
                try world.entry(
                    id: "av", docType: av, nameSpace: av, elements: [.init("age_over_18", .bool(true))], cancelled: true
                )
            ])
        try Self.expectRefused(Z.engine(cancelled), Z.ask(), SelectionRule.noUsableCredential, atParse: false)
        let expired = try world.context(
            [
                try world.entry(
                    id: "av", docType: av, nameSpace: av, elements: [.init("age_over_18", .bool(true))],
                    validFrom: TestWorld.now.addingTimeInterval(-400 * 86400),
                    validUntil: TestWorld.now.addingTimeInterval(-86400))
            ])
        try Self.expectRefused(Z.engine(expired), Z.ask(), SelectionRule.noUsableCredential, atParse: false)
        // The credential lacks the claim: it has nothing to prove, and nothing else is sent.
        let lacking = try world.context(
            [try world.entry(id: "av", docType: av, nameSpace: av, elements: [.init("age_over_21", .bool(true))])])
        try Self.expectRefused(Z.engine(lacking), Z.ask(), SelectionRule.nothingReleasable, atParse: false)
        // Two claims approved one: a proof is of every claim or none.
        let (_, context) = try Z.fixture()
        let engine = Z.engine(context)
        let two = Z.ask(
            TestWorld.mDL, TestWorld.mDLNS, ["age_over_18", "age_over_21"],
            specs: [LongfellowCircuit.table.first { $0.version == 7 && $0.attributes == 2 }!.spec])
        let request = try AnnexCReader.makeRequest(documents: [two], origin: TestWorld.origin)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: Self.origin)
        expectRefusal(ZeroKnowledgeRule.notProvable) {
            try engine.respond(to: parsed, approving: .elements([ElementID(TestWorld.mDLNS, "age_over_18")]))
        }
    }

    @Test(
        "At most maxProofsPerResponse documents are proven in one response; more are refused, not answered in plain",
        .enabled(if: Z.runnable, Z.skipNote))
    func tooManyProofs() throws {
        let (_, context) = try Z.fixture()
        let engine = TestWorld.engine(context, protocols: [.annexC]) {
            $0.zeroKnowledge = .longfellow(Z.installation, maxProofsPerResponse: 1)
        }
        let request = try AnnexCReader.makeRequest(
            documents: [Z.ask(), Z.ask(TestWorld.mDL, TestWorld.mDLNS)], origin: TestWorld.origin)
        expectRefusal(ZeroKnowledgeRule.tooManyProofs) {
            try engine.accept(rawRequest: request.rawRequest, origin: Self.origin)
        }
    }

    // MARK: The prover's own failures, through a stand-in library

    /// A stand-in for libzk_cred_longfellow.so exporting its uniffi symbols: `contract` and `checksum`
    /// (of prove) as given, and a prove that `mode` decides: "error" (an error object), "panic", or
    /// "sleep" (3 s, then an error).
    static func standIn(
        contract: Int = 30, proveChecksum: Int = 14354, mode: String = "error", extraSource: String = ""
    ) throws -> LongfellowInstallation {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-zk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("lib"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("circuits"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        // The circuits are the real ones (their digests are checked before the library sees them).
        for c in LongfellowCircuit.table {
            let from = Z.installation.directory + "/circuits/" + c.circuitHash
            if FileManager.default.fileExists(atPath: from) {
                try FileManager.default.copyItem(atPath: from, toPath: dir.path + "/circuits/" + c.circuitHash)
            }
        }
        let proveBody =
            switch mode {
            case "panic": "s->code = 2; s->error_buf = mk(0);"
            case "sleep": "sleep(3); s->code = 1; s->error_buf = mk(8);"
            default: "s->code = 1; s->error_buf = mk(8);"
            }
        let source = """
            #include <stdint.h>
            #include <stdlib.h>
            #include <string.h>
            #include <unistd.h>
            typedef struct { uint64_t capacity; uint64_t len; uint8_t *data; } RB;
            typedef struct { int32_t len; const uint8_t *data; } FB;
            typedef struct { int8_t code; RB error_buf; } St;
            static RB mk(uint64_t n) { RB b = { n, n, n ? calloc(1, n) : NULL }; return b; }
            uint32_t ffi_zk_cred_longfellow_uniffi_contract_version(void) { return \(contract); }
            uint16_t uniffi_zk_cred_longfellow_checksum_func_initialize_prover(void) { return 50744; }
            uint16_t uniffi_zk_cred_longfellow_checksum_func_initialize_verifier(void) { return 56244; }
            uint16_t uniffi_zk_cred_longfellow_checksum_func_prove(void) { return \(proveChecksum); }
            uint16_t uniffi_zk_cred_longfellow_checksum_func_verify(void) { return 63331; }
            RB ffi_zk_cred_longfellow_rustbuffer_from_bytes(FB f, St *s) {
                (void)s; RB b = mk((uint64_t)f.len); if (f.len) memcpy(b.data, f.data, (size_t)f.len); return b; }
            void ffi_zk_cred_longfellow_rustbuffer_free(RB b, St *s) { (void)s; free(b.data); }
            uint64_t uniffi_zk_cred_longfellow_fn_func_initialize_prover(FB c, RB v, uint8_t n, St *s) {
                (void)c; (void)n; (void)s; free(v.data); return 1; }
            uint64_t uniffi_zk_cred_longfellow_fn_func_initialize_verifier(FB c, RB v, uint8_t n, St *s) {
                (void)c; (void)n; (void)s; free(v.data); return 2; }
            RB uniffi_zk_cred_longfellow_fn_func_prove(uint64_t h, FB r, RB ns, RB cl, FB t, RB tm, St *s) {
                (void)h; (void)r; (void)t; free(ns.data); free(cl.data); free(tm.data); \(proveBody) return mk(0); }
            void uniffi_zk_cred_longfellow_fn_func_verify(uint64_t h, FB k, RB a, RB d, FB n, FB t, RB tm, FB p, St *s) {
                (void)h; (void)k; (void)n; (void)t; (void)p; free(a.data); free(d.data); free(tm.data); s->code = 1; s->error_buf = mk(8); }
            uint64_t uniffi_zk_cred_longfellow_fn_clone_mdoczkprover(uint64_t h, St *s) { (void)s; return h; }
            uint64_t uniffi_zk_cred_longfellow_fn_clone_mdoczkverifier(uint64_t h, St *s) { (void)s; return h; }
            void uniffi_zk_cred_longfellow_fn_free_mdoczkprover(uint64_t h, St *s) { (void)h; (void)s; }
            void uniffi_zk_cred_longfellow_fn_free_mdoczkverifier(uint64_t h, St *s) { (void)h; (void)s; }
            void uniffi_zk_cred_longfellow_fn_free_mdoczkerror(uint64_t h, St *s) { (void)h; (void)s; }
            \(extraSource)
            """
        let c = dir.appendingPathComponent("standin.c")
        try source.write(to: c, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["cc", "-shared", "-fPIC", "-o", dir.path + "/lib/" + LongfellowInstallation.libraryName, c.path]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "the stand-in library did not compile")
        let library = try Data(
            contentsOf: URL(fileURLWithPath: dir.path + "/lib/" + LongfellowInstallation.libraryName))
        return LongfellowInstallation(
            directory: dir.path, acceptingLibraryDigestsForTesting: [hexString(MdocDigest.sha256(library))])
    }

    @Test(
        "An unpinned prover library is refused by its digest before any of its code runs (its constructor never fires)",
        .enabled(if: Z.runnable, Z.skipNote))
    func unpinnedLibraryNeverRuns() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-ctor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        // A stand-in whose constructor writes the marker; its circuits are the real ones, so a proof is
        // decided on and the prover loads its library.
        let constructor = """
            #include <stdio.h>
            __attribute__((constructor)) static void ran(void) {
                FILE *f = fopen("\(marker.path)", "w"); if (f) { fputs("ran", f); fclose(f); } }
            """
        let standIn = try Self.standIn(extraSource: constructor)
        let pinnedOnly = LongfellowInstallation(directory: standIn.directory)
        try Self.proverRefusal(pinnedOnly, LongfellowRule.libraryDigest, keepDirectory: true)
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the unpinned library's constructor ran")
        // The same file accepted by its digest (as the stand-in tests do) is loaded and its constructor
        // runs: the marker is a real witness.
        try Self.proverRefusal(standIn, LongfellowRule.proverFailed)
        #expect(FileManager.default.fileExists(atPath: marker.path))
    }

    static func proverRefusal<R: RefusalRule>(
        _ installation: LongfellowInstallation, _ rule: R, timeLimit: Double = 60, keepDirectory: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        defer { if !keepDirectory { try? FileManager.default.removeItem(atPath: installation.directory) } }
        let (_, context) = try Z.fixture()
        let engine = TestWorld.engine(context, protocols: [.annexC]) {
            $0.zeroKnowledge = .longfellow(installation, timeLimit: timeLimit)
        }
        // The decision is taken (a proof), then the prover refuses: nothing leaves.
        try Self.expectRefused(engine, Z.ask(), rule, atParse: false, sourceLocation: sourceLocation)
    }

    @Test(
        "The prover library is refused unless its contract and checksums are the pinned ones; a failing, panicking or overrunning prover gives no output",
        .enabled(if: Z.runnable, Z.skipNote))
    func proverFailures() throws {
        try Self.proverRefusal(try Self.standIn(contract: 29), LongfellowRule.libraryContract)
        try Self.proverRefusal(try Self.standIn(proveChecksum: 1), LongfellowRule.libraryContract)
        try Self.proverRefusal(try Self.standIn(mode: "error"), LongfellowRule.proverFailed)
        try Self.proverRefusal(try Self.standIn(mode: "panic"), LongfellowRule.proverPanicked)
        // A proof that overruns its budget is abandoned: refused at once, and its slot stays taken until
        // it ends, so the next proof waits and is refused too (the limit counts abandoned proofs).
        let slow = try Self.standIn(mode: "sleep")
        defer { try? FileManager.default.removeItem(atPath: slow.directory) }
        let (_, context) = try Z.fixture()
        let engine = TestWorld.engine(context, protocols: [.annexC]) {
            $0.zeroKnowledge = .longfellow(slow, maxConcurrentProofs: 1, timeLimit: 1)
        }
        let request = try AnnexCReader.makeRequest(documents: [Z.ask()], origin: TestWorld.origin)
        expectRefusal(LongfellowRule.timeLimit) {
            try engine.accept(rawRequest: request.rawRequest, origin: Self.origin)
        }
        expectRefusal(LongfellowRule.busy) { try engine.accept(rawRequest: request.rawRequest, origin: Self.origin) }
        sleep(2)
    }

    @Test(
        "A circuit file that is missing or altered is refused by its pinned digest before the library sees it",
        .enabled(if: Z.runnable, Z.skipNote))
    func circuitFiles() throws {
        let missing = try Self.standIn()
        try FileManager.default.removeItem(atPath: missing.directory + "/circuits/" + Z.v7one.circuitHash)
        // No file: the circuit is not held, so a required proof is refused at the decision.
        defer { try? FileManager.default.removeItem(atPath: missing.directory) }
        let (_, context) = try Z.fixture()
        let engine = TestWorld.engine(context, protocols: [.annexC]) { $0.zeroKnowledge = .longfellow(missing) }
        try Self.expectRefused(engine, Z.ask(), ZeroKnowledgeRule.noCircuit, atParse: true)
        let altered = try Self.standIn()
        let path = altered.directory + "/circuits/" + Z.v7one.circuitHash
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count / 2] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try Self.proverRefusal(altered, LongfellowRule.circuitDigest)
    }
}
