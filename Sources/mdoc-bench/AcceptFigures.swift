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

// MARK: AnnexC accept (reference request: mDL, 12 elements including an 8 KB portrait)

@MainActor
func acceptFigures() {
    if let op = onlyOp, op.hasPrefix("elements_") || op.hasPrefix("portrait_") { return }  // scalingFigures runs those
    let w = BenchWorld.shared
    let (now, ns, elements, context, root, readerKey, readerCert) = (
        w.now, w.ns, w.elements, w.context, w.root, w.readerKey, w.readerCert
    )
    let engine = DigitalCredentialsEngine.annexC(context, clock: { now })
    let origin = try! Origin("https://verifier.example")
    let doc = AnnexCReader.DocumentRequest(
        docType: "org.iso.18013.5.1.mDL",
        elements: elements.map { .init(ElementID(ns, $0.identifier), intentToRetain: false) })
    let plain = try! AnnexCReader.makeRequest(documents: [doc], origin: origin)
    let plainData = try! AnnexCReader.makeRequest(documents: [doc], origin: origin, framing: .dataObject)
    let signed = try! AnnexCReader.makeRequest(
        documents: [doc], origin: origin, signing: .perDocument(signer: readerKey, chain: [readerCert]))
    let floor = FloorOperations(engine: engine, request: plain, origin: origin)
    let responseSize = floor.responseSize
    let floorCore = floor.run
    let tbs = floor.tbs
    // The reader's key as the engine holds it: taken from the certificate (an EVP_PKEY, verified without conversion).
    let readerPub = try! X509Certificate(der: readerCert.der).publicKey()
    let readerSig = try! CryptoCore.PrivateKey(encoded: Array(readerKey.pkcs8PEM().utf8)).signECDSA(
        message: tbs, digest: .sha256)
    if let op = onlyOp {
        let parsedOnce = try! engine.parse(rawRequest: plain.rawRequest, origin: origin.serialized)
        let body: () -> Void
        switch op {
        case "accept": body = { blackHole(try! engine.accept(rawRequest: plain.rawRequest, origin: origin.serialized)) }
        case "accept_ios":
            body = { blackHole(try! engine.accept(rawRequest: plainData.rawRequest, origin: origin.serialized)) }
        case "accept_reader_auth":
            body = { blackHole(try! engine.accept(rawRequest: signed.rawRequest, origin: origin.serialized)) }
        case "floor": body = floorCore
        // accept (iOS framing) and its floor alternately, for a sampling profiler: both share one
        // process and one machine state, so their costs can be compared per call path.
        case "accept_ios_and_floor":
            body = {
                blackHole(try! engine.accept(rawRequest: plainData.rawRequest, origin: origin.serialized))
                floorCore()
            }
        case "floor_reader_auth":
            body = {
                floorCore()
                blackHole(try! readerPub.verifyECDSA(signature: readerSig, message: tbs, digest: .sha256))
                try! Certificate.validatePath(leaf: readerCert, anchors: [root], at: now)
            }
        case "parse": body = { blackHole(try! engine.parse(rawRequest: plain.rawRequest, origin: origin.serialized)) }
        // The same through an engine with the default configuration: every protocol, the answerability
        // rule between them (what the CLI, the C ABI and Python run).
        case "facade_parse":
            let facade = DigitalCredentialsEngine.facade(context, clock: { now })
            body = { blackHole(try! facade.parse(rawRequest: plain.rawRequest, origin: origin.serialized)) }
        case "facade_accept":
            let facade = DigitalCredentialsEngine.facade(context, clock: { now })
            body = { blackHole(try! facade.accept(rawRequest: plain.rawRequest, origin: origin.serialized)) }
        // The same with an observer installed (one event per call: two clock readings and the event).
        case "facade_accept_observed":
            var c = DigitalCredentialsEngine.Configuration()
            c.clock = { now }
            c.observer = DiscardingObserver()
            let observed = DigitalCredentialsEngine(context: context, configuration: c)
            body = { blackHole(try! observed.accept(rawRequest: plain.rawRequest, origin: origin.serialized)) }
        // The same over a context directory: each call also checks the snapshot's generation.
        case "facade_accept_store":
            let store = DigitalCredentialsEngine.facadeOverStore(context, keys: w.keys, clock: { now })
            body = { blackHole(try! store.accept(rawRequest: plain.rawRequest, origin: origin.serialized)) }
        case "respond": body = { blackHole(try! engine.respond(to: parsedOnce)) }
        default: unknownOperation(op)
        }
        runOperation(body)
    }
    let (a1, f1) = measurePair(
        "annexc.accept.reference", "floor.accept.reference", bytes: responseSize,
        {
            blackHole(try! engine.accept(rawRequest: plain.rawRequest, origin: origin.serialized))
        }, floorCore)
    let (a3, f3) = measurePair(
        "annexc.accept.reference_ios_cbor", "floor.accept.reference_ios_cbor", bytes: responseSize,
        {
            blackHole(try! engine.accept(rawRequest: plainData.rawRequest, origin: origin.serialized))
        }, floorCore)
    figures += [a3, f3]
    let (a2, f2) = measurePair(
        "annexc.accept.reference_reader_auth", "floor.accept.reference_reader_auth", bytes: responseSize,
        {
            blackHole(try! engine.accept(rawRequest: signed.rawRequest, origin: origin.serialized))
        },
        {
            floorCore()
            blackHole(try! readerPub.verifyECDSA(signature: readerSig, message: tbs, digest: .sha256))
            try! Certificate.validatePath(leaf: readerCert, anchors: [root], at: now)
        })
    figures += [a1, f1, a2, f2]
    // Stages.
    figures.append(
        measure("annexc.stage.accept_alone", bytes: responseSize) {
            blackHole(try! engine.accept(rawRequest: plain.rawRequest, origin: origin.serialized))
        })
    figures.append(measureParse("annexc.stage.parse", engine, plain.rawRequest, origin))
    figures.append(measureParse("annexc.stage.parse_reader_auth", engine, signed.rawRequest, origin))
    let parsed = try! engine.parse(rawRequest: plain.rawRequest, origin: origin.serialized)
    figures.append(measure("annexc.stage.respond", bytes: responseSize) { blackHole(try! engine.respond(to: parsed)) })
    // The store check of a directory engine (an lstat of the snapshot per call), against the same
    // engine over the snapshot in memory.
    let facade = DigitalCredentialsEngine.facade(context, clock: { now })
    let store = DigitalCredentialsEngine.facadeOverStore(context, keys: w.keys, clock: { now })
    let (s1, s2) = measurePair(
        "annexc.stage.accept_store", "annexc.stage.accept_snapshot", bytes: responseSize,
        { blackHole(try! store.accept(rawRequest: plain.rawRequest, origin: origin.serialized)) },
        { blackHole(try! facade.accept(rawRequest: plain.rawRequest, origin: origin.serialized)) })
    figures += [s1, s2]
    figures.append(
        measure("annexc.stage.chain_check") {
            try! Certificate.validatePath(leaf: readerCert, anchors: [root], at: now)
        })
}

/// An observer that keeps nothing (the benchmark of the observer's own cost).
struct DiscardingObserver: EngineObserver {
    func observe(_ event: EngineEvent) { blackHole(event.seconds) }
}
