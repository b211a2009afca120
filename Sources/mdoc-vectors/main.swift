// mdoc-vectors: regenerates the project's own test vectors in TestVectors/.
//   swift run mdoc-vectors [--out DIR] [--seed TEXT]
// Everything derivable from the seed is: keys (RFC 9180 DeriveKeyPair on P-256), item salts, reader
// nonces. ECDSA signatures are randomized by OpenSSL 3.0, so signature bytes differ between runs;
// every vector stays valid. All keys written here are TEST KEYS, published on purpose.
import DigitalCredentials
import AnnexCReader
import Foundation
import HPKE
import MdocCBOR

func parseArguments() -> (out: String, seed: String) {
    var outDir = "TestVectors"
    var seed = "mdoc-respond test vectors v1"
    var args = Array(CommandLine.arguments.dropFirst())
    while !args.isEmpty {
        let a = args.removeFirst()
        switch a {
        case "--out": outDir = args.isEmpty ? outDir : args.removeFirst()
        case "--seed": seed = args.isEmpty ? seed : args.removeFirst()
        case "-h", "--help":
            print(
                "usage: mdoc-vectors [--out DIR] [--seed TEXT]\nRegenerates TestVectors/ (test keys, certificates, credentials, the built-in context, requests and expected outcomes)."
            )
            exit(0)
        default:
            FileHandle.standardError.write(Data("mdoc-vectors: unknown argument\n".utf8))
            exit(2)
        }
    }
    return (outDir, seed)
}
let (outDir, seed) = parseArguments()

let root = URL(fileURLWithPath: outDir)
let fm = FileManager.default
try? fm.removeItem(at: root.appendingPathComponent("context"))
for sub in ["pki", "credentials", "credentials/bad", "context/keys", "requests"] {
    try fm.createDirectory(at: root.appendingPathComponent(sub), withIntermediateDirectories: true)
}

func key(_ label: String) throws -> SoftwareSigner {
    let k = try HPKE.PrivateKey.derive(
        kem: .p256HKDFSHA256, ikm: MdocDigest.sha256(Array((seed + "/key/" + label).utf8)))
    return try SoftwareSigner(curve: .p256, scalar: k.serialized())
}

func write(_ data: [UInt8], _ path: String, mode: Int = 0o644) throws {
    let url = root.appendingPathComponent(path)
    try Data(data).write(to: url)
    try fm.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
}
func write(_ text: String, _ path: String, mode: Int = 0o644) throws { try write(Array(text.utf8), path, mode: mode) }

func date(_ s: String) -> Date { MdocDate.parseDateTime(s)! }
let pkiFrom = date("2026-01-01T00:00:00Z")
let pkiTo = date("2036-01-01T00:00:00Z")

// MARK: PKI

let iacaKey = try key("iaca")
let dsKey = try key("ds")
let iacaName = DistinguishedName(
    commonName: "mdoc-respond Test IACA", country: "UT", organization: "mdoc-respond tests")
let iaca = try Certificate.issue(
    subject: iacaName, publicKey: iacaKey.publicKey, issuer: nil, issuerKey: iacaKey, serial: 1, notBefore: pkiFrom,
    notAfter: pkiTo, profile: .iaca)
let ds = try Certificate.issue(
    subject: .init(commonName: "mdoc-respond Test Document Signer", country: "UT", organization: "mdoc-respond tests"),
    publicKey: dsKey.publicKey, issuer: iaca, issuerKey: iacaKey, serial: 2, notBefore: pkiFrom, notAfter: pkiTo,
    profile: .documentSigner)
let rogueKey = try key("rogue-iaca")
let rogueDSKey = try key("rogue-ds")
let rogueName = DistinguishedName(commonName: "Untrusted IACA", country: "ZZ")
let rogue = try Certificate.issue(
    subject: rogueName, publicKey: rogueKey.publicKey, issuer: nil, issuerKey: rogueKey, serial: 3, notBefore: pkiFrom,
    notAfter: pkiTo, profile: .iaca)
let rogueDS = try Certificate.issue(
    subject: .init(commonName: "Untrusted Document Signer", country: "ZZ"), publicKey: rogueDSKey.publicKey,
    issuer: rogue,
    issuerKey: rogueKey, serial: 4, notBefore: pkiFrom, notAfter: pkiTo, profile: .documentSigner)
