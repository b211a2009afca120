// Fuzz target: HPKE open with an arbitrary encapsulated key, ciphertext, info and aad, for the
// Annex C suite and X25519. The property: open only ever throws (one opaque error), never crashes.
import HPKE

let p256 = try! HPKE.PrivateKey.derive(kem: .p256HKDFSHA256, ikm: [UInt8](repeating: 7, count: 32))
let x25519 = try! HPKE.PrivateKey.derive(kem: .x25519HKDFSHA256, ikm: [UInt8](repeating: 7, count: 32))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let b = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard b.count >= 2 else { return 0 }
    let useX = b[0] & 1 == 1
    let encLen = useX ? 32 : 65
    let rest = Array(b[1...])
    let enc = Array(rest.prefix(encLen))
    let tail = Array(rest.dropFirst(encLen))
    let infoLen = min(tail.count, Int(b[0] >> 1))
    let info = Array(tail.prefix(infoLen))
    let ct = Array(tail.dropFirst(infoLen))
    let suite = useX ? HPKE.Ciphersuite(kem: .x25519HKDFSHA256, kdf: .hkdfSHA256, aead: .chaCha20Poly1305) : .annexC
    do {
        _ = try HPKE.open(
            suite: suite, privateKey: useX ? x25519 : p256, encapsulatedKey: enc, info: info, ciphertext: ct)
    } catch {
        if error != .openFailed { fatalError("open failed with a non-opaque error") }
    }
    return 0
}
