// Fuzz target: the credential context snapshot decoder and validator on arbitrary bytes. The
// property: a snapshot either loads or is refused with an PresentmentError, never a crash.
import DigitalCredentials

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let b = Array(UnsafeRawBufferPointer(start: start, count: count))
    _ = try? CredentialContext(encoded: b, keyResolver: InMemoryKeyResolver([:]))
    return 0
}
