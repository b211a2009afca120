// Fuzz target: the C ABI's entry points (include/mdoc_respond.h) on arbitrary bytes. The first byte
// picks what the rest is: 0 the configuration JSON (read in full before the context directory, which
// does not exist), 1 the approval JSON of mdoc_respond on a parsed request, 2 the origin of
// mdoc_accept, 3 a raw request for mdoc_parse + mdoc_request_consent_json + mdoc_respond. The
// properties: never a crash; the status equals error.code; the detail is NUL-terminated; a failure
// leaves every output NULL/0; the consent model is always valid JSON (request-controlled strings
// escaped).
import Foundation
import MdocRespondC
import CMdocRespondABI

/// A private copy of the built-in context, an engine over it and one parsed request.
nonisolated(unsafe) let fixture: (engine: OpaquePointer, parsed: OpaquePointer, request: [UInt8]) = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let vectors = root.appendingPathComponent("TestVectors")
    let fm = FileManager.default
    let dir = fm.temporaryDirectory.appendingPathComponent("mdoc-fuzz-abi-\(getpid())")
    try? fm.removeItem(at: dir)
    try! fm.copyItem(at: vectors.appendingPathComponent("context"), to: dir)
    for case let name as String in fm.enumerator(atPath: dir.path)! {
        var isDir: ObjCBool = false
        let path = dir.appendingPathComponent(name).path
        _ = fm.fileExists(atPath: path, isDirectory: &isDir)
        chmod(path, isDir.boolValue ? 0o700 : 0o600)
    }
    chmod(dir.path, 0o700)
    atexit {
        try? FileManager.default.removeItem(
            atPath: FileManager.default.temporaryDirectory.path + "/mdoc-fuzz-abi-\(getpid())")
    }
    var engine: OpaquePointer?
    var error = mdoc_error()
    precondition(
        mdocEngineOpen(dir.path, "{\"testing\":true,\"clock\":\"2026-06-01T00:00:00Z\"}", &engine, &error) == MDOC_OK)
    let request = [UInt8](
        fm.contents(atPath: vectors.appendingPathComponent("requests/mdl-dataObject-v1.1-none.json").path)!)
    var parsed: OpaquePointer?
    precondition(mdocParse(engine, request, request.count, "https://verifier.example", &parsed, &error) == MDOC_OK)
    return (engine!, parsed!, request)
}()

func check(_ rc: Int32, _ error: mdoc_error, _ outputsEmpty: Bool) {
    precondition(rc == error.code, "status and error.code differ")
    var e = error
    let terminated = withUnsafeBytes(of: &e.detail) { $0.contains(0) }
    precondition(terminated, "detail not NUL-terminated")
    precondition(rc == MDOC_OK || outputsEmpty, "a failure left output behind")
}

func text(_ bytes: UnsafeRawBufferPointer) -> [CChar] {
    bytes.map { $0 == 0 ? 0x20 : CChar(bitPattern: $0) } + [0]
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let f = fixture
    let mode = start.load(as: UInt8.self) % 4
    let rest = UnsafeRawBufferPointer(start: start + 1, count: count - 1)
    var error = mdoc_error()
    switch mode {
    case 0:
        var engine: OpaquePointer?
        let rc = mdocEngineOpen("/nonexistent/mdoc-fuzz", text(rest), &engine, &error)
        check(rc, error, engine == nil)
        precondition(rc != MDOC_OK)
    case 1:
        var out: UnsafeMutablePointer<UInt8>?
        var n = 0
        let rc = mdocRespond(f.parsed, text(rest), &out, &n, &error)
        check(rc, error, out == nil && n == 0)
        mdocFree(out)
    case 2:
        var out: UnsafeMutablePointer<UInt8>?
        var n = 0
        let rc = mdocAccept(f.engine, f.request, f.request.count, text(rest), &out, &n, &error)
        check(rc, error, out == nil && n == 0)
        mdocFree(out)
    default:
        var parsed: OpaquePointer?
        let bytes = rest.bindMemory(to: UInt8.self)
        let rc = mdocParse(f.engine, bytes.baseAddress, bytes.count, "https://verifier.example", &parsed, &error)
        check(rc, error, parsed == nil)
        guard rc == MDOC_OK else { return 0 }
        var json: UnsafeMutablePointer<CChar>?
        var n = 0
        check(mdocRequestConsentJSON(parsed, &json, &n, &error), error, json == nil)
        let data = Data(bytes: json!, count: n)
        precondition((try? JSONSerialization.jsonObject(with: data)) != nil, "the consent model is not valid JSON")
        mdocFree(json)
        var out: UnsafeMutablePointer<UInt8>?
        let r = mdocRespond(parsed, nil, &out, &n, &error)
        check(r, error, out == nil && n == 0)
        mdocFree(out)
        precondition(mdocRequestRelease(parsed) == MDOC_OK)
        precondition(mdocRequestRelease(parsed) == MDOC_ERR_INVALID_HANDLE, "a double release was not detected")
    }
    return 0
}
