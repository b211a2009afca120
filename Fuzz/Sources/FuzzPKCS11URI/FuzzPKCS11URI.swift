// Fuzz target: the RFC 7512 URI reader (a context's device key reference, a CLI argument) on
// arbitrary bytes. The properties: a URI is read or refused with a PKCS11Error, never a crash; one
// that is read writes back to text that reads back to the same URI; its redacted form never shows
// where the PIN is.
import PKCS11

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    guard let uri = try? PKCS11URI(parsing: text) else { return 0 }
    guard let again = try? PKCS11URI(parsing: uri.string), again == uri else {
        fatalError("a URI that was read does not read back from its own text")
    }
    switch uri.pinSource {
    case .file(let path) where !path.isEmpty && path != "/" && uri.redacted.contains("pin-source=file:" + path):
        fatalError("the redacted form shows the PIN file")
    case .environment(let name) where uri.redacted.contains("x-pin-env=" + name):
        fatalError("the redacted form shows the PIN variable")
    default: break
    }
    return 0
}
