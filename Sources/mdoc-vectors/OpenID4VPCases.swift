import DigitalCredentials
import Foundation
import HPKE
import MdocCBOR
import OpenID4VP
import OpenID4VPReader
import Presentment

/// One OpenID4VP request vector: the raw request, the verifier's state to open the answer with (its
/// JWE key is a test key) and the expected outcome.
struct OpenID4VPCase: Encodable {
    let id: String
    let file: String
    let origin: String
    let form: String
    let responseMode: String
    let state: String
    let policy: [String: Bool]?
    let expected: ExpectedOutcome
}

/// Writes `requests/openid4vp/*.json` and its manifest.
@MainActor
func generateOpenID4VP(
    verifierKey: SoftwareSigner, verifierCert: Certificate, strangerKey: SoftwareSigner, strangerCert: Certificate,
    iacaSKI: [UInt8]
) throws -> Int {
    try fm.createDirectory(at: root.appendingPathComponent("requests/openid4vp"), withIntermediateDirectories: true)
    let origin = try Origin("https://verifier.example")
    var out = [OpenID4VPCase]()
    typealias Q = OpenID4VPReader.CredentialQuery
    typealias C = OpenID4VPReader.Claim
    func e(_ n: String, _ ns: String = mDLNS) -> ElementID { ElementID(ns, n) }
    let dns = OpenID4VPReader.Signer(key: verifierKey, chain: [verifierCert], clientID: .sanDNS("verifier.example"))
    let hash = OpenID4VPReader.Signer(key: verifierKey, chain: [verifierCert], clientID: .hash)
    let mdl = Q(id: "mdl", docType: "org.iso.18013.5.1.mDL", claims: [C(e("family_name")), C(e("age_over_21"))])
    let both = ["\(mDLNS)/family_name", "\(mDLNS)/age_over_21"]
    func ok(_ d: [String: [String]], verdict: String? = nil) -> ExpectedOutcome {
        .ok(d, verifierVerdict: verdict)
    }
    let refused = ExpectedOutcome.refused
    func add(
        _ id: String, _ queries: [Q], sets: [OpenID4VPReader.CredentialSet] = [],
        signing: OpenID4VPReader.Signing = .unsigned,
        form: String = "unsigned", mode: OpenID4VPResponseMode = .dcAPIJWT,
        framing: OpenID4VPReader.Framing = .digitalRequestList,
        expectedOrigins: [String]? = nil, encryptions: [String]? = ["A128GCM", "A256GCM"],
        extra: [(String, String)] = [],
        policy: [String: Bool]? = nil, expected: ExpectedOutcome
    ) throws {
        var rnd = SeededRandom("openid4vp/\(id)")
        let key = try SoftwareSigner(
            curve: .p256, scalar: try HPKE.PrivateKey.derive(kem: .p256HKDFSHA256, ikm: rnd.bytes(32)).serialized())
        let built = try OpenID4VPReader.makeRequest(
            queries: queries, credentialSets: sets, origin: origin, signing: signing, framing: framing,
            expectedOrigins: expectedOrigins, responseMode: mode, encryptions: encryptions, extra: extra,
            nonce: Base64URLText.encode(rnd.bytes(16)), encryptionKey: key)
        let file = "requests/openid4vp/\(id).json"
        try write(Array(built.rawRequest), file)
        out.append(
            OpenID4VPCase(
                id: id, file: file, origin: origin.serialized, form: form, responseMode: mode.rawValue,
                state: String(decoding: built.state, as: UTF8.self), policy: policy, expected: expected))
    }
    for (form, signing) in [
        ("unsigned", OpenID4VPReader.Signing.unsigned), ("signed-x509_san_dns", .signed(dns)),
        ("signed-x509_hash", .signed(hash)),
        ("multisigned-top-level", .multisigned([dns, hash], placement: .topLevel)),
        ("multisigned-request-object", .multisigned([hash, dns], placement: .requestObject)),
        ("multisigned-request-string", .multisigned([dns], placement: .requestString)),
    ] {
        for mode in OpenID4VPResponseMode.allCases {
            try add(
                "mdl-\(form)-\(mode.rawValue)", [mdl], signing: signing, form: form, mode: mode,
                expected: ok(["mdl": both], verdict: form == "unsigned" ? "notAuthenticated" : "trusted"))
        }
    }
    for framing in [OpenID4VPReader.Framing.dataObject, .protocolAndData, .requestList] {
        try add("mdl-unsigned-\(framing.rawValue)", [mdl], framing: framing, expected: ok(["mdl": both]))
    }
    try add(
        "claim-sets-first-held",
        [
            Q(
                id: "age", docType: "org.iso.18013.5.1.mDL",
                claims: [C(e("age_over_25"), id: "a25"), C(e("age_over_21"), id: "a21"), C(e("birth_date"), id: "bd")],
                claimSets: [["a25"], ["a21"], ["bd"]])
        ],
        expected: ok(["age": ["\(mDLNS)/age_over_21"]]))
    try add(
        "values-match",
        [
            Q(
                id: "m", docType: "org.iso.18013.5.1.mDL",
                claims: [
                    C(e("issuing_country"), values: [.text("UT")]), C(e("age_birth_year"), values: [.integer(1971)]),
                ])
        ],
        expected: ok(["m": ["\(mDLNS)/issuing_country", "\(mDLNS)/age_birth_year"]]))
    try add(
        "values-mismatch",
        [Q(id: "m", docType: "org.iso.18013.5.1.mDL", claims: [C(e("issuing_country"), values: [.text("DE")])])],
        // A probe that does not match is refused as a declined request: the page cannot tell the two apart.
        expected: refused(.cannotSatisfyRequest))
    try add(
        "credential-sets-photo-or-mdl-and-optional-pid",
        [
            mdl, Q(id: "pid", docType: "eu.europa.ec.eudi.pid.1", claims: [C(e("nationality", pidNS))]),
            Q(id: "photo", docType: "org.iso.23220.photoid.1", claims: [C(e("family_name_unicode", photoNS))]),
        ],
        sets: [.init(options: [["photo"], ["mdl"]]), .init(options: [["pid"]], required: false)],
        expected: ok(["photo": ["\(photoNS)/family_name_unicode"], "pid": ["\(pidNS)/nationality"]]))
    try add(
        "credential-set-unsatisfiable",
        [Q(id: "card", docType: "org.example.library-card.1", claims: [C(e("member_id", "org.example.library"))])],
        sets: [.init(options: [["card"]])], expected: refused(.cannotSatisfyRequest))
    try add("no-claims", [Q(id: "m", docType: "org.iso.18013.5.1.mDL", claims: nil)], expected: ok(["m": []]))
    try add(
        "trusted-authority-aki",
        [Q(id: "m", docType: "org.iso.18013.5.1.mDL", claims: [C(e("family_name"))], trustedAuthorities: [iacaSKI])],
        expected: ok(["m": ["\(mDLNS)/family_name"]]))
    try add(
        "trusted-authority-other",
        [
            Q(
                id: "m", docType: "org.iso.18013.5.1.mDL", claims: [C(e("family_name"))],
                trustedAuthorities: [[1, 2, 3, 4]])
        ],
        expected: refused(.noMatchingCredential))
    try add("enc-a128gcm-only", [mdl], encryptions: ["A128GCM"], expected: ok(["mdl": both]))
    let stranger = OpenID4VPReader.Signer(
        key: strangerKey, chain: [strangerCert], clientID: .sanDNS("verifier.example"))
    try add(
        "untrusted-verifier", [mdl], signing: .signed(stranger), form: "signed-x509_san_dns",
        expected: ok(["mdl": both], verdict: "signedNotTrusted:notChainedToAnchor"))
    try add(
        "untrusted-verifier-refused-when-trust-is-required", [mdl], signing: .signed(stranger),
        form: "signed-x509_san_dns",
        policy: ["requireTrustedReader": true], expected: refused(.untrustedReader))
    try add(
        "unsigned-refused-when-authentication-is-required", [mdl], policy: ["requireReaderAuthentication": true],
        expected: refused(.readerAuthenticationRequired))
    try add(
        "expected-origins-trailing-slash", [mdl], signing: .signed(dns), form: "signed-x509_san_dns",
        expectedOrigins: ["https://verifier.example/"], expected: refused(.originMismatch))
    try add(
        "transaction-data", [mdl],
        extra: [("transaction_data", "[\"eyJ0eXBlIjoieCIsImNyZWRlbnRpYWxfaWRzIjpbIm1kbCJdfQ\"]")],
        expected: refused(.unsupportedTransactionData))
    try add(
        "mdl-and-pid", [mdl, Q(id: "pid", docType: "eu.europa.ec.eudi.pid.1", claims: [C(e("age_over_18", pidNS))])],
        expected: ok(["mdl": both, "pid": ["\(pidNS)/age_over_18"]]))
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try write(Array(try encoder.encode(out)), "requests/openid4vp/manifest.json")
    return out.count
}

/// base64url without padding (the vector generator's own, for nonces).
enum Base64URLText {
    static func encode(_ b: [UInt8]) -> String {
        Data(b).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
