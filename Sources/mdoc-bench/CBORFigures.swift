import Foundation
import Dispatch
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR
import HPKE
import CryptoCore
import DigitalCredentials
import AnnexCReader
import LibCBORPeer

@MainActor
func cborFigures(_ label: String, _ bytes: [UInt8]) {
    let (ours, base) = measurePair(
        "cbor.decode.\(label)", "libcbor.cbor_load.\(label)", bytes: bytes.count,
        { blackHole(try! CBORDocument(decoding: bytes)) }, { blackHole(LibCBORPeer.loadAndFree(bytes)) })
    figures.append(ours)
    figures.append(base)
    let value = CBORValue(try! CBORDocument(decoding: bytes).root)
    figures.append(measure("cbor.encode_value.\(label)", bytes: value.encoded().count) { blackHole(value.encoded()) })
    // Encoding with the writer directly, splicing the issuer's items: how responses are built.
    let doc = try! CBORDocument(decoding: bytes)
    figures.append(
        measure("cbor.encode_splice.\(label)", bytes: bytes.count) {
            var w = CBORWriter(capacity: bytes.count + 64)
            w.writeMapHeader(count: doc.root.count)
            for (k, v) in doc.root.mapEntries {
                w.writeRaw(k.encodedBytes)
                w.writeRaw(v.encodedBytes)
            }
            blackHole(w.bytes)
        })
}
