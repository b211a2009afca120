#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import HPKE
import MdocCBOR
import Presentment
import WebEncoding

/// How the sealed response is framed.
public enum ResponseFormat: String, Sendable, Hashable, CaseIterable {
    /// Raw CBOR for a `data` object request (iOS), the Android envelope for the other framings.
    case automatic
    /// The CBOR `EncryptedResponse` (iOS `responseData`).
    case encryptedResponseCBOR
    /// `{"response": "<base64url>"}` (the DC API `data` object).
    case responseJSON
    /// `{"protocol":"org-iso-mdoc","data":{"response":"<base64url>"}}` (Android `DigitalCredential`).
    case androidEnvelope
}

extension AnnexCEngine {

    /// Length of the EncryptedResponse head: `["dcapi", {"enc": bstr, "cipherText":` and the
    /// cipherText's bstr head.
    static func encryptedHeadLength(enc: Int, cipherText: Int) -> Int {
        1 + 6 + 1 + 4 + CBORWriter.headLength(UInt64(enc)) + enc + 11 + CBORWriter.headLength(UInt64(cipherText))
    }

    /// Writes the EncryptedResponse CBOR to `out` — the head (`["dcapi", {"enc": enc, "cipherText":`
    /// and the bstr head), then `deviceResponse` sealed in place — which holds exactly
    /// `encryptedHeadLength + deviceResponse.count + Nt` bytes. Keys in bytewise order: "enc" < "cipherText".
    static func writeEncrypted(_ out: UnsafeMutableRawBufferPointer, deviceResponse: [UInt8], sender: inout HPKE.Sender)
        throws(PresentmentError)
    {
        let enc = sender.encapsulatedKey
        let ctLen = deviceResponse.count + HPKE.AEAD.aes128GCM.tagSize
        let p = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var n = 0
        func text(_ t: StaticString) {
            n += CBORWriter.writeText(UnsafeBufferPointer(start: t.utf8Start, count: t.utf8CodeUnitCount), at: p + n)
        }
        p[n] = 0x82
        n += 1
        text("dcapi")
        p[n] = 0xa2
        n += 1
        text("enc")
        n += CBORWriter.writeHead(major: 2, argument: UInt64(enc.count), at: p + n)
        enc.withUnsafeBufferPointer { (p + n).update(from: $0.baseAddress!, count: $0.count) }
        n += enc.count
        text("cipherText")
        n += CBORWriter.writeHead(major: 2, argument: UInt64(ctLen), at: p + n)
        let sealed: Bool = deviceResponse.withUnsafeBytes { pt in
            do {
                try sender.seal(pt, into: UnsafeMutableRawBufferPointer(rebasing: out[n...]))
                return true
            } catch { return false }
        }
        guard sealed else { throw PresentmentError(AnnexCRule.sealing) }
    }

    func seal(
        _ deviceResponse: [UInt8], encryptionInfo: EncryptionInfo, transcript: SessionTranscript,
        framing: RequestFraming,
        format: ResponseFormat
    ) throws(PresentmentError) -> Data {
        // The key was validated (on the curve) when EncryptionInfo was parsed; reuse it.
        // Its SEC1 form `04 ‖ x ‖ y` is the one the validated point already holds.
        let key = encryptionInfo.recipientPublicKey.publicKey
        let pkR = HPKE.PublicKey(key: key, kem: .p256HKDFSHA256, serialized: key.rawRepresentation)
        var f = format
        if f == .automatic { f = framing == .dataObject ? .encryptedResponseCBOR : .androidEnvelope }
        // EncryptedResponse = ["dcapi", {"enc": bstr(65), "cipherText": bstr(ct ‖ tag)}]. Every length
        // is known before sealing, so the response is written once into the buffer that becomes the
        // returned Data: the CBOR head, then HPKE seals in place (iOS framing); for the JSON framings
        // the CBOR goes to a scratch buffer and base64url writes straight into the output.
        var sender: HPKE.Sender
        do {
            if let source = configuration.ephemeralKeySource {
                sender = try HPKE.Sender(suite: .annexC, recipient: pkR, info: transcript.bytes, ephemeralKey: source())
            } else {
                sender = try HPKE.Sender(suite: .annexC, recipient: pkR, info: transcript.bytes)
            }
        } catch {
            throw PresentmentError(AnnexCRule.sealing)
        }
        let ctLen = deviceResponse.count + HPKE.AEAD.aes128GCM.tagSize
        let cborLen = Self.encryptedHeadLength(enc: sender.encapsulatedKey.count, cipherText: ctLen) + ctLen
        switch f {
        case .encryptedResponseCBOR, .automatic:
            let out = UnsafeMutableRawBufferPointer.allocate(byteCount: cborLen, alignment: 1)
            do { try Self.writeEncrypted(out, deviceResponse: deviceResponse, sender: &sender) } catch {
                out.deallocate()
                throw error
            }
            return Data(bytesNoCopy: out.baseAddress!, count: cborLen, deallocator: .custom { p, _ in p.deallocate() })
        case .responseJSON, .androidEnvelope:
            let prefix: StaticString =
                f == .responseJSON ? "{\"response\":\"" : "{\"protocol\":\"org-iso-mdoc\",\"data\":{\"response\":\""
            let suffix: StaticString = f == .responseJSON ? "\"}" : "\"}}"
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: cborLen, alignment: 1)
            defer { scratch.deallocate() }
            try Self.writeEncrypted(scratch, deviceResponse: deviceResponse, sender: &sender)
            let b64 = Base64URL.encodedLength(cborLen)
            let total = prefix.utf8CodeUnitCount + b64 + suffix.utf8CodeUnitCount
            let out = UnsafeMutableRawBufferPointer.allocate(byteCount: total, alignment: 1)
            let o = out.baseAddress!
            o.copyMemory(from: prefix.utf8Start, byteCount: prefix.utf8CodeUnitCount)
            Base64URL.encode(
                UnsafeRawBufferPointer(scratch),
                into: (o + prefix.utf8CodeUnitCount).assumingMemoryBound(to: UInt8.self))
            (o + prefix.utf8CodeUnitCount + b64).copyMemory(from: suffix.utf8Start, byteCount: suffix.utf8CodeUnitCount)
            return Data(bytesNoCopy: o, count: total, deallocator: .custom { p, _ in p.deallocate() })
        }
    }
}
