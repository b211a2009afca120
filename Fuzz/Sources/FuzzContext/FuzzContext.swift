// Fuzz target: the credential context snapshot decoder and validator on arbitrary bytes. The
// property: a snapshot either loads or is refused with a PresentmentError, never a crash; and every
// credential of one that loads is then indexed (as a request that can select it would: checked in
// full when its bytes do not match the snapshot's record) or refused the same way.
import DigitalCredentials

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let b = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard let context = try? CredentialContext(encoded: b, keyResolver: InMemoryKeyResolver([:])) else { return 0 }
    for c in context.credentials { _ = try? c.elements }
    return 0
}
