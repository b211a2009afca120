// mdoc-bench: figures for every stage, as a table and as one JSON object per line.
//   swift run -c release mdoc-bench [--quick] [--json-only]
// Times are wall-clock medians over many samples of batched iterations; nothing here asserts speed.
import Foundation
import Dispatch
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR
import HPKE
import CryptoCore
import AnnexC
import AnnexCReader

struct Figure {
    let bench: String
    let medianNs: Double
    let p90Ns: Double
    let baseline: String?
    var ratio: Double?
    var bytes: Int?
    /// Peak resident memory of a measured process, in KiB.
    var peakKiB: Int? = nil
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print(
        """
        usage: mdoc-bench [--quick] [--json-only]
          --quick      short run (a few samples), used by CI to keep the harness working
          --json-only  print only the JSON lines
          --filter S   run only the figures whose name contains S
          --samples N  samples per figure (default 301; more narrows the spread of a ratio between runs)
          --op NAME --iterations N
                       run one operation N times, untimed, then exit (for valgrind --tool=callgrind):
                       accept, accept_ios, accept_reader_auth, floor, floor_reader_auth, accept_ios_and_floor, parse, respond
        Set MDOC_SHARED_VECTORS to the shared vectors folder to include the Annex D DeviceResponse.
        """)
    exit(0)
}
let quick = arguments.contains("--quick")
/// `--op NAME --iterations N`: run one operation N times without timing (for callgrind instruction counts).
let onlyOp: String? = arguments.firstIndex(of: "--op").flatMap { i in
    arguments.index(after: i) < arguments.endIndex ? arguments[arguments.index(after: i)] : nil
}
let opIterations: Int =
    arguments.firstIndex(of: "--iterations").flatMap { i in
        arguments.index(after: i) < arguments.endIndex ? Int(arguments[arguments.index(after: i)]) : nil
    } ?? 100
/// `--filter SUBSTRING`: run only the figures whose name contains it (for profiling one stage).
let filter: String? = arguments.firstIndex(of: "--filter").flatMap { i in
    arguments.index(after: i) < arguments.endIndex ? arguments[arguments.index(after: i)] : nil
}
let jsonOnly = arguments.contains("--json-only")
/// `--samples N`: samples per figure.
let requestedSamples: Int? = arguments.firstIndex(of: "--samples").flatMap { i in
    arguments.index(after: i) < arguments.endIndex ? Int(arguments[arguments.index(after: i)]) : nil
}
let samples = quick ? 15 : max(1, requestedSamples ?? 301)

@inline(never)
func blackHole<T>(_ x: T) { withExtendedLifetime(x) {} }

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Times `body`, batching iterations so each sample lasts at least ~50 µs.
func measure(_ name: String, baseline: String? = nil, bytes: Int? = nil, _ body: () -> Void) -> Figure {
    if let filter, !name.contains(filter) {
        return Figure(bench: name, medianNs: .nan, p90Ns: .nan, baseline: baseline, bytes: bytes)
    }
    for _ in 0..<(quick ? 3 : 50) { body() }
    var batch = 1
    while true {
        let t0 = now()
        for _ in 0..<batch { body() }
        if now() - t0 > 50_000 || batch >= 1 << 16 { break }
        batch *= 2
    }
    var times = [Double]()
    times.reserveCapacity(samples)
    for _ in 0..<samples {
        let t0 = now()
        for _ in 0..<batch { body() }
        times.append(Double(now() - t0) / Double(batch))
    }
    times.sort()
    return Figure(
        bench: name, medianNs: times[times.count / 2], p90Ns: times[times.count * 9 / 10], baseline: baseline,
        bytes: bytes)
}

