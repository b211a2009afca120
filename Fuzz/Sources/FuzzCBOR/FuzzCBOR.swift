// Fuzz target: the CBOR decoder/validator, diagnostic notation, re-encoding, and the ISO 18013-5
// structure parsers on arbitrary bytes. The property: nothing crashes, and anything accepted
// re-encodes to a value that decodes again.
import MdocCBOR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard let doc = try? CBORDocument(decoding: bytes, options: .init(maxDepth: 32, maxItems: 1 << 16)) else { return 0 }
    _ = CBORDiagnostic.describe(doc.root, options: .init(expandEmbedded: true))
    let again = CBORValue(doc.root).encoded()
    if (try? CBORDocument(decoding: again, options: .init(maxDepth: 64, maxItems: 1 << 17, checkTag24Content: false))) == nil {
        fatalError("an accepted item did not re-encode to decodable CBOR")
    }
    _ = try? DeviceRequest(doc.root)
    _ = try? DeviceResponse(doc.root)
    if let s = try? IssuerSigned(doc.root) { _ = try? s.mobileSecurityObject() }
    _ = try? COSESign1(doc.root)
    _ = try? COSEKey(doc.root)
    return 0
}