let readerRootKey = try key("reader-root")
let readerKey = try key("reader")
let readerRootName = DistinguishedName(commonName: "mdoc-respond Test Reader Root", country: "UT")
let readerRoot = try Certificate.issue(
    subject: readerRootName, publicKey: readerRootKey.publicKey, issuer: nil, issuerKey: readerRootKey, serial: 10,
    notBefore: pkiFrom, notAfter: pkiTo, profile: .readerRoot)
let readerCert = try Certificate.issue(
    subject: .init(commonName: "mdoc-respond Test Reader", organization: "Example Verifier"),
    publicKey: readerKey.publicKey,
    issuer: readerRoot, issuerKey: readerRootKey, serial: 11, notBefore: pkiFrom, notAfter: pkiTo,
    profile: .readerAuthentication)
let strangerRootKey = try key("stranger-root")
let strangerKey = try key("stranger-reader")
let strangerRoot = try Certificate.issue(
    subject: .init(commonName: "Unknown Reader Root"), publicKey: strangerRootKey.publicKey, issuer: nil,
    issuerKey: strangerRootKey,
    serial: 12, notBefore: pkiFrom, notAfter: pkiTo, profile: .readerRoot)
let strangerCert = try Certificate.issue(
    subject: .init(commonName: "Unknown Reader"), publicKey: strangerKey.publicKey, issuer: strangerRoot,
    issuerKey: strangerRootKey, serial: 13, notBefore: pkiFrom, notAfter: pkiTo, profile: .readerAuthentication)
// OpenID4VP request signers (HAIP profile, SAN verifier.example): one under the reader root, one under
// the unknown root.
let verifierKey = try key("verifier")
let verifierCert = try Certificate.issue(
    subject: .init(commonName: "mdoc-respond Test Verifier", organization: "Example Verifier"),
    publicKey: verifierKey.publicKey, issuer: readerRoot, issuerKey: readerRootKey, serial: 14, notBefore: pkiFrom,
    notAfter: pkiTo, profile: .requestSigner(dnsNames: ["verifier.example"]))
let strangerVerifierKey = try key("stranger-verifier")
let strangerVerifierCert = try Certificate.issue(
    subject: .init(commonName: "Unknown Verifier"), publicKey: strangerVerifierKey.publicKey, issuer: strangerRoot,
    issuerKey: strangerRootKey, serial: 15, notBefore: pkiFrom, notAfter: pkiTo,
    profile: .requestSigner(dnsNames: ["verifier.example"]))
for (name, cert) in [
    ("iaca", iaca), ("ds", ds), ("untrusted-iaca", rogue), ("untrusted-ds", rogueDS), ("reader-root", readerRoot),
    ("reader", readerCert),
    ("unknown-reader-root", strangerRoot), ("unknown-reader", strangerCert), ("verifier", verifierCert),
    ("unknown-verifier", strangerVerifierCert),
] {
    try write(cert.der, "pki/\(name).der")
}
for (name, k) in [
    ("iaca", iacaKey), ("ds", dsKey), ("reader-root", readerRootKey), ("reader", readerKey),
    ("unknown-reader", strangerKey), ("verifier", verifierKey), ("unknown-verifier", strangerVerifierKey),
] {
    try write(try k.pkcs8PEM(), "pki/\(name).key.pem", mode: 0o600)
}

// MARK: Credentials