/// Times `a` against its baseline `b` with interleaved samples, so machine drift hits both alike.
/// Returns (a with ratio set, b).
func measurePair(_ nameA: String, _ nameB: String, bytes: Int? = nil, _ a: () -> Void, _ b: () -> Void) -> (
    Figure, Figure
) {
    if let filter, !nameA.contains(filter) && !nameB.contains(filter) {
        return (
            Figure(bench: nameA, medianNs: .nan, p90Ns: .nan, baseline: nameB),
            Figure(bench: nameB, medianNs: .nan, p90Ns: .nan, baseline: nil)
        )
    }
    for _ in 0..<(quick ? 3 : 30) {
        a()
        b()
    }
    var batch = 1
    while true {
        let t0 = now()
        for _ in 0..<batch { a() }
        if now() - t0 > 50_000 || batch >= 1 << 16 { break }
        batch *= 2
    }
    var ta = [Double]()
    var tb = [Double]()
    for _ in 0..<samples {
        var t0 = now()
        for _ in 0..<batch { a() }
        ta.append(Double(now() - t0) / Double(batch))
        t0 = now()
        for _ in 0..<batch { b() }
        tb.append(Double(now() - t0) / Double(batch))
    }
    ta.sort()
    tb.sort()
    var fa = Figure(
        bench: nameA, medianNs: ta[ta.count / 2], p90Ns: ta[ta.count * 9 / 10], baseline: nameB, bytes: bytes)
    let fb = Figure(bench: nameB, medianNs: tb[tb.count / 2], p90Ns: tb[tb.count * 9 / 10], baseline: nil, bytes: bytes)
    fa.ratio = fa.medianNs / fb.medianNs
    return (fa, fb)
}

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

// MARK: Run

var figures = [Figure]()

@MainActor
func cborFigures(_ label: String, _ bytes: [UInt8]) {
    let (ours, base) = measurePair(
        "cbor.decode.\(label)", "libcbor.cbor_load.\(label)", bytes: bytes.count,
        { blackHole(try! CBORDocument(decoding: bytes)) }, { blackHole(LibCBORBaseline.loadAndFree(bytes)) })
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

if onlyOp != nil { acceptFigures() }

if let annexD = annexDResponse() {
    cborFigures("annexd_response", annexD)
    figures.append(
        measure("mdoc.parse.annexd_device_response", bytes: annexD.count) {
            blackHole(try! DeviceResponse(encoded: annexD))
        })
} else if !jsonOnly {
    print("NOTICE: Annex D vectors not found (set MDOC_SHARED_VECTORS); skipping the annexd_response figures")
}
let synthetic = syntheticIssuerSigned()
cborFigures("issuer_signed_20k", synthetic)
figures.append(
    measure("mdoc.parse.issuer_signed_20k", bytes: synthetic.count) { blackHole(try! IssuerSigned(encoded: synthetic)) }
)

// MARK: HPKE (Annex C suite) against its primitive floor

/// The unavoidable OpenSSL work of an Annex C seal: one P-256 key generation, one ECDH, the 4
/// HKDF-Extract and 4 HKDF-Expand calls of DHKEM + key schedule, one AES-128-GCM pass. Open replaces
/// key generation with one public key import (the `enc`). Same inputs sizes as HPKE uses.
@MainActor
func hpkeFigures(size: Int) {
    let label = "annexc_\(size / 1024)k"
    let recipient = try! HPKE.PrivateKey.generate(kem: .p256HKDFSHA256)
    let pkR = recipient.publicKey
    let info = [UInt8](repeating: 0x83, count: 44)  // a SessionTranscript is 44 bytes
    let plaintext = [UInt8](repeating: 0x5a, count: size)
    let rawR = try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: pkR.serialized)
    let rawSkR = try! CryptoCore.PrivateKey(curve: .p256, scalar: try! recipient.serialized())
    let salt32 = [UInt8](repeating: 1, count: 32)
    let ikm = [UInt8](repeating: 2, count: 80)
    let info60 = [UInt8](repeating: 3, count: 90)
    func hkdfCalls() {
        for _ in 0..<4 { blackHole(DigestAlgorithm.sha256.hkdfExtract(salt: salt32, ikm: ikm)) }
        for _ in 0..<4 { blackHole(try! DigestAlgorithm.sha256.hkdfExpand(prk: salt32, info: info60, length: 32)) }
    }
    let key = [UInt8](repeating: 9, count: 16)
    let nonce = [UInt8](repeating: 8, count: 12)
    let (enc, ct) = try! HPKE.seal(suite: .annexC, recipient: pkR, info: info, plaintext: plaintext)
    let realKey = [UInt8](repeating: 9, count: 16)
    let aeadCT = try! AEADAlgorithm.aes128gcm.seal(key: realKey, nonce: nonce, plaintext: plaintext, aad: [UInt8]())
    let (seal, sealFloor) = measurePair(
        "hpke.seal.\(label)", "floor.seal.\(label)", bytes: size,
        {
            blackHole(try! HPKE.seal(suite: .annexC, recipient: pkR, info: info, plaintext: plaintext))
        },
        {
            let e = try! CryptoCore.PrivateKey.generateForAgreement(.ec(.p256))
            blackHole(e.publicKey.rawRepresentation)
            blackHole(try! e.sharedSecret(with: rawR))
            hkdfCalls()
            blackHole(try! AEADAlgorithm.aes128gcm.seal(key: key, nonce: nonce, plaintext: plaintext, aad: [UInt8]()))
        })
    let (open, openFloor) = measurePair(
        "hpke.open.\(label)", "floor.open.\(label)", bytes: size,
        {
            blackHole(
                try! HPKE.open(suite: .annexC, privateKey: recipient, encapsulatedKey: enc, info: info, ciphertext: ct))
        },
        {
            let pkE = try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: enc)
            blackHole(try! rawSkR.sharedSecret(with: pkE))
            hkdfCalls()
            blackHole(try! AEADAlgorithm.aes128gcm.open(key: realKey, nonce: nonce, ciphertext: aeadCT, aad: [UInt8]()))
        })
    figures += [seal, sealFloor, open, openFloor]
}

