import DigitalCredentials
import Foundation
import WebEncoding
import Testing
import TestSupport
import TestWorld
@_spi(Testing) @testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import HPKE
import MdocCBOR

@Suite("Annex C: captured and published vectors")
struct CaptureVectorTests {
    static func string(_ path: String) throws -> String {
        String(decoding: try SharedVectors.data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func emptyEngine(at date: String) throws -> DigitalCredentialsEngine {
        let ctx = try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:]))
        let clock = MdocDate.parseDateTime(date)!
        return TestWorld.engine(ctx, protocols: [.annexC]) { $0.clock = { clock } }
    }

    @Test(
        "shc-real-chrome-android: transcript, DeviceAuthenticationBytes, readerAuth, and our reader side opens the real response",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func chromeAndroid() throws {
        let expected = try SharedVectors.json("annexc/shc-real-chrome-android/expected.json") as! [String: Any]
        let origin = try Self.string("annexc/shc-real-chrome-android/origin.txt")
        let raw = try SharedVectors.data("annexc/shc-real-chrome-android/navigator-credentials-get.arg.json")
        let engine = try Self.emptyEngine(at: "2026-05-15T00:00:00Z")
        let request = try engine.parse(rawRequest: raw, origin: origin)
        #expect(request.details.annexC?.framing == .digitalRequestList)
        #expect(request.origin.serialized == "http://127.0.0.1:3010")
        let dcapiInfo = engine.explain(rawRequest: raw, origin: origin).trace.structures.first {
            $0.name == "dcapiInfo"
        }
        #expect(dcapiInfo.map { Hex.encode($0.bytes) } == expected["dcapiInfo_cbor_hex"] as? String)
        #expect(
            Hex.encode(request.details.annexC!.sessionTranscript.dcapiInfoHash) == expected["dcapiInfo_sha256_hex"]
                as! String)
        #expect(Hex.encode(request.sessionTranscriptBytes) == expected["sessionTranscript_cbor_hex"] as! String)
        #expect(
            Hex.encode(request.sessionTranscriptBytes)
                == (try Self.string("annexc/shc-real-chrome-android/session-transcript.cbor.hex")))
        // Its readerAuth verified (the engine would have refused otherwise); no anchors → not anchored.
        guard case .signedNotTrusted(_, .noTrustAnchors) = request.readerVerdict else {
            Issue.record("expected a verified, unanchored reader")
            return
        }
        #expect(request.signatures.count == 1)
        #expect(engine.explain(rawRequest: raw, origin: origin).trace.signatures.count == 1)
        // The Credential Manager form of the same request gives the same transcript.
        let cm = try SharedVectors.data("annexc/shc-real-chrome-android/credential-manager-request.json")
        let viaCM = try engine.parse(rawRequest: cm, origin: origin)
        #expect(viaCM.details.annexC?.framing == .requestList)
        #expect(viaCM.details.annexC?.sessionTranscript == request.details.annexC?.sessionTranscript)
        // A different origin breaks readerAuth.
        expectRefusal(AnnexCRule.signatureInvalid, at: "docRequests[0].readerAuth") {
            try engine.parse(rawRequest: raw, origin: "http://127.0.0.1:3011")
        }

        // Reader side: open the wallet's real response with the published (test) recipient key.
        let jwk = try SharedVectors.json("annexc/shc-real-chrome-android/recipient-private.jwk.json") as! [String: Any]
        let key = try HPKE.PrivateKey(serialized: Base64URL.decode(jwk["d"] as! String)!, kem: .p256HKDFSHA256)
        let response = try SharedVectors.data("annexc/shc-real-chrome-android/wallet-response.digital-credential.json")
        let plaintext = try AnnexCReader.decrypt(
            response, recipientKey: key, encryptionInfo: expected["encryptionInfo_b64u_as_received"] as! String,
            origin: request.origin)
        #expect(plaintext == Array(try SharedVectors.data("annexc/shc-real-chrome-android/device-response.cbor")))
        #expect(Hex.encode(MdocDigest.sha256(plaintext)) == expected["deviceResponse_cbor_sha256"] as! String)
        // Our DeviceAuthenticationBytes for its document equal the capture's, and its device signature verifies.
        let dr = try DeviceResponse(encoded: plaintext)
        let doc = dr.documents[0]
        let dab = MdocAuthentication.deviceAuthenticationBytes(
            sessionTranscript: request.sessionTranscriptBytes, docType: doc.docType,
            deviceNameSpacesBytes: doc.deviceSigned.nameSpacesBytes)
        #expect(Hex.encode(dab) == expected["deviceAuthenticationBytes_hex"] as! String)
        #expect(Hex.encode(dab) == (try Self.string("annexc/shc-real-chrome-android/device-authentication.cbor.hex")))
        guard case .signature(let sig) = doc.deviceSigned.deviceAuth else {
            Issue.record("expected a device signature")
            return
        }
        let mso = try doc.issuerSigned.mobileSecurityObject()
        try sig.verify(key: mso.deviceKey)  // this wallet attached the payload
        #expect(sig.payload.map(Array.init) == dab)
        try doc.issuerSigned.checkValueDigests(against: mso)
        // A wrong origin cannot open it.
        expectRefusal(VerifierRule.hpkeOpen) {
            try AnnexCReader.decrypt(
                response, recipientKey: key, encryptionInfo: expected["encryptionInfo_b64u_as_received"] as! String,
                origin: try Origin("http://127.0.0.1:3011"))
        }
    }

    @Test(
        "multipaz-verifier-capture: readerAuth with alg -9 and a 2-certificate x5chain verifies with the exact origin, not with a trailing slash path",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func multipazVerifier() throws {
        let v = try SharedVectors.json("annexc/multipaz-verifier-capture/vector.json") as! [String: Any]
        let data = try JSONSerialization.data(withJSONObject: v["navigator_credentials_get_data"]!)
        let engine = try Self.emptyEngine(at: "2025-12-15T00:00:00Z")
        let request = try engine.parse(rawRequest: data, origin: v["origin"] as! String)
        #expect(request.details.annexC?.framing == .dataObject)
        #expect(Hex.encode(request.sessionTranscriptBytes) == v["sessionTranscript_cbor_hex"] as! String)
        let trace = engine.explain(rawRequest: data, origin: v["origin"] as! String).trace
        #expect(trace.signatures.first?.algorithm == COSEAlgorithm.esp256.name)
        #expect(trace.signatures.first?.signature.certificateSubjects.count == 2)
        // "https://verifier.multipaz.org/" normalizes to the same origin (a bare "/" path is allowed);
        // the raw string with the slash in the transcript would not verify:
        let slashed = AnnexCSessionTranscript(
            encryptionInfo: (v["navigator_credentials_get_data"] as! [String: String])["encryptionInfo"]!,
            origin: try Origin("https://verifier.multipaz.org/"))
        #expect(slashed == request.details.annexC?.sessionTranscript)
        var w = CBORWriter()
        w.writeArrayHeader(count: 2)
        w.writeText((v["navigator_credentials_get_data"] as! [String: String])["encryptionInfo"]!)
        w.writeText("https://verifier.multipaz.org/")
        let badST = CBORValue.array([.null, .null, .array([.text("dcapi"), .bytes(MdocDigest.sha256(w.bytes))])])
            .encoded()
        let dr = request.details.annexC!.deviceRequest.docRequests[0]
        let rab = MdocAuthentication.readerAuthenticationBytes(
            sessionTranscript: badST, itemsRequestBytes: dr.itemsRequestBytes)
        let leaf = try Certificate(der: try dr.readerAuth!.headers.x5chain()[0])
        #expect(throws: COSEError.verificationFailed) {
            try dr.readerAuth!.verify(key: try leaf.publicKey(), detachedPayload: rab)
        }
        // And the engine refuses a different origin.
        expectRefusal(AnnexCRule.signatureInvalid, at: "docRequests[0].readerAuth") {
            try engine.parse(rawRequest: data, origin: "https://verifier.multipaz.org.evil")
        }
    }

    @Test(
        "waltid-deterministic: transcript hash and HPKE open of the published response",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func waltID() throws {
        let v = try SharedVectors.json("annexc/waltid-deterministic/ANNEXC-DETERMINISTIC-001.json") as! [String: Any]
        let exp = v["expected"] as! [String: String]
        let origin = try Origin(v["origin"] as! String)
        let st = AnnexCSessionTranscript(encryptionInfo: v["encryptionInfoB64"] as! String, origin: origin)
        #expect(Hex.encode(MdocDigest.sha256(st.bytes)) == exp["sessionTranscriptCborSha256Hex"])
        let key = try HPKE.PrivateKey(serialized: h(v["recipientPrivateKeyHex"] as! String), kem: .p256HKDFSHA256)
        let pt = try AnnexCReader.decrypt(
            Data(Base64URL.decode(v["encryptedResponseB64"] as! String)!), recipientKey: key,
            encryptionInfo: v["encryptionInfoB64"] as! String, origin: origin)
        #expect(Hex.encode(MdocDigest.sha256(pt)) == exp["deviceResponseCborSha256Hex"])
        // The data object parses through the engine (no reader auth).
        let raw = Data(
            "{\"deviceRequest\":\"\(v["deviceRequestB64"] as! String)\",\"encryptionInfo\":\"\(v["encryptionInfoB64"] as! String)\"}"
                .utf8)
        let req = try Self.emptyEngine(at: "2026-01-01T00:00:00Z").parse(
            rawRequest: raw, origin: v["origin"] as! String)
        #expect(req.documents.first?.docType == exp["docType"])
        #expect(req.documents.first?.elements.first?.id.identifier == exp["requestedElement"])
        #expect(req.readerVerdict == .notAuthenticated)
    }

    @Test(
        "derived-deterministic-seal: the engine's sealing produces the byte-exact EncryptedResponse and {response} JSON",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func deterministicSeal() throws {
        let v = try SharedVectors.json("annexc/derived-deterministic-seal/vector.json") as! [String: Any]
        let inputs = v["inputs"] as! [String: String]
        let outputs = v["outputs"] as! [String: String]
        let skE = try HPKE.PrivateKey(
            serialized: h(inputs["ephemeral_skE_hex (RFC 9180 A.3.1 skEm reused)"]!), kem: .p256HKDFSHA256)
        let ctx = try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:]))
        let clock = MdocDate.parseDateTime("2026-05-15T00:00:00Z")!
        let engine = TestWorld.engine(ctx, protocols: [.annexC]) { $0.clock = { clock } }
        var settings = AnnexCSettings()
        settings.ephemeralKeySource = { skE }
        let frontEnd = AnnexCFrontEnd(settings: settings)
        let raw = try SharedVectors.data("annexc/shc-real-chrome-android/navigator-credentials-get.arg.json")
        let request = try engine.parse(rawRequest: raw, origin: inputs["origin"]!)
        let details = try #require(request.details.annexC)
        #expect(Hex.encode(request.sessionTranscriptBytes) == inputs["sessionTranscript_cbor_hex"])
        let plaintext = h(inputs["plaintext_DeviceResponse_cbor_hex"]!)
        // The plaintext whole, and in pieces the way the builder leaves large items (pieces referred to at
        // the start, in the middle and at the end): both seal to the published bytes.
        let n = plaintext.count
        let (b, c, d) = (n / 2 - 2, n / 2 + 3, n - 5)
        let pieced = DeviceResponseBytes(
            own: Array(plaintext[3..<b] + plaintext[c..<d]),
            references: [
                .init(at: 0, source: plaintext, range: 0..<3), .init(at: b - 3, source: plaintext, range: b..<c),
                .init(at: d - c + b - 3, source: plaintext, range: d..<n),
            ])
        #expect(pieced.count == n && pieced.contiguous == plaintext)
        for pt in [DeviceResponseBytes(plaintext), pieced] {
            let cbor = try frontEnd.seal(pt, details: details, format: .binary)
            #expect(Hex.encode(cbor) == outputs["EncryptedResponse_cbor_hex"])
            let json = try frontEnd.seal(pt, details: details, format: .dataObject)
            #expect(String(decoding: json, as: UTF8.self) == outputs["data_json"])
            let android = try frontEnd.seal(pt, details: details, format: .protocolAndData)
            #expect(
                String(decoding: android, as: UTF8.self)
                    == "{\"protocol\":\"org-iso-mdoc\",\"data\":\(outputs["data_json"]!)}")
            #expect(try frontEnd.seal(pt, details: details, format: .automatic) == android)
        }
        // (A list-framed request gets the Android envelope.)
    }

    @Test(
        "apple-docs-sample and eu-av-spec: 1.1 request with readerAuthAll and useCases, and a 1.0 AV request, parse",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func shapes() throws {
        let apple =
            try SharedVectors.json("annexc/apple-docs-sample/navigator-credentials-get.arg.json") as! [String: Any]
        let entry = ((apple["digital"] as! [String: Any])["requests"] as! [[String: Any]])[0]
        let data = entry["data"] as! [String: String]
        let dr = try DeviceRequest(encoded: Base64URL.decode(data["deviceRequest"]!)!)
        #expect(dr.version == "1.1" && dr.isVersion11OrLater)
        #expect(dr.readerAuthAll.count == 1)
        #expect(try dr.readerAuthAll[0].headers.x5chain().count == 1)  // x5chain as a single bstr
        let info = try #require(dr.deviceRequestInfo)
        #expect(info.useCases.count == 1 && info.useCases[0].mandatory && info.useCases[0].documentSets == [[0]])
        #expect(dr.docRequests[0].itemsRequest.docType == "org.iso.18013.5.1.mDL")
        let ei = try Array(data["encryptionInfo"]!.utf8).withUnsafeBytes { try EncryptionInfo(base64url: $0) }
        #expect(ei.nonce.count == 32)
        // Without the signing origin the engine cannot verify readerAuthAll: it refuses.
        let rawApple = try SharedVectors.data("annexc/apple-docs-sample/navigator-credentials-get.arg.json")
        expectRefusal(AnnexCRule.signatureInvalid, at: "readerAuthAll[0]") {
            try Self.emptyEngine(at: "2026-01-01T00:00:00Z").parse(rawRequest: rawApple, origin: "https://example.com")
        }

        let av = try SharedVectors.data("annexc/eu-av-spec/dc-api-request.json")
        let req = try Self.emptyEngine(at: "2026-01-01T00:00:00Z").parse(rawRequest: av, origin: "https://av.example")
        #expect(req.details.annexC?.framing == .requestList)
        #expect(req.documents[0].docType == "eu.europa.ec.av.1")
        #expect(req.documents[0].elements.map(\.id.identifier) == ["age_over_18"])
        #expect(req.details.annexC!.encryptionInfo.nonce.count == 16)
    }
}