let creds: [Cred] = [
    Cred(id: "mdl", docType: "org.iso.18013.5.1.mDL", ns: mDLNS, elements: mDLElements),
    Cred(id: "pid", docType: "eu.europa.ec.eudi.pid.1", ns: pidNS, elements: pidElements),
    Cred(id: "photoid", docType: "org.iso.23220.photoid.1", ns: photoNS, elements: photoElements),
    // The EU age-verification attestation (AV profile annex A): one element, what a zero-knowledge age
    // check proves.
    Cred(
        id: "av", docType: "eu.europa.ec.av.1", ns: "eu.europa.ec.av.1", elements: [.init("age_over_18", .bool(true))]),
    Cred(
        id: "mdl-expired", docType: "org.iso.18013.5.1.mDL", ns: mDLNS, elements: Array(mDLElements.prefix(4)),
        from: "2026-01-01T00:00:00Z", until: "2026-06-01T00:00:00Z"),
    Cred(
        id: "mdl-not-yet-valid", docType: "org.iso.18013.5.1.mDL", ns: mDLNS, elements: Array(mDLElements.prefix(4)),
        from: "2035-01-01T00:00:00Z", until: "2036-01-01T00:00:00Z"),
    Cred(
        id: "mdl-cancelled", docType: "org.iso.18013.5.1.mDL", ns: mDLNS, elements: Array(mDLElements.prefix(4)),
        cancelled: true),
    Cred(
        id: "pid-untrusted-issuer", docType: "eu.europa.ec.eudi.pid.1", ns: pidNS,
        elements: Array(pidElements.prefix(4)), untrusted: true),
]
var entries = [CredentialContext.Entry]()
var signers = [String: any COSESigner]()
for c in creds {
    let device = try key("device/\(c.id)")
    var rnd = SeededRandom("salts/\(c.id)")
    let issuer =
        c.untrusted
        ? MdocIssuer(signer: rogueDSKey, certificateChain: [rogueDS])
        : MdocIssuer(signer: dsKey, certificateChain: [ds])
    let bytes = try issuer.issue(
        docType: c.docType, nameSpaces: [(c.ns, c.elements)], deviceKey: device.publicKey, signed: date(c.from),
        validFrom: date(c.from),
        validUntil: date(c.until), random: { rnd.bytes($0) })
    try write(bytes, "credentials/\(c.id).issuer-signed.cbor")
    try write(try device.pkcs8PEM(), "context/keys/\(c.id).pem", mode: 0o600)
    entries.append(
        .init(id: c.id, issuerSigned: bytes, deviceKeyReference: "keys/\(c.id).pem", isCancelled: c.cancelled))
    signers["keys/\(c.id).pem"] = device
}
// Deliberately bad credentials that a context must refuse.
do {
    let device = try key("device/mdl")
    let other = try key("device/other")
    var rnd = SeededRandom("salts/bad")
    let good = try MdocIssuer(signer: dsKey, certificateChain: [ds]).issue(
        docType: "org.iso.18013.5.1.mDL", nameSpaces: [(mDLNS, Array(mDLElements.prefix(3)))],
        deviceKey: device.publicKey, signed: pkiFrom, validFrom: pkiFrom, validUntil: date("2031-01-01T00:00:00Z"),
        random: { rnd.bytes($0) })
    try write(good, "credentials/bad/wrong-device-key.issuer-signed.cbor")
    try write(try other.pkcs8PEM(), "credentials/bad/wrong-device-key.pem", mode: 0o600)
    // Tampered element: the family name's text changed after signing (same length, so the CBOR stays valid).
    var tampered = good
    let needle = Array("Mustermann".utf8)
    if let at = (0...(tampered.count - needle.count)).first(where: {
        Array(tampered[$0..<($0 + needle.count)]) == needle
    }) {
        tampered.replaceSubrange(at..<(at + needle.count), with: Array("Musterfrau".utf8))
    }
    try write(tampered, "credentials/bad/tampered-element.issuer-signed.cbor")
    try write(try device.pkcs8PEM(), "credentials/bad/tampered-element.pem", mode: 0o600)
}

// MARK: The built-in context

let contextDir = root.appendingPathComponent("context")
let context = try CredentialContext(
    entries: entries, readerTrust: ReaderTrustPolicy(trustAnchors: [readerRoot]),
    keyResolver: FileKeyResolver(directory: contextDir))
try context.write(to: contextDir)

// MARK: Requests

