#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import HPKE
import MdocCBOR
import Presentment

extension AnnexCEngine {
    /// Engine settings; every field has a safe default, so `Configuration()` is a valid wallet setup.
    public struct Configuration: Sendable {
        /// The clock for credential validity (MSO validFrom/validUntil) and reader certificate checks.
        public var clock: @Sendable () -> Date
        /// Accept `android:apk-key-hash:` app origins (Android native callers); default false.
        public var allowAppOrigins: Bool
        /// Accept the pre-publication protocol identifier `org.iso.mdoc` beside `org-iso-mdoc`; default true.
        public var acceptLegacyProtocolAlias: Bool
        /// What to do with requested elements that are not held: leave them out (default) or report
        /// them as `errors` / `documentErrors` (18013-5 error code 0).
        public var missingElements: MissingElementPolicy
        /// Re-verify released digests and the device signature before sealing (costs one ECDSA verify);
        /// a failure is `selfCheckFailed`. Default false.
        public var selfCheck: Bool
        /// Largest raw request accepted, in bytes (default 256 KiB); larger is `limitExceeded`.
        public var maxRequestBytes: Int
        /// Most DocRequests accepted in one DeviceRequest (default 16).
        public var maxDocRequests: Int
        /// Most element references accepted across one DeviceRequest: requested elements plus every
        /// element named in `alternativeDataElements` (substitutes count against the limit).
        public var maxRequestedElements: Int
        /// Largest alternative set honoured (1.1 `alternativeDataElements`): a set is released whole in
        /// place of one missing element, so this bounds what one missing element can cost the holder.
        /// Larger sets are not honoured (shown as ignored). Default 6: the largest honest set seen is a
        /// postal address split into its parts.
        public var maxAlternativeSetSize: Int
        /// Deepest CBOR nesting accepted in a DeviceRequest (arrays, maps, tags; default 16, mdoc needs
        /// under 10).
        public var maxNestingDepth: Int
        /// Most CBOR data items accepted in one DeviceRequest, embedded ItemsRequests included (default 8192).
        public var maxDataItems: Int
        /// Source of HPKE ephemeral keys: nil (fresh random keys) except in deterministic tests and the
        /// request fuzzer. A test hook, not API (`@_spi(Testing)`): a reused ephemeral key breaks HPKE.
        @_spi(Testing) public var ephemeralKeySource: (@Sendable () -> HPKE.PrivateKey)?

        /// Creates a configuration with safe defaults.
        public init(
            clock: @escaping @Sendable () -> Date = { Date() }, allowAppOrigins: Bool = false,
            acceptLegacyProtocolAlias: Bool = true,
            missingElements: MissingElementPolicy = .omit, selfCheck: Bool = false, maxRequestBytes: Int = 256 << 10,
            maxDocRequests: Int = 16, maxRequestedElements: Int = 1024, maxAlternativeSetSize: Int = 6,
            maxNestingDepth: Int = 16,
            maxDataItems: Int = 8192
        ) {
            self.clock = clock
            self.allowAppOrigins = allowAppOrigins
            self.acceptLegacyProtocolAlias = acceptLegacyProtocolAlias
            self.missingElements = missingElements
            self.selfCheck = selfCheck
            self.maxRequestBytes = maxRequestBytes
            self.maxDocRequests = maxDocRequests
            self.maxRequestedElements = maxRequestedElements
            self.maxAlternativeSetSize = maxAlternativeSetSize
            self.maxNestingDepth = maxNestingDepth
            self.maxDataItems = maxDataItems
            self.ephemeralKeySource = nil
        }
    }
}
