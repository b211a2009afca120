import Foundation
import Testing
import TestSupport
@testable import MdocCBOR
@testable import CryptoCore

/// ISO/IEC 18013-5 Annex D worked example (`../shared/vectors/iso18013-5/`).
@Suite("ISO 18013-5 Annex D")
struct AnnexDTests {
    static let clock = MdocDate.parseDateTime("2021-01-01T00:00:00Z")!
    static func v(_ name: String) throws -> [UInt8] { try SharedVectors.hexFile("iso18013-5/\(name).hex") }

    /// SessionTranscript (the embedded item of SessionTranscriptBytes).
    static func sessionTranscript() throws -> (bytes: [UInt8], transcript: ArraySlice<UInt8>) {
        let stb = try v("session_transcript_bytes")
        let doc = try CBORDocument(decoding: stb)
        return (stb, doc.root.embeddedBytes!)
    }

    @Test(
        "DeviceRequest parses; readerAuth verifies over rebuilt ReaderAuthenticationBytes; reader chain validates",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func deviceRequest() throws {
        let req = try DeviceRequest(encoded: try Self.v("device_request"))
        #expect(req.version == "1.0")
        #expect(req.docRequests.count == 1)
        let dr = req.docRequests[0]
        #expect(dr.itemsRequest.docType == "org.iso.18013.5.1.mDL")
        let embedded = try CBORDocument(decoding: Array(dr.itemsRequestBytes)).root.embeddedBytes!
        #expect(Array(embedded) == (try Self.v("items_request")))
        let ns = dr.itemsRequest.nameSpaces
        #expect(ns.count == 1 && ns[0].name == "org.iso.18013.5.1")
        #expect(
            ns[0].elements.map(\.identifier) == [
                "family_name", "document_number", "driving_privileges", "issue_date", "expiry_date", "portrait",
            ])
        #expect(ns[0].elements.map(\.intentToRetain) == [true, true, true, true, true, false])

        let readerAuth = try #require(dr.readerAuth)
        #expect(Array(readerAuth.item.encodedBytes) == (try Self.v("reader_auth")))
        #expect(readerAuth.payload == nil)
        let (_, transcript) = try Self.sessionTranscript()
        let rab = MdocAuthentication.readerAuthenticationBytes(
            sessionTranscript: transcript, itemsRequestBytes: dr.itemsRequestBytes)
        #expect(rab == (try Self.v("reader_authentication_bytes")))

        let chain = try readerAuth.headers.x5chain()
        let readerDER = try Self.v("reader_cert.der")
        #expect(chain.count == 1 && chain[0] == readerDER)
        let readerCert = try Certificate(der: chain[0])
        try readerAuth.verify(key: try readerCert.publicKey(), detachedPayload: rab)
        // Tampering with the payload breaks it.
        var bad = rab
        bad[bad.count - 1] ^= 1
        #expect(throws: COSEError.verificationFailed) {
            try readerAuth.verify(key: try readerCert.publicKey(), detachedPayload: bad)
        }