hpkeFigures(size: 4096)
hpkeFigures(size: 32768)
/// The floor of one `accept`: the OpenSSL operations it cannot avoid, on the same key sizes and
/// payload size, through the same thin wrapper. Immutable, so threads can share it.
struct FloorOperations: Sendable {
    let devKey = try! CryptoCore.PrivateKey.generate(.ec(.p256))
    let pkR: CryptoCore.PublicKey
    let recipientPoint: [UInt8]
    let aesKey = [UInt8](repeating: 1, count: 16), nonce = [UInt8](repeating: 2, count: 12)
    let payload: [UInt8]
    let tbs = [UInt8](repeating: 4, count: 120)
    let salt32 = [UInt8](repeating: 1, count: 32), ikm80 = [UInt8](repeating: 2, count: 80),
        info90 = [UInt8](repeating: 3, count: 90)
    let dcapiInfo: [UInt8]

    /// The floor of answering `request` from `origin` with `engine`: the same recipient key, a
    /// DeviceResponse of the size the engine produces, a dcapiInfo of the size the transcript hashes.
    init(engine: AnnexCEngine, request: AnnexCReader.BuiltRequest, origin: Origin) {
        recipientPoint = request.recipientKey.publicKey.serialized
        pkR = try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: recipientPoint)
        let sealed = try! engine.accept(rawRequest: request.rawRequest, origin: origin.serialized)
        let responseSize = try! DeviceResponse(
            encoded: AnnexCReader.decrypt(
                sealed, recipientKey: request.recipientKey,
                encryptionInfo: request.encryptionInfo, origin: origin)
        ).item.encodedBytes.count
        payload = [UInt8](repeating: 3, count: responseSize)
        // dcapiInfo = ["dcapi" … ] as hashed: array and string heads around encryptionInfo and origin.
        dcapiInfo = [UInt8](
            repeating: 5, count: 2 + 2 + request.encryptionInfo.utf8.count + 2 + origin.serialized.utf8.count)
    }

    /// Size of the plaintext DeviceResponse.
    var responseSize: Int { payload.count }

    func run() {
        // The transcript's SHA-256 of dcapiInfo.
        blackHole(DigestAlgorithm.sha256.hash(dcapiInfo))
        // The reader's recipient key must be imported (and so validated) once.
        blackHole(try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: recipientPoint))
        let e = try! CryptoCore.PrivateKey.generateForAgreement(.ec(.p256))
        blackHole(e.publicKey.rawRepresentation)  // enc must be serialized
        blackHole(try! e.sharedSecret(with: pkR))
        // HPKE's 4 HKDF-Extract and 4 HKDF-Expand calls.
        for _ in 0..<4 { blackHole(DigestAlgorithm.sha256.hkdfExtract(salt: salt32, ikm: ikm80)) }
        for _ in 0..<4 { blackHole(try! DigestAlgorithm.sha256.hkdfExpand(prk: salt32, info: info90, length: 32)) }
        blackHole(try! devKey.signECDSA(message: tbs, digest: .sha256))
        blackHole(try! AEADAlgorithm.aes128gcm.seal(key: aesKey, nonce: nonce, plaintext: payload, aad: [UInt8]()))
    }
}

