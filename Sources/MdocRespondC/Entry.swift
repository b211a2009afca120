#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CMdocRespondABI
import CryptoCore
import DigitalCredentials
import PKCS11
import Presentment

// The C entry points of include/mdoc_respond.h. Each one: clears its outputs, checks every pointer and
// bound before reading, looks handles up in the registry, calls the Swift API, and turns any refusal
// into the header's status number and static detail. Nothing here prints or logs.

/// The library version `mdoc_version` returns.
private let libraryVersion: StaticString = "0.20.0"

/// Fills the caller's error struct (when given): the code and the detail cut to fit at a UTF-8
/// character boundary, NUL-terminated.
private func fill(_ error: UnsafeMutablePointer<mdoc_error>?, _ code: Int32, _ detail: String) {
    guard let error else { return }
    error.pointee.code = code
    withUnsafeMutableBytes(of: &error.pointee.detail) { out in
        let capacity = out.count - 1
        var utf8 = Array(detail.utf8.prefix(capacity + 1))
        if utf8.count > capacity {
            var cut = capacity
            while cut > 0 && utf8[cut] & 0xC0 == 0x80 { cut -= 1 }
            utf8.removeSubrange(cut...)
        }
        out.copyBytes(from: utf8)
        out[utf8.count] = 0
    }
}

/// Runs one call's body and reports its outcome.
private func run(_ error: UnsafeMutablePointer<mdoc_error>?, _ body: () throws(ABIFailure) -> Void) -> Int32 {
    do throws(ABIFailure) {
        // No fork lands inside a call (a forked child would inherit the locks it holds).
        try ForkGuard.around(body)
        fill(error, MDOC_OK, "")
        return MDOC_OK
    } catch let failure {
        fill(error, failure.code, failure.detail)
        return failure.code
    }
}

/// Runs a call whose result is a buffer the caller frees with `mdoc_free`: clears the outputs on
/// entry, refuses NULL output pointers, and sets them only when the body succeeds.
private func runReturningBuffer<T, B: ContiguousBytes>(
    _ out: UnsafeMutablePointer<UnsafeMutablePointer<T>?>?, _ outCount: UnsafeMutablePointer<Int>?,
    _ error: UnsafeMutablePointer<mdoc_error>?, _ body: () throws(ABIFailure) -> B
) -> Int32 {
    out?.pointee = nil
    outCount?.pointee = 0
    return run(error) { () throws(ABIFailure) in
        guard let out, let outCount else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "output pointers are NULL") }
        let bytes = try body()
        let count = bytes.withUnsafeBytes { $0.count }
        out.pointee = UnsafeMutableRawPointer(try handOut(bytes, count: count)).assumingMemoryBound(to: T.self)
        outCount.pointee = count
    }
}

/// Maps the Swift API's refusal to its ABI number.
private func api<R>(_ body: () throws(PresentmentError) -> R) throws(ABIFailure) -> R {
    do { return try body() } catch { throw ABIFailure(error) }
}

/// A NUL-terminated UTF-8 argument, measured with a bounded scan.
private func text(_ p: UnsafePointer<CChar>, max: Int, what: String) throws(ABIFailure) -> String {
    let n = strnlen(p, max + 1)
    guard n <= max else { throw ABIFailure(MDOC_ERR_LIMIT_EXCEEDED, "\(what) is longer than \(max) bytes") }
    let bytes = UnsafeRawBufferPointer(start: p, count: n).bindMemory(to: UInt8.self)
    guard let s = String(validating: bytes, as: UTF8.self) else {
        throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "\(what) is not UTF-8")
    }
    return s
}

/// Optional JSON text (NULL = defaults), bounded.
private func json(_ p: UnsafePointer<CChar>?, what: String) throws(ABIFailure) -> [UInt8]? {
    guard let p else { return nil }
    let n = strnlen(p, Int(MDOC_MAX_JSON_BYTES) + 1)
    guard n <= Int(MDOC_MAX_JSON_BYTES) else {
        throw ABIFailure(MDOC_ERR_LIMIT_EXCEEDED, "\(what) is longer than \(MDOC_MAX_JSON_BYTES) bytes")
    }
    return Array(UnsafeRawBufferPointer(start: p, count: n))
}

