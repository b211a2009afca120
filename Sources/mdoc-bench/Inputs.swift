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

// MARK: Inputs

func hexDecode(_ s: String) -> [UInt8]? {
    let u = Array(s.utf8.filter { !$0.isWhitespace })
    guard u.count % 2 == 0 else { return nil }
    var out = [UInt8]()
    var i = 0
    while i < u.count {
        guard let b = UInt8(String(decoding: u[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
        out.append(b)
        i += 2
    }
    return out
}

extension UInt8 { var isWhitespace: Bool { self == 0x20 || self == 0x0a || self == 0x0d || self == 0x09 } }

func annexDResponse() -> [UInt8]? {
    let env = ProcessInfo.processInfo.environment["MDOC_SHARED_VECTORS"]
    let candidates: [String?] = [
        env.map { $0 + "/iso18013-5/device_response.hex" },
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/vectors/iso18013-5/device_response.hex").path,
    ]
    for case let path? in candidates {
        if let s = try? String(contentsOfFile: path, encoding: .utf8), let b = hexDecode(s) { return b }
    }
    return nil
}

/// A synthetic IssuerSigned of about 20 KB: 40 issuer-signed items of mixed types and a 12 KB
/// portrait, with a real ES256 issuerAuth over an MSO. Deterministic apart from the signature.
func syntheticIssuerSigned() -> [UInt8] {
    var items = [[UInt8]]()
    var rng: UInt64 = 0x9e37_79b9_7f4a_7c15
    func next() -> UInt8 {
        rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: rng >> 33)
    }
    for i in 0..<41 {
        let value: CBORValue
        switch i % 5 {
        case 0: value = .text("Value number \(i) with some text in it")
        case 1: value = .unsigned(UInt64(i * 1000))
        case 2: value = .bool(i % 2 == 0)
        case 3: value = .tagged(1004, .text("1990-01-0\(i % 9 + 1)"))
        default:
            value = .array([
                .map([
                    .init(.text("vehicle_category_code"), .text("B")),
                    .init(.text("issue_date"), .tagged(1004, .text("2020-01-01"))),
                ])
            ])
        }
        let item: CBORValue = .map([
            .init(.text("digestID"), .unsigned(UInt64(i))),
            .init(.text("random"), .bytes((0..<16).map { _ in next() })),
            .init(.text("elementIdentifier"), .text(i == 40 ? "portrait" : "element_\(i)")),
            .init(.text("elementValue"), i == 40 ? .bytes((0..<14_000).map { _ in next() }) : value),
        ])
        items.append(CBORValue.embedded(item).encoded())
    }
    let signer = try! SoftwareSigner.generate(curve: .p256)
    let mso: CBORValue = .map([
        .init(.text("version"), .text("1.0")),
        .init(.text("digestAlgorithm"), .text("SHA-256")),
        .init(.text("docType"), .text("org.iso.18013.5.1.mDL")),
        .init(
            .text("valueDigests"),
            .map([
                .init(
                    .text("org.iso.18013.5.1"),
                    .map(
                        (0..<41).map { .init(.unsigned(UInt64($0)), .bytes([UInt8](repeating: UInt8($0), count: 32))) })
                )
            ])),
        .init(.text("deviceKeyInfo"), .map([.init(.text("deviceKey"), signer.publicKey.cborValue)])),
        .init(
            .text("validityInfo"),
            .map([
                .init(.text("signed"), .tagged(0, .text("2026-01-01T00:00:00Z"))),
                .init(.text("validFrom"), .tagged(0, .text("2026-01-01T00:00:00Z"))),
                .init(.text("validUntil"), .tagged(0, .text("2027-01-01T00:00:00Z"))),
            ])),
    ])
    let issuerAuth = try! COSESign1.sign(payload: CBORValue.embedded(mso).encoded(), detached: false, signer: signer)
    var w = CBORWriter(capacity: 24_000)
    w.writeMapHeader(count: 2)
    w.writeText("nameSpaces")
    w.writeMapHeader(count: 1)
    w.writeText("org.iso.18013.5.1")
    w.writeArrayHeader(count: items.count)
    for i in items { w.writeRaw(i) }
    w.writeText("issuerAuth")
    w.writeRaw(issuerAuth)
    return w.bytes
}