// MARK: AnnexC accept (reference request: mDL, 12 elements including an 8 KB portrait)

@MainActor
func acceptFigures() {
    if let op = onlyOp, op.hasPrefix("elements_") || op.hasPrefix("portrait_") { return }  // scalingFigures runs those
    let now = Date(timeIntervalSince1970: 1_780_000_000)
    let day: TimeInterval = 86400
    let iacaKey = try! SoftwareSigner.generate()
    let dsKey = try! SoftwareSigner.generate()
    let device = try! SoftwareSigner.generate()
    let iacaName = DistinguishedName(commonName: "Bench IACA", country: "UT")
    let iaca = try! Certificate.issue(
        subject: iacaName, publicKey: iacaKey.publicKey, issuer: nil, issuerKey: iacaKey, serial: 1,
        notBefore: now - day, notAfter: now + 900 * day, profile: .iaca)
    let ds = try! Certificate.issue(
        subject: .init(commonName: "Bench DS"), publicKey: dsKey.publicKey, issuer: iaca, issuerKey: iacaKey, serial: 2,
        notBefore: now - day, notAfter: now + 900 * day, profile: .documentSigner)
    let ns = "org.iso.18013.5.1"
    let elements: [MdocIssuer.Element] = [
        .init("family_name", .text("Mustermann")), .init("given_name", .text("Erika")),
        .init("birth_date", .tagged(1004, .text("1971-09-01"))),
        .init("issue_date", .tagged(1004, .text("2024-01-01"))),
        .init("expiry_date", .tagged(1004, .text("2029-01-01"))), .init("issuing_country", .text("UT")),
        .init("issuing_authority", .text("Utopia DMV")), .init("document_number", .text("D1234567")),
        .init("portrait", .bytes([UInt8](repeating: 0xd8, count: 8192))),
        .init("driving_privileges", .array([.map([.init(.text("vehicle_category_code"), .text("B"))])])),
        .init("age_over_18", .bool(true)), .init("age_over_21", .bool(true)),
    ]
    let issued = try! MdocIssuer(signer: dsKey, certificateChain: [ds]).issue(
        docType: "org.iso.18013.5.1.mDL", nameSpaces: [(ns, elements)], deviceKey: device.publicKey,
        signed: now - day, validFrom: now - day, validUntil: now + 365 * day)
    let rootKey = try! SoftwareSigner.generate()
    let readerKey = try! SoftwareSigner.generate()
    let rootName = DistinguishedName(commonName: "Bench Reader Root")
    let root = try! Certificate.issue(
        subject: rootName, publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey, serial: 3,
        notBefore: now - day, notAfter: now + 900 * day, profile: .readerRoot)
    let readerCert = try! Certificate.issue(
        subject: .init(commonName: "Bench Reader"), publicKey: readerKey.publicKey, issuer: root, issuerKey: rootKey,
        serial: 4,
        notBefore: now - day, notAfter: now + 900 * day, profile: .readerAuthentication)
    let context = try! CredentialContext(
        entries: [.init(id: "mdl", issuerSigned: issued, deviceKeyReference: "k")],
        readerTrust: ReaderTrustPolicy(trustAnchors: [root]), keyResolver: InMemoryKeyResolver(["k": device]))
    let engine = AnnexCEngine(context: context, configuration: .init(clock: { now }))
    let origin = try! Origin("https://verifier.example")
    let doc = AnnexCReader.DocumentRequest(
        docType: "org.iso.18013.5.1.mDL",
        elements: elements.map { .init(ElementID(ns, $0.identifier), intentToRetain: false) })
    let plain = try! AnnexCReader.makeRequest(documents: [doc], origin: origin)
    let plainData = try! AnnexCReader.makeRequest(documents: [doc], origin: origin, framing: .dataObject)
    let signed = try! AnnexCReader.makeRequest(
        documents: [doc], origin: origin, signing: .perDocument(signer: readerKey, chain: [readerCert]))
    let floor = FloorOperations(engine: engine, request: plain, origin: origin)
    let responseSize = floor.responseSize
    let floorCore = floor.run
    let tbs = floor.tbs
    // The reader's key as the engine holds it: taken from the certificate (an EVP_PKEY, verified without conversion).
    let readerPub = try! X509Certificate(der: readerCert.der).publicKey()
    let readerSig = try! CryptoCore.PrivateKey(encoded: Array(readerKey.pkcs8PEM().utf8)).signECDSA(
        message: tbs, digest: .sha256)
    if let op = onlyOp {
        let parsedOnce = try! engine.parse(rawRequest: plain.rawRequest, origin: origin.serialized)
        let body: () -> Void
        switch op {
        case "accept": body = { blackHole(try! engine.accept(rawRequest: plain.rawRequest, origin: origin.serialized)) }
        case "accept_ios":
            body = { blackHole(try! engine.accept(rawRequest: plainData.rawRequest, origin: origin.serialized)) }
        case "accept_reader_auth":
            body = { blackHole(try! engine.accept(rawRequest: signed.rawRequest, origin: origin.serialized)) }
        case "floor": body = floorCore
        // accept (iOS framing) and its floor alternately, for a sampling profiler: both share one
        // process and one machine state, so their costs can be compared per call path.
        case "accept_ios_and_floor":
            body = {
                blackHole(try! engine.accept(rawRequest: plainData.rawRequest, origin: origin.serialized))
                floorCore()
            }
        case "floor_reader_auth":
            body = {
                floorCore()
                blackHole(try! readerPub.verifyECDSA(signature: readerSig, message: tbs, digest: .sha256))
                try! Certificate.validatePath(leaf: readerCert, anchors: [root], at: now)
            }
        case "parse": body = { blackHole(try! engine.parse(rawRequest: plain.rawRequest, origin: origin.serialized)) }
        case "respond": body = { blackHole(try! engine.respond(to: parsedOnce)) }
        default:
            print("unknown --op \(op)")
            exit(2)
        }
        // One warm-up call in every run (the 0-iteration run too): one-time runtime work (metadata and
        // conformance caches, lazy globals) cancels out of (N − 0) / N, leaving the steady state.
        body()
        for _ in 0..<opIterations { body() }
        exit(0)
    }
    let (a1, f1) = measurePair(
        "annexc.accept.reference", "floor.accept.reference", bytes: responseSize,
        {
            blackHole(try! engine.accept(rawRequest: plain.rawRequest, origin: origin.serialized))
        }, floorCore)
    let (a3, f3) = measurePair(
        "annexc.accept.reference_ios_cbor", "floor.accept.reference_ios_cbor", bytes: responseSize,
        {
            blackHole(try! engine.accept(rawRequest: plainData.rawRequest, origin: origin.serialized))
        }, floorCore)
    figures += [a3, f3]
    let (a2, f2) = measurePair(
        "annexc.accept.reference_reader_auth", "floor.accept.reference_reader_auth", bytes: responseSize,
        {
            blackHole(try! engine.accept(rawRequest: signed.rawRequest, origin: origin.serialized))
        },
        {
            floorCore()
            blackHole(try! readerPub.verifyECDSA(signature: readerSig, message: tbs, digest: .sha256))
            try! Certificate.validatePath(leaf: readerCert, anchors: [root], at: now)
        })
    figures += [a1, f1, a2, f2]
    // Stages.
    figures.append(
        measure("annexc.stage.accept_alone", bytes: responseSize) {
            blackHole(try! engine.accept(rawRequest: plain.rawRequest, origin: origin.serialized))
        })
    figures.append(
        measure("annexc.stage.parse") {
            blackHole(try! engine.parse(rawRequest: plain.rawRequest, origin: origin.serialized))
        })
    figures.append(
        measure("annexc.stage.parse_reader_auth") {
            blackHole(try! engine.parse(rawRequest: signed.rawRequest, origin: origin.serialized))
        })
    let parsed = try! engine.parse(rawRequest: plain.rawRequest, origin: origin.serialized)
    figures.append(measure("annexc.stage.respond", bytes: responseSize) { blackHole(try! engine.respond(to: parsed)) })
    figures.append(
        measure("annexc.stage.chain_check") {
            try! Certificate.validatePath(leaf: readerCert, anchors: [root], at: now)
        })
}