let origin = try Origin("https://verifier.example")
var cases = [Case]()
var caseNumber = 0
@MainActor
func add(
    _ id: String, docs: [AnnexCReader.DocumentRequest], framing: RequestFraming = .digitalRequestList,
    version: AnnexCReader.Version = .v1_0,
    signing: String = "none", useCases: [AnnexCReader.UseCase] = [], requestOrigin: Origin = origin,
    presentedOrigin: String? = nil,
    policy: [String: Bool]? = nil, expected: ExpectedOutcome
) throws {
    caseNumber += 1
    var rnd = SeededRandom("request/\(id)")
    let rk = try HPKE.PrivateKey.derive(kem: .p256HKDFSHA256, ikm: rnd.bytes(32))
    let s: AnnexCReader.Signing
    switch signing {
    case "readerAuth": s = .perDocument(signer: readerKey, chain: [readerCert])
    case "readerAuthAll": s = .all(signer: readerKey, chain: [readerCert])
    case "unknownReader": s = .perDocument(signer: strangerKey, chain: [strangerCert])
    case "badSignature": s = .perDocument(signer: strangerKey, chain: [readerCert])
    default: s = .none
    }
    let built = try AnnexCReader.makeRequest(
        documents: docs, origin: requestOrigin, framing: framing, signing: s, version: version, useCases: useCases,
        nonce: rnd.bytes(16), recipientKey: rk)
    let file = "requests/\(id).json"
    try write(Array(built.rawRequest), file)
    cases.append(
        Case(
            id: id, file: file, origin: presentedOrigin ?? origin.serialized, framing: framing.rawValue,
            version: version.rawValue, readerAuth: signing,
            readerKey: try rk.serialized().map { String(format: "%02x", $0) }.joined(),
            encryptionInfo: built.encryptionInfo,
            deviceRequest: built.deviceRequest,
            documents: docs.map { d in [d.docType: d.elements.map(\.element.description)] },
            alternatives: docs.first.flatMap { d in
                d.alternatives.isEmpty
                    ? nil
                    : Dictionary(
                        d.alternatives.map { ($0.requested.description, $0.sets.map { $0.map(\.description) }) },
                        uniquingKeysWith: { $1 })
            },
            policy: policy, expected: expected))
}
func ask(_ docType: String, _ ns: String, _ names: [String]) -> AnnexCReader.DocumentRequest {
    .init(docType: docType, elements: names.map { .init(ElementID(ns, $0), intentToRetain: $0 != "portrait") })
}
func ok(_ d: [String: [String]], verdict: String? = nil) -> ExpectedOutcome { .ok(d, readerVerdict: verdict) }
let refused = ExpectedOutcome.refused

let mdlAsk = ["family_name", "given_name", "birth_date", "portrait", "driving_privileges", "age_over_21"]
for f in RequestFraming.allCases {
    for v in AnnexCReader.Version.allCases {
        for sgn in ["none", "readerAuth", "readerAuthAll"] where !(sgn == "readerAuthAll" && v == .v1_0) {
            try add(
                "mdl-\(f.rawValue)-v\(v.rawValue)-\(sgn)", docs: [ask("org.iso.18013.5.1.mDL", mDLNS, mdlAsk)],
                framing: f, version: v, signing: sgn,
                expected: ok(["org.iso.18013.5.1.mDL": mdlAsk.map { "\(mDLNS)/\($0)" }]))
        }
    }
}
try add(
    "pid-age-over-18", docs: [ask("eu.europa.ec.eudi.pid.1", pidNS, ["age_over_18"])],
    expected: ok(["eu.europa.ec.eudi.pid.1": ["\(pidNS)/age_over_18"]]))
try add(
    "photoid", docs: [ask("org.iso.23220.photoid.1", photoNS, ["family_name_unicode", "portrait"])],
    signing: "readerAuth",
    expected: ok(["org.iso.23220.photoid.1": ["\(photoNS)/family_name_unicode", "\(photoNS)/portrait"]]))
try add(
    "multi-document-v1.1-use-cases",
    docs: [
        ask("org.iso.18013.5.1.mDL", mDLNS, ["age_over_21"]), ask("eu.europa.ec.eudi.pid.1", pidNS, ["nationality"]),
    ],
    version: .v1_1, signing: "readerAuthAll", useCases: [.init(mandatory: true, documentSets: [[0, 1]])],
    expected: ok([
        "org.iso.18013.5.1.mDL": ["\(mDLNS)/age_over_21"], "eu.europa.ec.eudi.pid.1": ["\(pidNS)/nationality"],
    ]))
