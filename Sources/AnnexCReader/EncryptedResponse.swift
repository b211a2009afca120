#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
import Presentment
import WebEncoding

/// `EncryptedResponse = ["dcapi", {"enc": bstr, "cipherText": bstr}]` (18013-7 Annex C §C.3): the
/// sealed DeviceResponse, and the JSON framings it travels in. The engine writes it in place
/// (`AnnexCEngine.seal`); verifiers read it back with `init(response:)`.
public struct EncryptedResponse: Sendable {
    /// The HPKE encapsulated key (`enc`: the 65-byte uncompressed ephemeral P-256 point).
    public let enc: [UInt8]
    /// The HPKE ciphertext of the DeviceResponse with its 16-byte tag.
    public let cipherText: [UInt8]

    /// Reads an EncryptedResponse from any response framing: raw CBOR (iOS), `{"response": …}` (a page),
    /// the Android envelope `{"protocol", "data": {"response": …}}`, and the pre-publication capital
    /// `Response`. Throws `responseInvalid`.
    public init(response: Data) throws(PresentmentError) {
        let encrypted = try Self.cbor(from: response)
        let er: CBORItem
        do { er = try CBORDocument(decoding: encrypted).root } catch {
            throw PresentmentError(VerifierRule.responseNotCBOR)
        }
        guard er.type == .array, er.count == 2, er[0]!.isText("dcapi"), let m = er[1], m.type == .map,
            let enc = m["enc"]?.byteStringValue, let ct = m["cipherText"]?.byteStringValue
        else {
            throw PresentmentError(VerifierRule.responseShape)
        }
        self.enc = enc
        self.cipherText = ct
    }

    /// The CBOR EncryptedResponse inside any of the response framings.
    static func cbor(from response: Data) throws(PresentmentError) -> [UInt8] {
        let bytes = Array(response)
        guard let first = bytes.first(where: { $0 != 0x20 && $0 != 0x0a && $0 != 0x0d && $0 != 0x09 }),
            first == UInt8(ascii: "{")
        else { return bytes }
        let json: JSONValue
        do {
            json = try JSONValue.parse(
                bytes, limits: .init(maxBytes: 64 << 20, maxDepth: 8, maxMembers: 16, maxStringBytes: 64 << 20))
        } catch {
            throw PresentmentError(VerifierRule.responseJSON)
        }
        let r = json["data"]?["response"] ?? json["response"] ?? json["data"]?["Response"] ?? json["Response"]
        guard let s = r?.string, let raw = Base64URL.decode(s) else {
            throw PresentmentError(VerifierRule.responseMember)
        }
        return raw
    }
}
