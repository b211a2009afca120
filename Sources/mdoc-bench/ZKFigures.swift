import AnnexCReader
import DigitalCredentials
import Foundation
import Longfellow
import MdocCBOR

/// A prover that remembers the last input the engine gave it, so the prover alone can be timed on the
/// very same inputs.
final class RecordingProver: ZeroKnowledgeProver, @unchecked Sendable {
    let inner: LongfellowProver
    var last: ZkProofInput?
    init(_ inner: LongfellowProver) { self.inner = inner }
    var expectedProvingSeconds: Double { inner.expectedProvingSeconds }
    func circuit(for specs: [ZkSystemSpec], claims: Int) -> ZkSystemSpec? { inner.circuit(for: specs, claims: claims) }
    func prove(_ input: ZkProofInput) throws(PresentmentError) -> [UInt8] {
        last = input
        return try inner.prove(input)
    }
}

/// Peak resident memory of this process so far (VmHWM), in KiB.
func peakResidentKiB() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return nil }
    return Int(line.split(separator: " ").dropFirst().first ?? "")
}

/// Zero-knowledge figures (`zk.*`): a Longfellow age proof through the engine (`accept`: the device
/// signature, the proof, the ZkDocument, HPKE) against the prover alone on the same inputs, the circuit
/// load, the response size and the peak memory. A proof takes seconds, so these take few samples.
@MainActor
func zkFigures() {
    let names = ["zk.circuit_load", "zk.accept.proof", "floor.zk.prove"]
    guard filter == nil || names.contains(where: { $0.contains(filter!) }), onlyOp == nil else { return }
    let installation = LongfellowInstallation.default
    guard installation.hasLibrary else {
        if !jsonOnly {
            print("NOTICE: the Longfellow prover is not installed (scripts/zk-setup.sh); zk figures skipped")
        }
        return
    }
    let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestVectors")
    guard
        let context = try? CredentialContext.load(
            from: vectors.appendingPathComponent("context"), requirePrivateFiles: false)
            ?? nil,
        let circuit = LongfellowCircuit.table.first(where: { $0.version == 7 && $0.attributes == 1 })
    else { return }
    // The circuit load: decompression, digest, the library's prover object.
    let fresh = LongfellowProver(installation: installation)
    let t0 = now()
    try! fresh.prepare(circuit.spec)
    let load = Double(now() - t0)
    figures.append(Figure(bench: "zk.circuit_load", medianNs: load, p90Ns: load, baseline: nil))

    let recorder = RecordingProver(fresh)
    var configuration = DigitalCredentialsEngine.Configuration(protocols: [.annexC])
    configuration.zeroKnowledge = ZeroKnowledgeSettings(prover: recorder)
    let engine = DigitalCredentialsEngine(context: context, configuration: configuration)
    let av = "eu.europa.ec.av.1"
    let origin = try! Origin("https://verifier.example")
    let request = try! AnnexCReader.makeRequest(
        documents: [
            .init(
                docType: av, elements: [.init(ElementID(av, "age_over_18"), intentToRetain: false)],
                zkRequest: .init(specs: [circuit.spec], required: true))
        ], origin: origin, framing: .dataObject)
    let runs = quick ? 1 : 5
    var engineTimes = [Double]()
    var proverTimes = [Double]()
    var size = 0
    for _ in 0..<runs {
        let t = now()
        let out = try! engine.accept(rawRequest: request.rawRequest, origin: origin.serialized)
        engineTimes.append(Double(now() - t))
        size = out.count
        let input = recorder.last!
        let p = now()
        blackHole(try! fresh.prove(input))
        proverTimes.append(Double(now() - p))
    }
    engineTimes.sort()
    proverTimes.sort()
    let e = engineTimes[engineTimes.count / 2]
    let f = proverTimes[proverTimes.count / 2]
    var floorFigure = Figure(bench: "floor.zk.prove", medianNs: f, p90Ns: proverTimes.last!, baseline: nil)
    floorFigure.peakKiB = peakResidentKiB()
    var engineFigure = Figure(
        bench: "zk.accept.proof", medianNs: e, p90Ns: engineTimes.last!, baseline: "floor.zk.prove", ratio: e / f)
    engineFigure.bytes = size
    figures += [engineFigure, floorFigure]
}