try add(
    "multi-document-v1.0",
    docs: [
        ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name"]), ask("org.iso.23220.photoid.1", photoNS, ["age_over_18"]),
    ],
    expected: ok([
        "org.iso.18013.5.1.mDL": ["\(mDLNS)/family_name"], "org.iso.23220.photoid.1": ["\(photoNS)/age_over_18"],
    ]))
try add(
    "unavailable-elements-omitted",
    docs: [ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name", "biometric_template_face", "age_over_99"])],
    expected: ok(["org.iso.18013.5.1.mDL": ["\(mDLNS)/family_name"]]))
try add(
    "unknown-doctype", docs: [ask("org.example.library-card.1", "org.example.library", ["member_id"])],
    expected: refused(.noMatchingCredential))
try add(
    "nothing-held", docs: [ask("org.iso.18013.5.1.mDL", mDLNS, ["biometric_template_face"])],
    expected: refused(.cannotSatisfyRequest))
try add(
    "mandatory-use-case-unsatisfiable",
    docs: [
        ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name"]),
        ask("org.example.library-card.1", "org.example.library", ["member_id"]),
    ],
    version: .v1_1, useCases: [.init(mandatory: true, documentSets: [[1]])], expected: refused(.cannotSatisfyRequest))
// A reader whose certificate chains to no anchor the holder has: answered as "signed, not trusted"
// by default; refused when the holder requires a trusted reader.
try add(
    "untrusted-reader", docs: [ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name"])], signing: "unknownReader",
    expected: ok(["org.iso.18013.5.1.mDL": ["\(mDLNS)/family_name"]], verdict: "signedNotTrusted:notChainedToAnchor"))
try add(
    "untrusted-reader-refused-when-a-trusted-reader-is-required",
    docs: [ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name"])], signing: "unknownReader",
    policy: ["requireTrustedReader": true], expected: refused(.untrustedReader))
try add(
    "trusted-reader", docs: [ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name"])], signing: "readerAuth",
    expected: ok(["org.iso.18013.5.1.mDL": ["\(mDLNS)/family_name"]], verdict: "trusted"))
try add(
    "unsigned-refused-when-reader-authentication-is-required",
    docs: [ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name"])],
    policy: ["requireReaderAuthentication": true], expected: refused(.readerAuthenticationRequired))
// alternativeDataElements (1.1): a missing element replaced by a held set; a hostile set is never honoured.
try add(
    "substitute-birth-date-for-age-over-25",
    docs: [
        .init(
            docType: "org.iso.18013.5.1.mDL",
            elements: [
                .init(ElementID(mDLNS, "age_over_25"), intentToRetain: false),
                .init(ElementID(mDLNS, "family_name"), intentToRetain: false),
            ],
            alternatives: [
                .init(
                    ElementID(mDLNS, "age_over_25"),
                    [[ElementID(mDLNS, "age_over_99")], [ElementID(mDLNS, "birth_date")]])
            ])
    ], version: .v1_1,
    expected: ok(["org.iso.18013.5.1.mDL": ["\(mDLNS)/birth_date", "\(mDLNS)/family_name"]]))
try add(
    "hostile-whole-credential-as-alternative",
    docs: [
        .init(
            docType: "org.iso.18013.5.1.mDL", elements: [.init(ElementID(mDLNS, "age_over_25"), intentToRetain: false)],
            alternatives: [
                .init(ElementID(mDLNS, "age_over_25"), [mDLElements.map { ElementID(mDLNS, $0.identifier) }])
            ])
    ], version: .v1_1,
    expected: refused(.cannotSatisfyRequest))
try add(
    "bad-reader-signature", docs: [ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name"])], signing: "badSignature",
    expected: refused(.readerAuthenticationFailed))
try add(
    "wrong-origin", docs: [ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name"])], signing: "readerAuth",
    presentedOrigin: "https://evil.example",
    expected: refused(.readerAuthenticationFailed))
try add(
    "origin-with-path", docs: [ask("org.iso.18013.5.1.mDL", mDLNS, ["family_name"])],
    presentedOrigin: "https://verifier.example/login", expected: refused(.invalidOrigin))
try add(
    "pid-from-untrusted-issuer-is-still-answered", docs: [ask("eu.europa.ec.eudi.pid.1", pidNS, ["family_name"])],
    expected: ok(["eu.europa.ec.eudi.pid.1": ["\(pidNS)/family_name"]]))

// Hostile, hand-made request files.
let hostile: [(String, String, PresentmentError.Code)] = [
    ("hostile-not-json", "deviceRequest=1&encryptionInfo=2", .malformedRequest),
    (
        "hostile-openid4vp-only",
        "{\"digital\":{\"requests\":[{\"protocol\":\"openid4vp-v1-signed\",\"data\":{\"request\":\"x\"}}]}}",
        .unsupportedProtocol
    ),
    // A valid encryptionInfo, so the deviceRequest's bad base64url is what refuses it.
    (
        "hostile-bad-base64", "{\"deviceRequest\":\"!!!!\",\"encryptionInfo\":\"\(cases[0].encryptionInfo)\"}",
        .malformedRequest
    ),
    (
        "hostile-deep-json", String(repeating: "{\"a\":", count: 5000) + "1" + String(repeating: "}", count: 5000),
        .malformedRequest
    ),
]
for (id, body, code) in hostile {
    let file = "requests/\(id).json"
    try write(body, file)
    cases.append(
        Case(
            id: id, file: file, origin: origin.serialized, framing: "-", version: "-", readerAuth: "none",
            readerKey: "", encryptionInfo: "", deviceRequest: "",
            documents: [], alternatives: nil, policy: nil, expected: refused(code)))
}

let encoder = JSONEncoder()
encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
try write(Array(try encoder.encode(cases)), "requests/manifest.json")
let openID4VPCount = try generateOpenID4VP(
    verifierKey: verifierKey, verifierCert: verifierCert, strangerKey: strangerVerifierKey,
    strangerCert: strangerVerifierCert, iacaSKI: iaca.subjectKeyIdentifier!)
try write(
    """
    # TestVectors

    Generated by `swift run mdoc-vectors` (Sources/mdoc-vectors/main.swift) from the seed
    "\(seed)". Keys, item salts and reader nonces derive from the seed; ECDSA signatures are
    randomized by OpenSSL 3.0, so signature bytes change when regenerated (every vector stays valid).

    **All private keys in this folder are test keys, published on purpose. They protect nothing.**

    | path | what |
    | --- | --- |
    | `pki/` | test IACA and document signer (18013-5 Annex B profiles), an untrusted IACA/DS, reader root and reader certificate (EKU 1.0.18013.5.1.6), an unknown reader root and reader, OpenID4VP request signers (SAN verifier.example) under each root; PKCS#8 test keys |
    | `credentials/` | IssuerSigned of an mDL (full 18013-5 §7.2.1 element set, 8 KB portrait, driving_privileges), an EU PID, a photo ID, and expired / not-yet-valid / cancelled / untrusted-issuer variants |
    | `credentials/bad/` | credentials a context must refuse: a wrong device key, a tampered element |
    | `context/` | the built-in credential context (`context.cbor`, mode 0600) with `keys/`; reader trust anchor: `pki/reader-root.der` |
    | `requests/` | \(cases.count) requests (every framing × 1.0/1.1 × no reader auth / readerAuth / readerAuthAll, multi-document, unavailable elements, unknown docType, trust failures, hostile inputs) and `manifest.json` with origin, reader HPKE key (hex), and the expected outcome of each |
    | `requests/openid4vp/` | \(openID4VPCount) OpenID4VP requests (every form × response mode, framings, DCQL claim sets, values, credential sets, no claims, trusted authorities, trust and policy failures, expected_origins, transaction_data) and `manifest.json` with each verifier state (its JWE key is a test key) and expected outcome |

    Validity: credentials 2026-01-01 … 2031-01-01 (expired one ends 2026-06-01; the not-yet-valid one starts 2035); certificates 2026-01-01 … 2036-01-01.
    """, "README.md")
print(
    "mdoc-vectors: wrote \(creds.count) credentials, \(cases.count) Annex C and \(openID4VPCount) OpenID4VP requests, the built-in context and the PKI to \(root.path)"
)
