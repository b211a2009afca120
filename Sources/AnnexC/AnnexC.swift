/// The ISO/IEC 18013-7 Annex C (`org-iso-mdoc`) response engine: request parsing, session
/// transcript, credential selection, DeviceResponse building and HPKE sealing.
public enum AnnexC {
    /// The Digital Credentials API protocol identifier this engine answers.
    public static let protocolIdentifier = "org-iso-mdoc"
}
