import DigitalCredentials
import Foundation
import Testing
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import TestWorld
import HPKE
import MdocCBOR

/// One engine, several threads, tens of thousands of `accept` calls on a pool of mixed requests
/// (every framing, DeviceRequest 1.0 and 1.1, no reader authentication / readerAuth / readerAuthAll,
/// one or two documents). Every response is opened and verified as a verifier would (HPKE open, issuer
/// signature and chain, digests, device signature, exactly the requested elements), and every
/// response must carry a fresh ephemeral key. `scripts/test.sh` also runs this suite under TSan.
///
/// Size: `MDOC_STRESS_ACCEPTS` (default 20 000) over `MDOC_STRESS_THREADS` threads (default 2).
@Suite("Stress: one engine shared by several threads")
struct StressTests {
    /// One pooled request and what its verified response must contain.
    struct Case: Sendable {
        let request: AnnexCReader.BuiltRequest
        let expected: [String: Set<String>]
    }

    /// Collects per-thread results under a lock.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var verified = 0
        private(set) var failures: [String] = []
        private(set) var ephemeralKeys = Set<[UInt8]>()
        func add(verified n: Int, failures f: [String], keys: [[UInt8]]) {
            lock.lock()
            defer { lock.unlock() }
            verified += n
            failures += f.prefix(5)
            ephemeralKeys.formUnion(keys)
        }
    }

    static func pool(_ world: TestWorld) throws -> [Case] {
        let mdl = TestWorld.ask(["family_name", "given_name", "birth_date", "portrait", "age_over_21"])
        let pid = TestWorld.ask(TestWorld.pid, ["family_name", "age_over_18", "nationality"])
        let documentSets: [[AnnexCReader.DocumentRequest]] = [[mdl], [pid], [mdl, pid]]
        var cases = [Case]()
        for framing in RequestFraming.allCases {
            for version in AnnexCReader.Version.allCases {
                let signings: [AnnexCReader.Signing] =
                    version == .v1_1
                    ? [.none, world.perDocumentSigning, world.allSigning] : [.none, world.perDocumentSigning]
                for signing in signings {
                    for docs in documentSets {
                        let req = try AnnexCReader.makeRequest(
                            documents: docs, origin: TestWorld.origin, framing: framing, signing: signing,
                            version: version)
                        var expected = [String: Set<String>]()
                        for d in docs { expected[d.docType] = Set(d.elements.map { $0.element.identifier }) }
                        cases.append(Case(request: req, expected: expected))
                    }
                }
            }
        }
        return cases
    }

    @Test("Mixed accepts from several threads: every response verifies, every ephemeral key is fresh")
    func stress() throws {
        let env = ProcessInfo.processInfo.environment
        let total = env["MDOC_STRESS_ACCEPTS"].flatMap(Int.init) ?? 20_000
        let threads = max(2, env["MDOC_STRESS_THREADS"].flatMap(Int.init) ?? 2)
        let world = try TestWorld()
        let engine = world.engine(
            try world.context(
                [try world.entry(id: "mdl"), try world.entry(id: "pid", docType: TestWorld.pid)], trust: world.trusted))
        try Self.run(engine, world, total: total, threads: threads, label: "stress")
    }

    @Test(
        "Device keys in one SoftHSM2 token: 2 threads x 2,000 mixed accepts, every response verified",
        .enabled(if: TokenContext.runnable, TokenContext.skipNote))
    func stressWithTokenKeys() throws {
        let env = ProcessInfo.processInfo.environment
        let total = env["MDOC_STRESS_TOKEN_ACCEPTS"].flatMap(Int.init) ?? 4_000
        let world = try TestWorld()
        let context = try world.tokenContext(
            [try world.entry(id: "mdl"), try world.entry(id: "pid", docType: TestWorld.pid)], trust: world.trusted)
        #expect(context.entries.allSatisfy { $0.deviceKeyReference.hasPrefix("pkcs11:") })
        try Self.run(world.engine(context), world, total: total, threads: 2, label: "stress (SoftHSM2 keys)")
    }

    /// `total` accepts of the mixed pool from `threads` threads, each response opened and verified.
    /// `accept` of a pooled case, opened and verified as a verifier would: the response and what it
    /// released, element identifiers by docType.
    static func answer(_ c: Case, _ engine: DigitalCredentialsEngine, _ iaca: Certificate) throws -> (
        response: Data, released: [String: Set<String>]
    ) {
        let response = try engine.accept(rawRequest: c.request.rawRequest, origin: "https://verifier.example")
        let verified = try AnnexCReader.openResponse(response, for: c.request, issuerRoots: [iaca], at: TestWorld.now)
        var got = [String: Set<String>]()
        for d in verified.documents { got[d.docType] = Set(d.elements.map { $0.element.identifier }) }
        return (response, got)
    }

    static func run(_ engine: DigitalCredentialsEngine, _ world: TestWorld, total: Int, threads: Int, label: String)
        throws
    {
        let cases = try Self.pool(world)
        #expect(cases.count == 60)
        let iaca = world.iaca
        let tally = Tally()
        let start = Date()
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            var ok = 0
            var failures = [String]()
            var keys = [[UInt8]]()
            let share = total / threads + (t < total % threads ? 1 : 0)
            keys.reserveCapacity(share)
            for i in 0..<share {
                let c = cases[(i * threads + t) % cases.count]
                do {
                    let (response, got) = try Self.answer(c, engine, iaca)
                    guard got == c.expected else {
                        failures.append("case \(i): released \(got) instead of \(c.expected)")
                        continue
                    }
                    let enc = try EncryptedResponse(response: response).enc
                    guard enc.count == 65 else {
                        failures.append("case \(i): no enc")
                        continue
                    }
                    keys.append(enc)
                    ok += 1
                } catch {
                    failures.append("case \(i): \(error)")
                }
            }
            tally.add(verified: ok, failures: failures, keys: keys)
        }
        let seconds = Date().timeIntervalSince(start)
        print(
            "\(label): \(tally.verified)/\(total) accepts verified on \(threads) threads in \(String(format: "%.1f", seconds)) s "
                + "(\(Int(Double(total) / seconds)) accept+verify per second), \(tally.ephemeralKeys.count) distinct ephemeral keys"
        )
        #expect(tally.failures.isEmpty, "\(tally.failures)")
        #expect(tally.verified == total)
        #expect(tally.ephemeralKeys.count == total)
    }

    @Test(
        "Cold holders: threads racing to index a recorded snapshot's credentials and resolve their keys on first use; every response verifies"
    )
    func coldRaces() throws {
        let world = try TestWorld()
        let snapshot = try world.context(
            [try world.entry(id: "mdl"), try world.entry(id: "pid", docType: TestWorld.pid)], trust: world.trusted
        ).encoded()
        let cases = try Self.pool(world)
        let iaca = world.iaca
        let tally = Tally()
        let rounds = 150
        for round in 0..<rounds {
            // A fresh context each round: nothing indexed, no key resolved, both threads get there first.
            let context = try CredentialContext(encoded: snapshot, keyResolver: world.resolver)
            #expect(context.credentials.allSatisfy { !$0.isIndexed })
            let engine = world.engine(context)
            DispatchQueue.concurrentPerform(iterations: 2) { t in
                let c = cases[(round * 2 + t) % cases.count]
                do {
                    let got = try Self.answer(c, engine, iaca).released
                    tally.add(
                        verified: got == c.expected ? 1 : 0,
                        failures: got == c.expected ? [] : ["round \(round): released \(got)"], keys: [])
                } catch {
                    tally.add(verified: 0, failures: ["round \(round): \(error)"], keys: [])
                }
            }
        }
        #expect(tally.failures.isEmpty, "\(tally.failures)")
        #expect(tally.verified == 2 * rounds)
    }

    /// The process-wide certificate cache is shared by every engine and thread; this drives it past
    /// its capacity (so it is emptied under contention) from several threads at once. Under TSan (see
    /// `scripts/test.sh`) a lock the sanitizer cannot see — `Synchronization.Mutex` is one on Linux —
    /// is reported as a race here.
    @Test("Certificate cache: distinct certificates parsed from several threads past the cache capacity")
    func certificateCacheContention() throws {
        let rootKey = try SoftwareSigner.generate()
        let root = try Certificate.issue(
            subject: .init(commonName: "Cache Root"), publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey,
            serial: 1, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerRoot)
        let ders = try (0..<300).map { serial in
            try Certificate.issue(
                subject: .init(commonName: "Cache Reader \(serial)"), publicKey: rootKey.publicKey,
                issuer: root, issuerKey: rootKey, serial: UInt64(serial + 2),
                notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerAuthentication
            ).der
        }
        let tally = Tally()
        DispatchQueue.concurrentPerform(iterations: 2) { t in
            var failures = [String]()
            var ok = 0
            for round in 0..<4 {
                for i in 0..<ders.count {
                    let k = t == 0 ? i : ders.count - 1 - i
                    do {
                        let c = try Certificate(der: ders[k])
                        if c.der == ders[k] {
                            ok += 1
                        } else {
                            failures.append("round \(round) cert \(k): different bytes")
                        }
                    } catch {
                        failures.append("round \(round) cert \(k): \(error)")
                    }
                }
            }
            tally.add(verified: ok, failures: failures, keys: [])
        }
        #expect(tally.failures.isEmpty, "\(tally.failures)")
        #expect(tally.verified == 2 * 4 * 300)
    }
}
