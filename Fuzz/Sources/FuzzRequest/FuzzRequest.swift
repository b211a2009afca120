// Fuzz target: the whole request path — JSON framing, base64url, origin, EncryptionInfo, transcript,
// DeviceRequest, reader authentication — against an empty context. The first line of the input is
// the origin, the rest the raw request. The property: parse either succeeds or throws AnnexCError.
import AnnexC
import FoundationEssentials
import MdocCBOR

let engine: AnnexCEngine = {
    let ctx = try! CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:]))
    return AnnexCEngine(context: ctx)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let newline = bytes.firstIndex(of: 0x0a) ?? bytes.count
    let origin = String(decoding: bytes[0..<newline], as: UTF8.self)
    let raw = newline < bytes.count ? Array(bytes[(newline + 1)...]) : []
    _ = try? engine.parse(rawRequest: Data(raw), origin: origin)
    _ = engine.explain(rawRequest: Data(raw), origin: origin)
    return 0
}
