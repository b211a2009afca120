import HPKE
import Presentment

/// The settings only Annex C has (`DigitalCredentialsEngine.Configuration.annexC`); every field has a
/// safe default. The settings every protocol shares (clock, origins, request bounds, self-check,
/// trust) are `EngineConfiguration`'s.
public struct AnnexCSettings: Sendable {
    /// Accept the pre-publication protocol identifier `org.iso.mdoc` beside `org-iso-mdoc`; default true.
    public var acceptLegacyProtocolAlias: Bool
    /// What to do with requested elements that are not held: leave them out (default) or report them
    /// as `errors` / `documentErrors` (ISO/IEC 18013-5 error code 0).
    public var missingElements: MissingElementPolicy
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
    /// request fuzzer. A test hook, not API: a reused ephemeral key breaks HPKE.
    @_spi(Testing) public var ephemeralKeySource: (@Sendable () -> HPKE.PrivateKey)?

    /// Settings with safe defaults.
    public init(
        acceptLegacyProtocolAlias: Bool = true, missingElements: MissingElementPolicy = .omit,
        maxAlternativeSetSize: Int = 6, maxNestingDepth: Int = 16, maxDataItems: Int = 8192
    ) {
        self.acceptLegacyProtocolAlias = acceptLegacyProtocolAlias
        self.missingElements = missingElements
        self.maxAlternativeSetSize = maxAlternativeSetSize
        self.maxNestingDepth = maxNestingDepth
        self.maxDataItems = maxDataItems
        ephemeralKeySource = nil
    }
}
