// Fuzz target: the CBOR decoder/validator, diagnostic notation, re-encoding, and the ISO 18013-5
// structure parsers (DeviceRequest, DeviceResponse, IssuerSigned + MSO, COSE_Sign1 with its x5chain
// certificates, COSE_Key) on arbitrary bytes. The property: nothing crashes, and anything accepted
// re-encodes to a value that decodes again.
import MdocCBOR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    // The default depth limit (64): past the validator's 32 inline nesting frames, so their move to
    // the heap is fuzzed too.
    guard let doc = try? CBORDocument(decoding: bytes, options: .init(maxDepth: 64, maxItems: 1 << 16)) else {
        return 0
    }
    _ = CBORDiagnostic.describe(doc.root, options: .init(expandEmbedded: true))
    let again = CBORValue(doc.root).encoded()
    if (try? CBORDocument(decoding: again, options: .init(maxDepth: 64, maxItems: 1 << 17, checkTag24Content: false)))
        == nil
    {
        fatalError("an accepted item did not re-encode to decodable CBOR")
    }
    _ = try? DeviceRequest(doc.root)
    _ = try? DeviceResponse(doc.root)
    if let s = try? IssuerSigned(doc.root) { _ = try? s.mobileSecurityObject() }
    // Certificates go through OpenSSL's d2i_X509, which decodes the key with OSSL_DECODER (millions of
    // instructions, and every mutated DER misses the cache): parse the x5chain of one input in eight,
    // chosen by the input's length so the choice is stable for libFuzzer.
    if count % 8 == 0, let sign1 = try? COSESign1(doc.root), let chain = try? sign1.headers.x5chain() {
        for der in chain.prefix(4) { _ = try? Certificate(der: der) }
    }
    _ = try? COSEKey(doc.root)
    return 0
}
