/// Hybrid Public Key Encryption (RFC 9180) over OpenSSL 3.0: every KEM, KDF, AEAD and mode of the RFC.
///
/// A caseless namespace. Typical use (the ISO 18013-7 Annex C suite):
/// ```swift
/// let suite = HPKE.Ciphersuite.annexC
/// let (enc, ct) = try HPKE.seal(suite: suite, recipient: readerKey, info: transcript, plaintext: response)
/// ```
/// Multi-message use goes through `HPKE.Sender` / `HPKE.Recipient`, which manage the sequence number.
public enum HPKE {
    /// The mode of operation (RFC 9180 §5).
    public enum Mode: UInt8, Sendable, Hashable, CaseIterable {
        /// `mode_base`.
        case base = 0x00
        /// `mode_psk`.
        case psk = 0x01
        /// `mode_auth`.
        case auth = 0x02
        /// `mode_auth_psk`.
        case authPSK = 0x03
    }

    /// The errors of this module: a small closed set that never carries OpenSSL's text.
    public enum Error: Swift.Error, Hashable, Sendable {
        /// A public key is of the wrong length, compressed, off the curve, or the point at infinity.
        case invalidPublicKey
        /// A private key is of the wrong length or out of range.
        case invalidPrivateKey
        /// The encapsulated key `enc` is not a valid public key for the KEM.
        case invalidEncapsulatedKey
        /// PSK inputs break RFC 9180 §5.1: psk and psk_id must be both present (psk modes) or both absent.
        case invalidPSKInputs
        /// A key does not belong to the suite's KEM.
        case kemMismatch
        /// Opening failed. Every failure of `open` — wrong key, tampered ciphertext, tag, enc, info
        /// or aad — is this one error.
        case openFailed
        /// The sequence number is exhausted; the context can seal or open no more messages.
        case messageLimitReached
        /// The suite's AEAD is export-only: seal and open are not available.
        case exportOnly
        /// A requested length (export or derived key) is out of range.
        case invalidLength
        /// DeriveKeyPair found no valid scalar (practically impossible).
        case deriveKeyPairFailed
    }
}