/// The origin: NULL is `missingOrigin`, as the Swift API says for no origin.
private func originText(_ p: UnsafePointer<CChar>?) throws(ABIFailure) -> String {
    guard let p else { throw ABIFailure(MDOC_ERR_MISSING_ORIGIN, "origin is NULL") }
    return try text(p, max: Int(MDOC_MAX_ORIGIN_BYTES), what: "origin")
}

/// The request bytes, bounded by the engine's limit before anything is read.
private func requestBytes(_ p: UnsafePointer<UInt8>?, _ count: Int, limit: Int) throws(ABIFailure)
    -> UnsafeBufferPointer<UInt8>
{
    guard let p else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "request is NULL") }
    guard count > 0 else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "request is empty (length 0)") }
    guard count <= limit else {
        throw ABIFailure(MDOC_ERR_LIMIT_EXCEEDED, "request is larger than the engine's maxRequestBytes")
    }
    return UnsafeBufferPointer(start: p, count: count)
}

/// Copies bytes into a buffer the caller frees with `mdoc_free` (one extra NUL byte, so text is a C string).
private func handOut<C: ContiguousBytes>(_ bytes: C, count: Int) throws(ABIFailure) -> UnsafeMutablePointer<UInt8> {
    guard let raw = malloc(count + 1) else {
        throw ABIFailure(MDOC_ERR_LIMIT_EXCEEDED, "the output buffer could not be allocated")
    }
    bytes.withUnsafeBytes { raw.copyMemory(from: $0.baseAddress!, byteCount: count) }
    raw.storeBytes(of: 0, toByteOffset: count, as: UInt8.self)
    return raw.assumingMemoryBound(to: UInt8.self)
}

/// `uint32_t mdoc_abi_version(void)`: the ABI version of this library.
@_cdecl("mdoc_abi_version")
public func mdocABIVersion() -> UInt32 { UInt32(MDOC_RESPOND_ABI_VERSION) }

/// `const char *mdoc_version(void)`: the library version (static storage).
@_cdecl("mdoc_version")
public func mdocVersion() -> UnsafePointer<CChar> {
    UnsafeRawPointer(libraryVersion.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// `const char *mdoc_status_name(int32_t)`: a status code's name, or "unknown" (static storage).
@_cdecl("mdoc_status_name")
public func mdocStatusName(_ code: Int32) -> UnsafePointer<CChar> {
    UnsafePointer(ABIStatus.cNames[code] ?? ABIStatus.unknownName)
}

/// `mdoc_engine_open`: an engine over the credential context in a directory.
@_cdecl("mdoc_engine_open")
public func mdocEngineOpen(
    _ directory: UnsafePointer<CChar>?, _ config: UnsafePointer<CChar>?,
    _ engine: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<mdoc_error>?
) -> Int32 {
    openDirectoryEngine(directory, config, observer: nil, engine, error)
}

/// `mdoc_engine_open_observed`: `mdoc_engine_open` with an observer called after every call.
@_cdecl("mdoc_engine_open_observed")
public func mdocEngineOpenObserved(
    _ directory: UnsafePointer<CChar>?, _ config: UnsafePointer<CChar>?,
    _ observer: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void)?,
    _ observerContext: UnsafeMutableRawPointer?, _ engine: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<mdoc_error>?
) -> Int32 {
    guard let observer else {
        engine?.pointee = nil
        return run(error) { () throws(ABIFailure) in throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "observer is NULL") }
    }
    return openDirectoryEngine(
        directory, config, observer: ABIObserver(callback: observer, context: observerContext), engine, error)
}

