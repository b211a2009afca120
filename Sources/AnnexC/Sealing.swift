#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import DCAPIFraming
import HPKE
import MdocCBOR
@_spi(FrontEnd) import Presentment
import WebEncoding

/// Sealing (ISO/IEC 18013-7 Annex C §C.3): `EncryptedResponse = ["dcapi", {"enc": bstr, "cipherText":
/// bstr}]`, HPKE base mode (DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM) to the reader's
/// recipient key with the SessionTranscript as `info` and an empty `aad`, written once into the buffer
/// that is returned.
extension AnnexCFrontEnd {

    /// Length of the EncryptedResponse head: `["dcapi", {"enc": bstr, "cipherText":` and the
    /// cipherText's bstr head.
    static func encryptedHeadLength(enc: Int, cipherText: Int) -> Int {
        func text(_ t: StaticString) -> Int { CBORWriter.headLength(UInt64(t.utf8CodeUnitCount)) + t.utf8CodeUnitCount }
        return CBORWriter.headLength(2) + text("dcapi") + CBORWriter.headLength(2) + text("enc")
            + CBORWriter.headLength(UInt64(enc)) + enc + text("cipherText") + CBORWriter.headLength(UInt64(cipherText))
    }

    /// Writes the EncryptedResponse CBOR to `out` — the head (`["dcapi", {"enc": enc, "cipherText":`
    /// and the bstr head), then `deviceResponse` sealed in place, its pieces fed to the cipher in order —
    /// which holds exactly `encryptedHeadLength + deviceResponse.count + Nt` bytes. Keys in bytewise
    /// order: "enc" < "cipherText".
    static func writeEncrypted(
        // unsafe: the response buffer written once, in place (ResponseEnvelope allocates it at its exact size).
        _ out: UnsafeMutableRawBufferPointer, deviceResponse: DeviceResponseBytes, sender: inout HPKE.Sender
    ) throws(PresentmentError) {
        let enc = sender.encapsulatedKey
        let ctLen = deviceResponse.count + HPKE.AEAD.aes128GCM.tagSize
        let p = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var n = 0
        func text(_ t: StaticString) {
            // unsafe: a literal's bytes, written by the writer's in-place text function.
            n += CBORWriter.writeText(UnsafeBufferPointer(start: t.utf8Start, count: t.utf8CodeUnitCount), at: p + n)
        }
        n += CBORWriter.writeHead(major: 4, argument: 2, at: p + n)  // ["dcapi", {...}]
        text("dcapi")
        n += CBORWriter.writeHead(major: 5, argument: 2, at: p + n)  // {"enc": ..., "cipherText": ...}
        text("enc")
        n += CBORWriter.writeHead(major: 2, argument: UInt64(enc.count), at: p + n)
        // unsafe: the encapsulated key copied into its place in the buffer.
        enc.withUnsafeBufferPointer { (p + n).update(from: $0.baseAddress!, count: $0.count) }
        n += enc.count
        text("cipherText")
        n += CBORWriter.writeHead(major: 2, argument: UInt64(ctLen), at: p + n)
        do {
            try sender.seal(
                // unsafe: HPKE seals straight into the buffer after the head.
                count: deviceResponse.count, into: UnsafeMutableRawBufferPointer(rebasing: out[n...]),
                pieces: { deviceResponse.forEachPiece($0) })
        } catch { throw PresentmentError(AnnexCRule.sealing) }
    }

    /// The sealed DeviceResponse in `format`: `.binary` the CBOR EncryptedResponse, `.dataObject`
    /// `{"response": "<base64url>"}`, `.protocolAndData` the Android envelope; `.automatic` follows the
    /// request's framing (binary for a bare data object, the envelope otherwise).
    func seal(_ deviceResponse: DeviceResponseBytes, details: AnnexCDetails, format: ResponseFormat)
        throws(PresentmentError)
        -> Data
    {
        let encryptionInfo = details.encryptionInfo
        let transcript = details.sessionTranscript
        // The key was validated (on the curve) when EncryptionInfo was parsed; reuse it.
        // Its SEC1 form `04 ‖ x ‖ y` is the one the validated point already holds.
        let key = encryptionInfo.recipientPublicKey.publicKey
        let pkR = HPKE.PublicKey(key: key, kem: .p256HKDFSHA256, serialized: key.rawRepresentation)
        var f = format
        if f == .automatic { f = details.framing == .dataObject ? .binary : .protocolAndData }
        // EncryptedResponse = ["dcapi", {"enc": bstr(65), "cipherText": bstr(ct ‖ tag)}]. Every length
        // is known before sealing, so the response is written once into the buffer that becomes the
        // returned Data: the CBOR head, then HPKE seals in place (iOS framing); for the JSON framings
        // the CBOR goes to a scratch buffer and base64url writes straight into the output.
        var sender: HPKE.Sender
        do {
            if let source = settings.ephemeralKeySource {
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
        case .binary, .automatic:
            return try ResponseEnvelope.response(protocolIdentifier: nil, bodyLength: cborLen) {
                out throws(PresentmentError) in
                try Self.writeEncrypted(out, deviceResponse: deviceResponse, sender: &sender)
            }
        case .dataObject, .protocolAndData:
            // unsafe: one scratch buffer for the CBOR before base64url writes it into the response; freed on every path.
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: cborLen, alignment: 1)
            defer { scratch.deallocate() }
            try Self.writeEncrypted(scratch, deviceResponse: deviceResponse, sender: &sender)
            return ResponseEnvelope.responseString(
                protocolIdentifier: f == .protocolAndData ? Self.protocolIdentifier : nil,
                textLength: Base64URL.encodedLength(cborLen)
            ) { text in
                Base64URL.encode(
                    // unsafe: base64url encodes the scratch buffer into the response text in place.
                    UnsafeRawBufferPointer(scratch), into: text.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
    }
}
