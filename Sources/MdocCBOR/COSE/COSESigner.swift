package import CryptoCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Something that signs COSE messages: it knows its algorithm and public key and signs a message
/// (the whole Sig_structure). Implement it to keep keys outside the process (HSM, KMS, secure
/// element); `SoftwareSigner` is the in-process OpenSSL implementation.
public protocol COSESigner: Sendable {
    /// The COSE algorithm written into the protected header.
    var algorithm: COSEAlgorithm { get }
    /// The public key matching the signatures.
    var publicKey: COSEKey { get }
    /// Signs `message`; for ECDSA the result is raw `r ‖ s` of the curve's size.
    func sign(_ message: [UInt8]) throws(COSEError) -> [UInt8]
}

/// An in-process signer over an OpenSSL private key (P-256/P-384/P-521 ECDSA or Ed25519).
public struct SoftwareSigner: COSESigner {
    let key: PrivateKey
    /// The private key, for the JOSE layer (request signing in tests and the reader library).
    package var privateKey: PrivateKey { key }
    /// The algorithm; defaults to ES256/ES384/ES512 by curve (ISO 18013-5 uses non-fully-specified ids).
    public let algorithm: COSEAlgorithm
    /// The public half of the signing key, as a verifier needs it (e.g. the MSO's deviceKey).
    public let publicKey: COSEKey

    /// Loads a PKCS#8 (or SEC1) private key from DER bytes or PEM text.
    /// - Parameters:
    ///   - bytes: the key, DER or PEM.
    ///   - algorithm: override the default algorithm (e.g. `.esp256`); must match the curve.
    public init(encodedPrivateKey bytes: [UInt8], algorithm: COSEAlgorithm? = nil) throws(COSEError) {
        try self.init(encodedPrivateKey: bytes, algorithm: algorithm, publicPointChecked: false)
    }

    /// Loads a private key whose bytes the caller's record says were loaded before with their
    /// embedded public point checked against the scalar (`PrivateKey(encoded:publicPointChecked:)`).
    package init(encodedPrivateKey bytes: [UInt8], algorithm: COSEAlgorithm? = nil, publicPointChecked: Bool)
        throws(COSEError)
    {
        let k: PrivateKey
        do { k = try PrivateKey(encoded: bytes, publicPointChecked: publicPointChecked) } catch {
            throw .invalidKey("unreadable private key")
        }
        try self.init(key: k, algorithm: algorithm)
    }

    /// Generates a fresh key on `curve` (P-256, P-384, P-521 or Ed25519).
    public static func generate(curve: COSEKey.Curve = .p256, algorithm: COSEAlgorithm? = nil) throws(COSEError)
        -> SoftwareSigner
    {
        guard curve.keyType == .ec2 || curve == .ed25519 else { throw .unsupportedAlgorithm }
        let k: PrivateKey
        do { k = try PrivateKey.generate(curve.cryptoKind) } catch { throw .signingFailed }
        return try SoftwareSigner(key: k, algorithm: algorithm)
    }

    /// Imports an EC private scalar (big-endian, the curve's size).
    public init(curve: COSEKey.Curve, scalar: [UInt8], algorithm: COSEAlgorithm? = nil) throws(COSEError) {
        guard case .ec(let c) = curve.cryptoKind else { throw .unsupportedAlgorithm }
        let k: PrivateKey
        do { k = try PrivateKey(curve: c, scalar: scalar) } catch { throw .invalidKey("private scalar out of range") }
        try self.init(key: k, algorithm: algorithm)
    }

    init(key: PrivateKey, algorithm: COSEAlgorithm?) throws(COSEError) {
        let pub = COSEKey(publicKey: key.publicKey)
        let alg: COSEAlgorithm
        switch pub.curve {
        case .p256: alg = algorithm ?? .es256
        case .p384: alg = algorithm ?? .es384
        case .p521: alg = algorithm ?? .es512
        case .ed25519: alg = algorithm ?? .edDSA
        default: throw .unsupportedAlgorithm
        }
        guard alg.curve == pub.curve else { throw .keyAlgorithmMismatch }
        self.key = key
        self.algorithm = alg
        self.publicKey = pub
    }

    /// Signs `message` (raw `r ‖ s` for ECDSA, 64 bytes for Ed25519).
    public func sign(_ message: [UInt8]) throws(COSEError) -> [UInt8] {
        do {
            if algorithm == .edDSA { return try key.signEd25519(message: message) }
            guard let d = algorithm.digest else { throw COSEError.unsupportedAlgorithm }
            return try key.signECDSA(message: message, digest: d)
        } catch let e as COSEError {
            throw e
        } catch {
            throw .signingFailed
        }
    }

    /// The private key as PKCS#8 PEM (for writing test keys; handle with care).
    public func pkcs8PEM() throws(COSEError) -> String {
        do { return try key.pkcs8PEM() } catch { throw .signingFailed }
    }
}
