import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR
import CryptoCore
import DigitalCredentials
import MdocRespondC
import CMdocRespondABI
import AnnexCReader

// MARK: A holder's first request: snapshot bytes → engine → accept, against a warm engine

/// A holder whose snapshot holds `count` credentials: the reference mDL (what the request asks for)
/// and `count − 1` other documents of their own docTypes (12 elements with an 8 KB portrait each, as
/// a PID or a second licence would be), every device key in its own PKCS#8 file (0600) under a
/// private directory. Built once per count.
struct ColdHolder {
    let directory: URL
    let snapshot: [UInt8]

    @MainActor
    init(count: Int) {
        let w = BenchWorld.shared
        let fm = FileManager.default
        let directory = fm.temporaryDirectory.appendingPathComponent("mdoc-bench-cold-\(getpid())-\(count)")
        self.directory = directory
        try? fm.removeItem(at: directory)
        try! fm.createDirectory(at: directory.appendingPathComponent("keys"), withIntermediateDirectories: true)
        chmod(directory.path, 0o700)
        chmod(directory.appendingPathComponent("keys").path, 0o700)
        func writeKey(_ signer: SoftwareSigner, _ name: String) -> String {
            let reference = "keys/\(name).pem"
            let path = directory.appendingPathComponent(reference).path
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            precondition(fd >= 0)
            let pem = Array(try! signer.pkcs8PEM().utf8)
            precondition(write(fd, pem, pem.count) == pem.count)
            close(fd)
            return reference
        }
        var entries = [
            CredentialContext.Entry(
                id: "mdl", issuerSigned: w.context.credentials[0].issuerSignedBytes,
                deviceKeyReference: writeKey(w.deviceKey, "mdl"))
        ]
        let day: TimeInterval = 86400
        let dsKey = try! SoftwareSigner.generate()
        let iacaKey = try! SoftwareSigner.generate()
        let iaca = try! Certificate.issue(
            subject: .init(commonName: "Bench Other IACA", country: "UT"), publicKey: iacaKey.publicKey, issuer: nil,
            issuerKey: iacaKey, serial: 11, notBefore: w.now - day, notAfter: w.now + 900 * day, profile: .iaca)
        let ds = try! Certificate.issue(
            subject: .init(commonName: "Bench Other DS"), publicKey: dsKey.publicKey, issuer: iaca, issuerKey: iacaKey,
            serial: 12, notBefore: w.now - day, notAfter: w.now + 900 * day, profile: .documentSigner)
        let issuer = MdocIssuer(signer: dsKey, certificateChain: [ds])
        for i in 1..<count {
            let device = try! SoftwareSigner.generate()
            let issued = try! issuer.issue(
                docType: "org.example.bench.document\(i)", nameSpaces: [("org.example.bench", w.elements)],
                deviceKey: device.publicKey, signed: w.now - day, validFrom: w.now - day, validUntil: w.now + 365 * day)
            entries.append(
                .init(id: "doc\(i)", issuerSigned: issued, deviceKeyReference: writeKey(device, "doc\(i)")))
        }
        snapshot = try! CredentialContext(
            entries: entries, readerTrust: w.context.readerTrust,
            keyResolver: FileKeyResolver(directory: directory)
        ).encoded()
    }
}