/// An observer at the C boundary: the event as JSON to the host's callback, with its context pointer.
struct ABIObserver: EngineObserver, @unchecked Sendable {
    // @unchecked: the context pointer is the host's, handed back untouched; the host's callback must be
    // callable from any thread that calls the engine (mdoc_respond.h says so).
    let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
    let context: UnsafeMutableRawPointer?

    func observe(_ event: EngineEvent) {
        event.json.withCString { callback(context, $0) }
    }
}

private func openDirectoryEngine(
    _ directory: UnsafePointer<CChar>?, _ config: UnsafePointer<CChar>?, observer: ABIObserver?,
    _ engine: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<mdoc_error>?
) -> Int32 {
    engine?.pointee = nil
    return run(error) { () throws(ABIFailure) in
        guard let engine else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "engine output pointer is NULL") }
        guard let directory else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "context directory is NULL") }
        let path = try text(directory, max: Int(MDOC_MAX_PATH_BYTES), what: "context directory")
        guard !path.isEmpty else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "context directory is empty") }
        let settings = try ABISettings(json: try json(config, what: "configuration"))
        guard settings.keyDirectory == nil else {
            // A directory engine's keys are its own: keyDirectory applies to snapshot engines only.
            throw ABIFailure(
                MDOC_ERR_INVALID_CONFIGURATION, ConfigurationError(.notApplicable, "keyDirectory").detail)
        }
        // The engine reads the directory's snapshot on every call (reloading it when a writer replaced
        // it), so a credential cancelled on disk is never presented by an engine opened before.
        let source: ContextSource
        do throws(PresentmentError) {
            let url = URL(fileURLWithPath: path)
            source = try ContextSource(
                directory: url,
                keyResolver: ContextKeyResolver(directory: url, moduleDirectories: settings.moduleDirectories))
        } catch {
            if error.is(ContextRule.noContext) {
                throw ABIFailure(MDOC_ERR_CONTEXT_UNAVAILABLE, "no credential context snapshot in the directory")
            }
            throw ABIFailure(error)
        }
        engine.pointee = Handles.add(
            EngineBox(
                engine: try settings.engine(over: source, observer: observer), maxRequestBytes: settings.maxRequestBytes
            ))
    }
}

/// `mdoc_engine_open_snapshot`: an engine over snapshot bytes held in memory.
@_cdecl("mdoc_engine_open_snapshot")
public func mdocEngineOpenSnapshot(
    _ snapshot: UnsafePointer<UInt8>?, _ count: Int, _ config: UnsafePointer<CChar>?,
    _ engine: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<mdoc_error>?
) -> Int32 {
    engine?.pointee = nil
    return run(error) { () throws(ABIFailure) in
        guard let engine else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "engine output pointer is NULL") }
        guard let snapshot else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "snapshot is NULL") }
        guard count > 0 else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "snapshot is empty (length 0)") }
        guard count <= Int(MDOC_MAX_SNAPSHOT_BYTES) else {
            throw ABIFailure(MDOC_ERR_LIMIT_EXCEEDED, "snapshot is larger than \(MDOC_MAX_SNAPSHOT_BYTES) bytes")
        }
        let settings = try ABISettings(json: try json(config, what: "configuration"))
        let resolver: any DeviceKeyResolver =
            settings.keyDirectory.map {
                ContextKeyResolver(directory: URL(fileURLWithPath: $0), moduleDirectories: settings.moduleDirectories)
            } ?? PKCS11KeyResolver(moduleDirectories: settings.moduleDirectories)
        let bytes = Array(UnsafeBufferPointer(start: snapshot, count: count))
        let context = try api { () throws(PresentmentError) in
            try CredentialContext(encoded: bytes, keyResolver: resolver)
        }
        engine.pointee = Handles.add(
            EngineBox(
                engine: try settings.engine(over: ContextSource(context)), maxRequestBytes: settings.maxRequestBytes))
    }
}

