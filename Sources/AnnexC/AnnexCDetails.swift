import DCAPIFraming
import MdocCBOR
import Presentment

/// What an Annex C request (`org-iso-mdoc`) carried: the framing it came in, the session transcript it
/// binds, the reader's encryption parameters and the DeviceRequest. Holds no element values or keys.
/// Immutable; a class, so a parsed request is handed around by one reference.
public final class AnnexCDetails: Sendable {
    /// How the request was framed (the default response framing follows it).
    public let framing: RequestFraming
    /// The SessionTranscript (`dcapi` handover over the encryptionInfo as received and the origin).
    package let sessionTranscript: AnnexCSessionTranscript
    /// The reader's nonce and HPKE recipient key (validated on P-256).
    package let encryptionInfo: EncryptionInfo
    /// The DeviceRequest, its ItemsRequestBytes and reader signatures kept exact.
    package let deviceRequest: DeviceRequest

    init(
        framing: RequestFraming, sessionTranscript: AnnexCSessionTranscript, encryptionInfo: EncryptionInfo,
        deviceRequest: DeviceRequest
    ) {
        self.framing = framing
        self.sessionTranscript = sessionTranscript
        self.encryptionInfo = encryptionInfo
        self.deviceRequest = deviceRequest
    }
}