acceptFigures()

// MARK: Scaling: one engine shared by 1 and 2 threads; cost growth with elements and portrait size

@MainActor
func scalingFigures() {
    let clock = Date(timeIntervalSince1970: 1_780_000_000)
    let day: TimeInterval = 86400
    let dsKey = try! SoftwareSigner.generate()
    let ds = try! Certificate.issue(
        subject: .init(commonName: "Scale DS"), publicKey: dsKey.publicKey, issuer: nil, issuerKey: dsKey, serial: 1,
        notBefore: clock - day, notAfter: clock + 900 * day, profile: .documentSigner)
    let ns = "org.iso.18013.5.1"
    func engineFor(elements: Int, portrait: Int) -> (AnnexCEngine, AnnexCReader.BuiltRequest) {
        let device = try! SoftwareSigner.generate()
        var elems = (0..<max(0, elements - 1)).map { MdocIssuer.Element("element_\($0)", .text("value \($0)")) }
        elems.append(.init("portrait", .bytes([UInt8](repeating: 0xd8, count: portrait))))
        let issued = try! MdocIssuer(signer: dsKey, certificateChain: [ds]).issue(
            docType: "org.iso.18013.5.1.mDL", nameSpaces: [(ns, elems)],
            deviceKey: device.publicKey, signed: clock - day, validFrom: clock - day, validUntil: clock + 365 * day)
        let ctx = try! CredentialContext(
            entries: [.init(id: "c", issuerSigned: issued, deviceKeyReference: "k")],
            keyResolver: InMemoryKeyResolver(["k": device]))
        let engine = AnnexCEngine(context: ctx, configuration: .init(clock: { clock }, maxRequestedElements: 1024))
        let req = try! AnnexCReader.makeRequest(
            documents: [
                .init(
                    docType: "org.iso.18013.5.1.mDL",
                    elements: elems.map { .init(ElementID(ns, $0.identifier), intentToRetain: false) })
            ],
            origin: try! Origin("https://verifier.example"), framing: .dataObject)
        return (engine, req)
    }
    // `--op elements_N` / `--op portrait_NK`: one growth point N times, untimed (callgrind: instructions
    // and mallocs per accept as the released elements or bytes grow).
    if let op = onlyOp {
        let (engine, req): (AnnexCEngine, AnnexCReader.BuiltRequest)
        if op.hasPrefix("elements_"), let n = Int(op.dropFirst(9)) {
            (engine, req) = engineFor(elements: n, portrait: 0)
        } else if op.hasPrefix("portrait_"), let kb = Int(op.dropFirst(9).dropLast()) {
            (engine, req) = engineFor(elements: 12, portrait: kb * 1024)
        } else {
            print("unknown --op \(op)")
            exit(2)
        }
        for _ in 0..<opIterations {
            blackHole(try! engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
        }
        exit(0)
    }
    for n in [1, 10, 50, 200] {
        let (engine, req) = engineFor(elements: n, portrait: 0)
        figures.append(
            measure("annexc.accept.elements_\(n)") {
                blackHole(try! engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
            })
    }
    for kb in [8, 64, 512] {
        let (engine, req) = engineFor(elements: 12, portrait: kb * 1024)
        figures.append(
            measure("annexc.accept.portrait_\(kb)k", bytes: kb * 1024) {
                blackHole(try! engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
            })
    }
    // Throughput: the same engine from 1 and from 2 threads; beside it, one engine per thread (shared
    // state such as reference counts on the one credential cannot bounce between cores) and the floor
    // (the OpenSSL work alone), which shows how far the machine and OpenSSL themselves scale. Rounds
    // alternate the variants and each figure is the median round, so host drift hits all alike.
    if filter == nil || "annexc.throughput".contains(filter!) || "floor.throughput".contains(filter!) {
        let (engine, req) = engineFor(elements: 12, portrait: 8192)
        let (engine2, _) = engineFor(elements: 12, portrait: 8192)
        let engines = [engine, engine2]
        let floorOps = FloorOperations(engine: engine, request: req, origin: try! Origin("https://verifier.example"))
        let iterations = quick ? 40 : 600
        func run(threads: Int, _ body: @Sendable (Int) -> Void) -> Double {
            let t0 = now()
            DispatchQueue.concurrentPerform(iterations: threads) { t in
                for _ in 0..<(iterations / threads) { body(t) }
            }
            return Double(iterations) / (Double(now() - t0) / 1e9)
        }
        let shared: @Sendable (Int) -> Void = { _ in
            blackHole(try! engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
        }
        let own: @Sendable (Int) -> Void = { t in
            blackHole(try! engines[t].accept(rawRequest: req.rawRequest, origin: "https://verifier.example"))
        }
        let floorBody: @Sendable (Int) -> Void = { _ in floorOps.run() }
        _ = run(threads: 1, shared)
        var rounds = [[Double]](repeating: [], count: 5)
        for _ in 0..<(quick ? 1 : 5) {
            rounds[0].append(run(threads: 1, shared))
            rounds[1].append(run(threads: 2, shared))
            rounds[2].append(run(threads: 2, own))
            rounds[3].append(run(threads: 1, floorBody))
            rounds[4].append(run(threads: 2, floorBody))
        }
        let med = rounds.map { $0.sorted()[$0.count / 2] }
        func figure(_ name: String, _ perSecond: Double, baseline: String?, base: Double?) -> Figure {
            var f = Figure(bench: name, medianNs: 1e9 / perSecond, p90Ns: 1e9 / perSecond, baseline: baseline)
            if let base { f.ratio = base / perSecond }  // time ratio; throughput scaling = 1 / ratio
            return f
        }
        figures += [
            figure("annexc.throughput.1_thread_per_s", med[0], baseline: nil, base: nil),
            figure(
                "annexc.throughput.2_threads_per_s", med[1], baseline: "annexc.throughput.1_thread_per_s", base: med[0]),
            figure(
                "annexc.throughput.2_engines_per_s", med[2], baseline: "annexc.throughput.1_thread_per_s", base: med[0]),
            figure("floor.throughput.1_thread_per_s", med[3], baseline: nil, base: nil),
            figure(
                "floor.throughput.2_threads_per_s", med[4], baseline: "floor.throughput.1_thread_per_s", base: med[3]),
        ]
    }
}

scalingFigures()

// The primitives one by one, for reading the floor.
do {
    let peer = try! CryptoCore.PrivateKey.generate(.ec(.p256)).publicKey
    let mine = try! CryptoCore.PrivateKey.generate(.ec(.p256))
    let point = peer.rawRepresentation
    figures.append(measure("openssl.p256.keygen") { blackHole(try! CryptoCore.PrivateKey.generate(.ec(.p256))) })
    figures.append(
        measure("openssl.p256.keygen_for_agreement") {
            blackHole(try! CryptoCore.PrivateKey.generateForAgreement(.ec(.p256)))
        })
    figures.append(measure("openssl.p256.ecdh") { blackHole(try! mine.sharedSecret(with: peer)) })
    figures.append(
        measure("openssl.p256.public_key_import") {
            blackHole(try! CryptoCore.PublicKey(curve: .p256, uncompressedPoint: point))
        })
    figures.append(
        measure("openssl.p256.ecdsa_sign") { blackHole(try! mine.signECDSA(message: point, digest: .sha256)) })
}

// MARK: The CLI as a process: `mdoc-respond respond` on the reference readerAuth request

do {
    let name = "cli.respond.process"
    let cli = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "mdoc-respond")
    let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestVectors")
    let request = vectors.appendingPathComponent("requests/mdl-dataObject-v1.0-readerAuth.json")
    if onlyOp == nil, filter == nil || name.contains(filter!), FileManager.default.isExecutableFile(atPath: cli.path),
        FileManager.default.fileExists(atPath: request.path)
    {
        var walls = [Double]()
        var peaks = [Int]()
        // posix_spawn directly (Foundation's Process adds tens of milliseconds of its own per launch);
        // stderr goes to a file, from which the child's own peak memory (--report) is read.
        let errFile = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-bench-\(getpid()).err").path
        defer { unlink(errFile) }
        let args = [
            cli.path, "respond", "--report", "--request", request.path, "--origin", "https://verifier.example",
            "--clock", "2027-03-01T12:00:00Z", "--out", "/dev/null",
        ]
        for _ in 0..<(quick ? 3 : 30) {
            let argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, errFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            var pid: pid_t = 0
            let t0 = now()
            let rc = argv.withUnsafeBufferPointer {
                posix_spawn(&pid, cli.path, &actions, nil, UnsafeMutablePointer(mutating: $0.baseAddress!), environ)
            }
            var status: Int32 = 0
            if rc == 0 { while waitpid(pid, &status, 0) < 0 && errno == EINTR {} }
            walls.append(Double(now() - t0))
            posix_spawn_file_actions_destroy(&actions)
            for a in argv { free(a) }
            let text = (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""
            if let r = text.range(of: "peak memory "), let k = Int(text[r.upperBound...].prefix { $0.isNumber }) {
                peaks.append(k)
            }
        }
        walls.sort()
        var f = Figure(
            bench: name, medianNs: walls[walls.count / 2], p90Ns: walls[min(walls.count - 1, walls.count * 9 / 10)],
            baseline: nil)
        f.peakKiB = peaks.max()
        figures.append(f)
    } else if onlyOp == nil && filter == nil {
        print(
            "NOTICE: \(cli.path) not built (swift build -c release --product mdoc-respond); the process figure is skipped"
        )
    }
}

// MARK: Output

figures.removeAll { $0.medianNs.isNaN }

func fmt(_ ns: Double) -> String {
    ns >= 1_000_000
        ? String(format: "%.2f ms", ns / 1e6)
        : ns >= 1000 ? String(format: "%.2f µs", ns / 1000) : String(format: "%.0f ns", ns)
}

if !jsonOnly {
    print("mdoc-bench\(quick ? " (quick)" : "")  libcbor \(LibCBORBaseline.version)  samples \(samples)")
    print(
        "bench".padding(toLength: 44, withPad: " ", startingAt: 0)
            + "median".padding(toLength: 12, withPad: " ", startingAt: 0)
            + "p90".padding(toLength: 12, withPad: " ", startingAt: 0)
            + "MB/s".padding(toLength: 9, withPad: " ", startingAt: 0) + "vs baseline")
    for f in figures {
        let mbps = f.bytes.map { String(format: "%.0f", Double($0) / f.medianNs * 1000) } ?? "-"
        let vs =
            f.ratio.map { String(format: "%.2fx time (%.1fx faster)", $0, 1 / $0) } ?? f.peakKiB.map {
                String(format: "peak RSS %.1f MiB", Double($0) / 1024)
            } ?? ""
        print(
            f.bench.padding(toLength: 44, withPad: " ", startingAt: 0)
                + fmt(f.medianNs).padding(toLength: 12, withPad: " ", startingAt: 0)
                + fmt(f.p90Ns).padding(toLength: 12, withPad: " ", startingAt: 0)
                + mbps.padding(toLength: 9, withPad: " ", startingAt: 0) + vs)
    }
}
for f in figures {
    var obj =
        "{\"bench\":\"\(f.bench)\",\"median_ns\":\(Int(f.medianNs.rounded())),\"p90_ns\":\(Int(f.p90Ns.rounded())),"
    obj += "\"baseline\":" + (f.baseline.map { "\"\($0)\"" } ?? "null") + ","
    obj += "\"ratio\":" + (f.ratio.map { String(format: "%.3f", $0) } ?? "null")
    if let b = f.bytes { obj += ",\"bytes\":\(b)" }
    if let k = f.peakKiB { obj += ",\"peak_kib\":\(k)" }
    obj += "}"
    print(obj)
}
