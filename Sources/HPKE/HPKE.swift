/// Hybrid Public Key Encryption (RFC 9180) over OpenSSL 3.0.
///
/// A caseless namespace: the suites, key schedule and contexts hang off it.
public enum HPKE {}
