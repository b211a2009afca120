import Foundation
import CMdocRespondABI
import DigitalCredentials
import MdocCBOR
import MdocRespondC
import Presentment

// MARK: The C ABI beside the Swift API, on the CLI process figure's request

/// `accept` of `TestVectors/requests/mdl-dataObject-v1.0-readerAuth.json` (the request of
/// `cli.respond.process`, same clock) from a private copy of the built-in context, through the Swift
/// API (`DigitalCredentialsEngine.accept`) and through the C ABI's `mdoc_accept` + `mdoc_free` on an
/// engine opened with `mdoc_engine_open`, interleaved. The difference is the C boundary: the handle
/// lookup, the bounded origin scan and UTF-8 check, and the copy of the response into a malloc'd
/// buffer. `python/bench.py` measures the Python binding on the same request against these figures.
@MainActor
func abiFigures() {
    if let filter, !"abi.accept.vector_request swift.accept.vector_request".contains(filter) { return }
    if let op = onlyOp, op != "abi_accept" && op != "abi_swift_accept" { unknownOperation(op) }
    let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestVectors")
    let requestFile = vectors.appendingPathComponent("requests/mdl-dataObject-v1.0-readerAuth.json")
    guard let request = FileManager.default.contents(atPath: requestFile.path) else {
        if !jsonOnly { print("NOTICE: \(requestFile.path) not found; the C ABI figures are skipped") }
        return
    }
    // A private copy: the engine opens only contexts whose files are the user's own, mode 0600.
    let fm = FileManager.default
    let dir = fm.temporaryDirectory.appendingPathComponent("mdoc-bench-abi-\(getpid())")
    defer { try? fm.removeItem(at: dir) }
    do {
        try fm.copyItem(at: vectors.appendingPathComponent("context"), to: dir)
        for case let name as String in fm.enumerator(atPath: dir.path)! {
            let path = dir.appendingPathComponent(name).path
            var isDir: ObjCBool = false
            _ = fm.fileExists(atPath: path, isDirectory: &isDir)
            chmod(path, isDir.boolValue ? 0o700 : 0o600)
        }
        chmod(dir.path, 0o700)
    } catch {
        print("NOTICE: the context copy failed (\(error)); the C ABI figures are skipped")
        return
    }
    let clock = "2027-03-01T12:00:00Z"
    let date = MdocDate.parseDateTime(clock)!
    let context = try! CredentialContext.load(from: dir)!
    var configuration = DigitalCredentialsEngine.Configuration()
    configuration.clock = { date }
    let swiftEngine = DigitalCredentialsEngine(context: context, configuration: configuration)
    var engine: OpaquePointer?
    var error = mdoc_error()
    guard mdocEngineOpen(dir.path, "{\"testing\":true,\"clock\":\"\(clock)\"}", &engine, &error) == MDOC_OK else {
        print("NOTICE: mdoc_engine_open failed; the C ABI figures are skipped")
        return
    }
    defer { _ = mdocEngineRelease(engine) }
    let origin = "https://verifier.example"
    let bytes = [UInt8](request)
    let throughABI = {
        var out: UnsafeMutablePointer<UInt8>?
        var count = 0
        let rc = bytes.withUnsafeBufferPointer {
            mdocAccept(engine, $0.baseAddress, $0.count, origin, &out, &count, &error)
        }
        precondition(rc == MDOC_OK)
        mdocFree(out)
    }
    let throughSwift = { blackHole(try! swiftEngine.accept(rawRequest: request, origin: origin)) }
    // `--op abi_accept` / `abi_swift_accept` for scripts/instructions.sh: the C boundary's own
    // instructions and mallocs are the difference between the two.
    if let op = onlyOp { runOperation(op == "abi_accept" ? throughABI : throughSwift) }
    let (a, b) = measurePair("abi.accept.vector_request", "swift.accept.vector_request", throughABI, throughSwift)
    figures += [a, b]
}