/// `accept` of the reference request (page framing) by an engine opened for it from the holder's
/// snapshot bytes — what a backend that keeps no engine per holder does for every request — against
/// the same request answered by a warm engine over the same snapshot; through the Swift API and through
/// the C ABI (`mdoc_engine_open_snapshot`, `mdoc_accept`, `mdoc_free`, `mdoc_engine_release`).
@MainActor
func coldFigures() {
    let names =
        [1, 4, 32].flatMap { ["annexc.cold.accept_\($0)", "abi.cold.accept_\($0)", "annexc.cold.floor_\($0)"] } + [
            "cold.stage.snapshot_1", "cold.stage.snapshot_32", "cold.stage.engine_open_close", "cold.stage.key_file",
            "cold.stage.key_file_recorded", "cold.stage.key_import", "cold.stage.credential_sha256",
            "cold.stage.credential_parse",
            "cold.memory_per_engine",
        ]
    if let op = onlyOp, !op.hasPrefix("cold_") && !op.hasPrefix("warm_") { return }
    if onlyOp == nil, let filter, !names.contains(where: { $0.contains(filter) }) && !"warm".contains(filter) {
        return
    }
    let w = BenchWorld.shared
    let now = w.now
    let origin = try! Origin("https://verifier.example")
    let doc = AnnexCReader.DocumentRequest(
        docType: "org.iso.18013.5.1.mDL",
        elements: w.elements.map { .init(ElementID(w.ns, $0.identifier), intentToRetain: false) })
    let request = try! AnnexCReader.makeRequest(documents: [doc], origin: origin).rawRequest
    let requestBytes = [UInt8](request)
    let clock = MdocDate.formatDateTime(now)
    for count in [1, 4, 32] {
        if let op = onlyOp, !op.hasSuffix("_\(count)") { continue }
        let holder = ColdHolder(count: count)
        defer { try? FileManager.default.removeItem(at: holder.directory) }
        var configuration = DigitalCredentialsEngine.Configuration()
        configuration.clock = { now }
        let resolver = FileKeyResolver(directory: holder.directory)
        let snapshot = holder.snapshot
        let cold = {
            let context = try! CredentialContext(encoded: snapshot, keyResolver: resolver)
            let engine = DigitalCredentialsEngine(context: context, configuration: configuration)
            blackHole(try! engine.accept(rawRequest: request, origin: origin.serialized))
        }
        let warmEngine = DigitalCredentialsEngine(
            context: try! CredentialContext(encoded: snapshot, keyResolver: resolver), configuration: configuration)
        let warm = { blackHole(try! warmEngine.accept(rawRequest: request, origin: origin.serialized)) }
        // What a new engine cannot skip for the credential the request selects, on top of a warm answer:
        // its device key read from its file under the snapshot's record and imported into OpenSSL (the
        // scalar alone: the record spares the d·G check), and the SHA-256 that confirms the credential's
        // bytes are the ones checked at import. Everything else a cold request does is ours.
        let keyRecord = try! resolver.recordedSigner(for: "keys/mdl.pem", recorded: nil).record
        let selectedBytes = w.context.credentials[0].issuerSignedBytes
        let coldFloor = {
            warm()
            blackHole(try! resolver.recordedSigner(for: "keys/mdl.pem", recorded: keyRecord))
            blackHole(MdocDigest.sha256(selectedBytes))
        }
        let config = "{\"testing\":true,\"clock\":\"\(clock)\",\"keyDirectory\":\"\(holder.directory.path)\"}"
        var error = mdoc_error()
        let coldABI = {
            var engine: OpaquePointer?
            var rc = snapshot.withUnsafeBufferPointer {
                mdocEngineOpenSnapshot($0.baseAddress, $0.count, config, &engine, &error)
            }
            precondition(rc == MDOC_OK)
            var out: UnsafeMutablePointer<UInt8>?
            var outCount = 0
            rc = requestBytes.withUnsafeBufferPointer {
                mdocAccept(engine, $0.baseAddress, $0.count, origin.serialized, &out, &outCount, &error)
            }
            precondition(rc == MDOC_OK)
            mdocFree(out)
            precondition(mdocEngineRelease(engine) == MDOC_OK)
        }
        if let op = onlyOp {
            // `--op cold_accept_N`, `cold_abi_accept_N`, `warm_accept_N` for scripts/instructions.sh.
            let body: () -> Void
            switch op {
            case "cold_accept_\(count)": body = cold
            case "cold_abi_accept_\(count)": body = coldABI
            case "warm_accept_\(count)": body = warm
            case "cold_floor_\(count)": body = coldFloor
            default: unknownOperation(op)
            }
            runOperation(body)
        }
        let (a, b) = measurePair("annexc.cold.accept_\(count)", "annexc.warm.accept_\(count)", cold, warm)
        let (c, _) = measurePair("abi.cold.accept_\(count)", "annexc.warm.accept_\(count)", coldABI, warm)
        let (d, e) = measurePair(
            "annexc.cold.accept_\(count).against_floor", "annexc.cold.floor_\(count)", cold, coldFloor)
        figures += [a, b, c, d, e]
        guard count == 1 || count == 32 else { continue }
        // The cold path's stages, each alone (what the difference above is made of).
        figures.append(
            measure("cold.stage.snapshot_\(count)") {
                blackHole(try! CredentialContext(encoded: snapshot, keyResolver: resolver))
            })
        if count == 1 {
            let loaded = try! CredentialContext(encoded: snapshot, keyResolver: resolver)
            figures.append(
                measure("cold.stage.engine_open_close") {
                    blackHole(DigitalCredentialsEngine(context: loaded, configuration: configuration))
                })
            figures.append(
                measure("cold.stage.key_file") { blackHole(try! resolver.signer(for: "keys/mdl.pem")) })
            // The same file under the snapshot's record of it (what a cold holder's first request does).
            figures.append(
                measure("cold.stage.key_file_recorded") {
                    blackHole(try! resolver.recordedSigner(for: "keys/mdl.pem", recorded: keyRecord))
                })
            let pem = Array(try! w.deviceKey.pkcs8PEM().utf8)
            figures.append(
                measure("cold.stage.key_import") {
                    blackHole(try! SoftwareSigner(encodedPrivateKey: pem))
                })
            let issuerSigned = loaded.credentials[0].issuerSignedBytes
            figures.append(
                measure("cold.stage.credential_sha256") { blackHole(MdocDigest.sha256(issuerSigned)) })
            figures.append(
                measure("cold.stage.credential_parse") { blackHole(try! IssuerSigned(encoded: issuerSigned)) })
            // What a warm engine holds: resident memory per engine kept after answering one request
            // (100 engines, each over its own context from its own copy of the snapshot's bytes, as a
            // backend holds one buffer per holder: the engine reads credentials in place in it, so the
            // buffer is part of what it keeps; /proc/self/statm).
            if filter == nil || "cold.memory_per_engine".contains(filter!) {
                func residentBytes() -> Int {
                    let fields = ((try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "")
                        .split(separator: " ")
                    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
                }
                let before = residentBytes()
                var kept = [DigitalCredentialsEngine]()
                for _ in 0..<100 {
                    let own = snapshot.withUnsafeBufferPointer { [UInt8]($0) }
                    let e = DigitalCredentialsEngine(
                        context: try! CredentialContext(encoded: own, keyResolver: resolver),
                        configuration: configuration)
                    blackHole(try! e.accept(rawRequest: request, origin: origin.serialized))
                    kept.append(e)
                }
                let perEngine = (residentBytes() - before) / 100
                blackHole(kept)
                if !jsonOnly {
                    print(
                        "cold.memory_per_engine: \(perEngine) bytes resident per warm engine (1 credential, its snapshot bytes included)"
                    )
                }
                print("{\"bench\":\"cold.memory_per_engine\",\"bytes\":\(perEngine)}")
            }
        }
    }
}