        let root = try Certificate(der: try Self.v("reader_root_cert.der"))
        #expect(readerCert.hasExtendedKeyUsage(MdocKeyUsage.readerAuthentication))
        #expect(!readerCert.hasExtendedKeyUsage(MdocKeyUsage.documentSigner))
        #expect(readerCert.authorityKeyIdentifier == root.subjectKeyIdentifier)
        #expect(readerCert.subject.contains("CN=reader"))
        try Certificate.validatePath(leaf: readerCert, anchors: [root], at: Self.clock)
        // Expired at a later clock; wrong anchor fails.
        #expect(throws: COSEError.self) {
            try Certificate.validatePath(
                leaf: readerCert, anchors: [root], at: MdocDate.parseDateTime("2025-01-01T00:00:00Z")!)
        }
        let iaca = try Certificate(der: try Self.v("iaca_cert.der"))
        #expect(throws: COSEError.self) {
            try Certificate.validatePath(leaf: readerCert, anchors: [iaca], at: Self.clock)
        }
    }

    @Test(
        "DeviceResponse parses; issuerAuth verifies with the DS certificate; all 6 value digests match; DS chain validates",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func deviceResponseIssuerSide() throws {
        let resp = try DeviceResponse(encoded: try Self.v("device_response"))
        #expect(resp.version == "1.0" && resp.status == 0 && resp.documents.count == 1)
        let doc = resp.documents[0]
        #expect(doc.docType == "org.iso.18013.5.1.mDL")
        let issuerSigned = doc.issuerSigned
        #expect(Array(issuerSigned.issuerAuth.item.encodedBytes) == (try Self.v("issuer_auth")))

        let x5 = try issuerSigned.issuerAuth.headers.x5chain()
        #expect(x5 == [try Self.v("ds_cert.der")])
        let ds = try Certificate(der: x5[0])
        try issuerSigned.issuerAuth.verify(key: try ds.publicKey())
        #expect(ds.hasExtendedKeyUsage(MdocKeyUsage.documentSigner))

        let mso = try issuerSigned.mobileSecurityObject()
        #expect(mso.version == "1.0")
        #expect(mso.digestAlgorithm == "SHA-256")
        #expect(mso.docType == "org.iso.18013.5.1.mDL")
        #expect(MdocDate.formatDateTime(mso.validityInfo.signed) == "2020-10-01T13:30:02Z")
        #expect(MdocDate.formatDateTime(mso.validityInfo.validFrom) == "2020-10-01T13:30:02Z")
        #expect(MdocDate.formatDateTime(mso.validityInfo.validUntil) == "2021-10-01T13:30:02Z")
        #expect(mso.validityInfo.contains(Self.clock))
        #expect(mso.deviceKey.x == (try Self.v("static_device_key_x")))
        #expect(mso.deviceKey.y == (try Self.v("static_device_key_y")))

        let items = issuerSigned.nameSpaces.flatMap(\.items)
        #expect(items.count == 6)
        try issuerSigned.checkValueDigests(against: mso)
        var checked = 0
        for ns in issuerSigned.nameSpaces {
            for item in ns.items {
                let expected = try #require(mso.valueDigest(nameSpace: ns.name, digestID: item.digestID))
                #expect(DigestAlgorithm.sha256.hash(item.bytes).elementsEqual(expected))
                // Digests are over the tag-24-wrapped bytes, not over the embedded item.
                #expect(item.bytes.prefix(2).elementsEqual([0xd8, 0x18]))
                checked += 1
            }
        }
        #expect(checked == 6)
        let portrait = try #require(items.first { $0.elementIdentifier == "portrait" })
        #expect(portrait.elementValue.byteStringValue == (try Self.v("portrait_jpeg")))

        let iaca = try Certificate(der: try Self.v("iaca_cert.der"))
        #expect(ds.authorityKeyIdentifier == iaca.subjectKeyIdentifier)
        #expect(ds.isSigned(by: iaca))
        try Certificate.validatePath(leaf: ds, anchors: [iaca], at: Self.clock)
        print("Annex D: issuerAuth verified, \(checked) value digests matched, DS and reader chains validated")
    }

    @Test(
        "deviceMac verifies with EMacKey derived by ECDH + HKDF; DeviceAuthenticationBytes rebuilt byte for byte",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func deviceMac() throws {
        let resp = try DeviceResponse(encoded: try Self.v("device_response"))
        let doc = resp.documents[0]
        #expect(Array(doc.deviceSigned.nameSpacesBytes) == MdocAuthentication.emptyDeviceNameSpacesBytes)
        let (stb, transcript) = try Self.sessionTranscript()

        // EMacKey = HKDF-SHA256(ECDH(static device d, EReaderKey), salt = SHA-256(SessionTranscriptBytes), "EMacKey", 32).
        let deviceKey = try PrivateKey(curve: .p256, scalar: try Self.v("static_device_key_d"))
        let readerPub = try PublicKey(
            curve: .p256, x: try Self.v("ephemeral_reader_key_x"), y: try Self.v("ephemeral_reader_key_y"))
        let z = try deviceKey.sharedSecret(with: readerPub)
        let emacKey = try DigestAlgorithm.sha256.hkdf(
            salt: DigestAlgorithm.sha256.hash(stb), ikm: z, info: Array("EMacKey".utf8), length: 32)
        #expect(emacKey == (try Self.v("derived_emac_key")))
        // Z_AB and the session keys, as further known answers for the wrapper.
        let readerPriv = try PrivateKey(curve: .p256, scalar: try Self.v("ephemeral_reader_key_d"))
        let devicePub = try PublicKey(
            curve: .p256, x: try Self.v("ephemeral_device_key_x"), y: try Self.v("ephemeral_device_key_y"))
        let zab = try readerPriv.sharedSecret(with: devicePub)
        #expect(zab == (try Self.v("derived_zab_shared_secret")))
        let salt = DigestAlgorithm.sha256.hash(stb)
        #expect(
            try DigestAlgorithm.sha256.hkdf(salt: salt, ikm: zab, info: Array("SKReader".utf8), length: 32)
                == (try Self.v("derived_sk_reader")))
        #expect(
            try DigestAlgorithm.sha256.hkdf(salt: salt, ikm: zab, info: Array("SKDevice".utf8), length: 32)
                == (try Self.v("derived_sk_device")))
        // The private scalars reproduce the published public points.
        #expect(deviceKey.publicKey.coordinates!.x == (try Self.v("static_device_key_x")))

        let dab = MdocAuthentication.deviceAuthenticationBytes(
            sessionTranscript: transcript, docType: doc.docType, deviceNameSpacesBytes: doc.deviceSigned.nameSpacesBytes
        )
        #expect(dab == (try Self.v("device_authentication_bytes")))
        guard case .mac(let mac) = doc.deviceSigned.deviceAuth else {
            Issue.record("expected deviceMac")
            return
        }
        try mac.verify(key: emacKey, detachedPayload: dab)
        #expect(throws: COSEError.verificationFailed) {
            try mac.verify(key: try Self.v("derived_sk_device"), detachedPayload: dab)
        }
    }

    @Test(
        "SessionData decrypts with AES-256-GCM under SKDevice to exactly the DeviceResponse",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func sessionEncryption() throws {
        let sd = try CBORDocument(decoding: try Self.v("session_data"))
        let ct = try #require(sd.root["data"]?.byteStringValue)
        let pt = try AEADAlgorithm.aes256gcm.open(
            key: try Self.v("derived_sk_device"), nonce: h("00000000 00000001 00000001"), ciphertext: ct, aad: [UInt8]()
        )
        #expect(pt == (try Self.v("device_response")))
        var tampered = ct
        tampered[0] ^= 1
        #expect(throws: CryptoError.authenticationFailed) {
            try AEADAlgorithm.aes256gcm.open(
                key: try Self.v("derived_sk_device"), nonce: h("00000000 00000001 00000001"), ciphertext: tampered,
                aad: [UInt8]())
        }
    }

    @Test(
        "Diagnostic notation of the DeviceRequest expands tag-24 contents",
        .enabled(if: SharedVectors.runnable, SharedVectors.skipNote))
    func diagnostics() throws {
        let doc = try CBORDocument(decoding: try Self.v("device_request"))
        let flat = CBORDiagnostic.describe(doc.root)
        #expect(flat.hasPrefix("{\"version\": \"1.0\", \"docRequests\": [{\"itemsRequest\": 24(h'"))
        let expanded = CBORDiagnostic.describe(doc.root, options: .init(expandEmbedded: true))
        #expect(expanded.contains("24(<< {\"docType\": \"org.iso.18013.5.1.mDL\""))
        #expect(expanded.contains("\"portrait\": false"))
    }
}