/// `mdoc_engine_release`: releases an engine handle (calls in flight finish; parsed requests keep it alive).
@_cdecl("mdoc_engine_release")
public func mdocEngineRelease(_ engine: OpaquePointer?) -> Int32 {
    run(nil) { () throws(ABIFailure) in try Handles.releaseEngine(engine) }
}

/// `mdoc_accept`: answers a raw request in one call.
@_cdecl("mdoc_accept")
public func mdocAccept(
    _ engine: OpaquePointer?, _ request: UnsafePointer<UInt8>?, _ requestCount: Int, _ origin: UnsafePointer<CChar>?,
    _ response: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, _ responseCount: UnsafeMutablePointer<Int>?,
    _ error: UnsafeMutablePointer<mdoc_error>?
) -> Int32 {
    runReturningBuffer(response, responseCount, error) { () throws(ABIFailure) in
        let box = try Handles.engine(engine)
        let bytes = try requestBytes(request, requestCount, limit: box.maxRequestBytes)
        let origin = try originText(origin)
        // The caller's bytes are read in place: accept keeps nothing of the request after it returns.
        let raw = Data(
            bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count, deallocator: .none)
        return try api { () throws(PresentmentError) in try box.engine.accept(rawRequest: raw, origin: origin) }
    }
}

/// `mdoc_parse`: parses a raw request into a request handle for a consent screen.
@_cdecl("mdoc_parse")
public func mdocParse(
    _ engine: OpaquePointer?, _ request: UnsafePointer<UInt8>?, _ requestCount: Int, _ origin: UnsafePointer<CChar>?,
    _ parsed: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<mdoc_error>?
) -> Int32 {
    parsed?.pointee = nil
    return run(error) { () throws(ABIFailure) in
        let box = try Handles.engine(engine)
        guard let parsed else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "request output pointer is NULL") }
        let bytes = try requestBytes(request, requestCount, limit: box.maxRequestBytes)
        let origin = try originText(origin)
        // Copied: a parsed request outlives the caller's buffer.
        let raw = Data(buffer: bytes)
        let r = try api { () throws(PresentmentError) in try box.engine.parse(rawRequest: raw, origin: origin) }
        parsed.pointee = Handles.add(RequestBox(owner: box, request: r))
    }
}

/// `mdoc_request_consent_json`: the consent model of a parsed request as JSON.
@_cdecl("mdoc_request_consent_json")
public func mdocRequestConsentJSON(
    _ parsed: OpaquePointer?, _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ jsonCount: UnsafeMutablePointer<Int>?, _ error: UnsafeMutablePointer<mdoc_error>?
) -> Int32 {
    runReturningBuffer(json, jsonCount, error) { () throws(ABIFailure) in
        Array(ConsentModelJSON.request(try Handles.request(parsed).request).utf8)
    }
}

/// `mdoc_respond`: answers a parsed request with the holder's approval.
@_cdecl("mdoc_respond")
public func mdocRespond(
    _ parsed: OpaquePointer?, _ approval: UnsafePointer<CChar>?,
    _ response: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, _ responseCount: UnsafeMutablePointer<Int>?,
    _ error: UnsafeMutablePointer<mdoc_error>?
) -> Int32 {
    runReturningBuffer(response, responseCount, error) { () throws(ABIFailure) in
        let box = try Handles.request(parsed)
        let choice = try ABIApproval(json: try json(approval, what: "approval"))
        return try api { () throws(PresentmentError) in
            try box.owner.engine.respond(
                to: box.request, using: choice.using, approving: choice.approval, consented: choice.consented,
                plainFallback: choice.plainFallback)
        }
    }
}

/// `mdoc_request_release`: releases a parsed request handle.
@_cdecl("mdoc_request_release")
public func mdocRequestRelease(_ parsed: OpaquePointer?) -> Int32 {
    run(nil) { () throws(ABIFailure) in try Handles.releaseRequest(parsed) }
}

/// `mdoc_free`: frees a buffer this library returned.
@_cdecl("mdoc_free")
public func mdocFree(_ buffer: UnsafeMutableRawPointer?) {
    free(buffer)
}
