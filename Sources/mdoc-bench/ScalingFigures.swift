import Foundation
import Dispatch
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR
import HPKE
import CryptoCore
import DigitalCredentials
import AnnexCReader

// MARK: Scaling: one engine shared by 1 and 2 threads; cost growth with elements and portrait size

@MainActor
func scalingFigures() {
    let clock = Date(timeIntervalSince1970: 1_780_000_000)
    let day: TimeInterval = 86400
    let dsKey = try! SoftwareSigner.generate()
    let ds = try! Certificate.issue(
        subject: .init(commonName: "Scale DS"), publicKey: dsKey.publicKey, issuer: nil, issuerKey: dsKey, serial: 1,
        notBefore: clock - day, notAfter: clock + 900 * day, profile: .documentSigner)
    let ns = "org.iso.18013.5.1"
    func engineFor(elements: Int, portrait: Int) -> (DigitalCredentialsEngine, AnnexCReader.BuiltRequest) {
        let device = try! SoftwareSigner.generate()
        var elems = (0..<max(0, elements - 1)).map { MdocIssuer.Element("element_\($0)", .text("value \($0)")) }
        elems.append(.init("portrait", .bytes([UInt8](repeating: 0xd8, count: portrait))))
        let issued = try! MdocIssuer(signer: dsKey, certificateChain: [ds]).issue(
            docType: "org.iso.18013.5.1.mDL", nameSpaces: [(ns, elems)],
            deviceKey: device.publicKey, signed: clock - day, validFrom: clock - day, validUntil: clock + 365 * day)
        let ctx = try! CredentialContext(
            entries: [.init(id: "c", issuerSigned: issued, deviceKeyReference: "k")],
            keyResolver: InMemoryKeyResolver(["k": device]))
        let engine = DigitalCredentialsEngine.annexC(ctx, clock: { clock })
        let req = try! AnnexCReader.makeRequest(
            documents: [
                .init(
                    docType: "org.iso.18013.5.1.mDL",
                    elements: elems.map { .init(ElementID(ns, $0.identifier), intentToRetain: false) })
            ],
            origin: try! Origin("https://verifier.example"), framing: .dataObject)
        return (engine, req)
    }
    // `--op elements_N` / `--op portrait_NK`: one growth point N times, untimed (callgrind: instructions
    // and mallocs per accept as the released elements or bytes grow).
    if let op = onlyOp {
        let (engine, req): (DigitalCredentialsEngine, AnnexCReader.BuiltRequest)
        if op.hasPrefix("elements_"), let n = Int(op.dropFirst(9)) {
            (engine, req) = engineFor(elements: n, portrait: 0)
        } else if op.hasPrefix("portrait_"), let kb = Int(op.dropFirst(9).dropLast()) {
            (engine, req) = engineFor(elements: 12, portrait: kb * 1024)
        } else {
            unknownOperation(op)
        }
        runOperation { blackHole(try! engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example")) }
    }
    for n in [1, 10, 50, 200] {
        let (engine, req) = engineFor(elements: n, portrait: 0)
        figures.append(
            measure("annexc.accept.elements_\(n)") {
                blackHole(try! engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
            })
    }
    for kb in [8, 64, 512] {
        let (engine, req) = engineFor(elements: 12, portrait: kb * 1024)
        figures.append(
            measure("annexc.accept.portrait_\(kb)k", bytes: kb * 1024) {
                blackHole(try! engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
            })
    }
    // Throughput: the same engine from 1 and from 2 threads; beside it, one engine per thread (shared
    // state such as reference counts on the one credential cannot bounce between cores) and the floor
    // (the OpenSSL work alone), which shows how far the machine and OpenSSL themselves scale. Rounds
    // alternate the variants and each figure is the median round, so host drift hits all alike.
    if filter == nil || "annexc.throughput".contains(filter!) || "floor.throughput".contains(filter!) {
        let (engine, req) = engineFor(elements: 12, portrait: 8192)
        let (engine2, _) = engineFor(elements: 12, portrait: 8192)
        let engines = [engine, engine2]
        // Two engines over one context: what the threads then share is the credential, its index and
        // its signer, not the engine.
        let sameContext = [engine, DigitalCredentialsEngine.annexC(engine.context, clock: { clock })]
        let floorOps = FloorOperations(engine: engine, request: req, origin: try! Origin("https://verifier.example"))
        let iterations = quick ? 40 : 600
        func run(threads: Int, _ body: @Sendable (Int) -> Void) -> Double {
            let t0 = now()
            DispatchQueue.concurrentPerform(iterations: threads) { t in
                for _ in 0..<(iterations / threads) { body(t) }
            }
            return Double(iterations) / (Double(now() - t0) / 1e9)
        }
        let shared: @Sendable (Int) -> Void = { _ in
            blackHole(try! engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
        }
        let own: @Sendable (Int) -> Void = { t in
            blackHole(try! engines[t].accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
        }
        let ownOverOneContext: @Sendable (Int) -> Void = { t in
            blackHole(try! sameContext[t].accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
        }
        let floorBody: @Sendable (Int) -> Void = { _ in floorOps.run() }
        _ = run(threads: 1, shared)
        var rounds = [[Double]](repeating: [], count: 6)
        for _ in 0..<(quick ? 1 : 9) {
            rounds[0].append(run(threads: 1, shared))
            rounds[1].append(run(threads: 2, shared))
            rounds[2].append(run(threads: 2, own))
            rounds[3].append(run(threads: 1, floorBody))
            rounds[4].append(run(threads: 2, floorBody))
            rounds[5].append(run(threads: 2, ownOverOneContext))
        }
        let med = rounds.map { $0.sorted()[$0.count / 2] }
        func figure(_ name: String, _ perSecond: Double, baseline: String?, base: Double?) -> Figure {
            var f = Figure(bench: name, medianNs: 1e9 / perSecond, p90Ns: 1e9 / perSecond, baseline: baseline)
            if let base { f.ratio = base / perSecond }  // time ratio; throughput scaling = 1 / ratio
            return f
        }
        figures += [
            figure("annexc.throughput.1_thread_per_s", med[0], baseline: nil, base: nil),
            figure(
                "annexc.throughput.2_threads_per_s", med[1], baseline: "annexc.throughput.1_thread_per_s", base: med[0]),
            figure(
                "annexc.throughput.2_engines_per_s", med[2], baseline: "annexc.throughput.1_thread_per_s", base: med[0]),
            figure(
                "annexc.throughput.2_engines_one_context_per_s", med[5], baseline: "annexc.throughput.1_thread_per_s",
                base: med[0]),
            figure("floor.throughput.1_thread_per_s", med[3], baseline: nil, base: nil),
            figure(
                "floor.throughput.2_threads_per_s", med[4], baseline: "floor.throughput.1_thread_per_s", base: med[3]),
        ]
    }
}

/// The primitives one by one, for reading the floor.
@MainActor
func primitiveFigures() {
    let peer = try! CryptoCore.PrivateKey.generate(.ec(.p256)).publicKey
    let mine = try! CryptoCore.PrivateKey.generate(.ec(.p256))
    let point = peer.rawRepresentation
    figures.append(measure("openssl.p256.keygen") { blackHole(try! CryptoCore.PrivateKey.generate(.ec(.p256))) })
    figures.append(
        measure("openssl.p256.keygen_for_agreement") {
            blackHole(try! CryptoCore.PrivateKey.generateForAgreement(.ec(.p256)))
        })
    figures.append(measure("openssl.p256.ecdh") { blackHole(try! mine.sharedSecret(with: peer)) })
    figures.append(
        measure("openssl.p256.public_key_import") {
            blackHole(try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: point))
        })
    figures.append(
        measure("openssl.p256.ecdsa_sign") { blackHole(try! mine.signECDSA(message: point, digest: .sha256)) })
}
