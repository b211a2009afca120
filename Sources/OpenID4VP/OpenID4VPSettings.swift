internal import CryptoCore
import Presentment

/// The settings only OpenID4VP has (`DigitalCredentialsEngine.Configuration.openID4VP`). The settings
/// every protocol shares (clock, origins, request bounds, self-check, trust) are
/// `EngineConfiguration`'s.
public struct OpenID4VPSettings: Sendable {
    /// `A256GCM` when the verifier offers both content encryptions (HAIP's recommendation); false
    /// prefers `A128GCM`. Default true.
    public var preferA256GCM: Bool
    /// Test hook: a fixed JWE ephemeral key (known-answer tests and the fuzzer). A reused ephemeral key
    /// breaks ECDH-ES.
    @_spi(Testing) public var ephemeralKeySource: (@Sendable () -> JWEEphemeralKey)?

    /// Settings with safe defaults.
    public init(preferA256GCM: Bool = true) {
        self.preferA256GCM = preferA256GCM
        ephemeralKeySource = nil
    }
}

/// The ephemeral key of one JWE (test hook).
@_spi(Testing) public struct JWEEphemeralKey: Sendable {
    let key: PrivateKey
    /// A P-256 key from its 32-byte scalar.
    public init(p256Scalar: [UInt8]) throws(PresentmentError) {
        do { key = try PrivateKey(curve: .p256, scalar: p256Scalar) } catch {
            throw PresentmentError(OpenID4VPRule.sealing, underlying: error)
        }
    }
}
