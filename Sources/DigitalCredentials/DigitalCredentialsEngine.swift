#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
@_exported import AnnexC
@_exported import OpenID4VP
import Presentment

/// One entry point for both Digital Credentials API protocols a wallet answers for mdocs: it takes
/// whatever the platform hands over, finds the `org-iso-mdoc` and `openid4vp-v1-*` entries, and
/// answers with the protocol the configured preference picks. Both engines read the same credential
/// context, plan with the same planner and apply the same reader-trust policy; the consent model
/// says which protocol was used (`PresentmentRequest.protocolIdentifier`). Immutable and safe to
/// share between threads.
public final class DigitalCredentialsEngine: Sendable {
    /// Which protocol answers when a page offers both.
    public enum Preference: String, Sendable, Hashable, CaseIterable {
        /// The one that can be answered; Annex C first when both can (the default).
        case answerable
        /// Annex C whenever the request has an `org-iso-mdoc` entry.
        case annexC
        /// OpenID4VP whenever the request has an `openid4vp-v1-*` entry.
        case openID4VP
    }

    /// The Annex C engine.
    public let annexC: AnnexCEngine
    /// The OpenID4VP engine.
    public let openID4VP: OpenID4VPEngine
    /// The preference between them.
    public let preference: Preference

    /// Creates the facade over one context; each protocol's settings in its own configuration (give
    /// both the same clock).
    public init(
        context: CredentialContext, annexC: AnnexCEngine.Configuration = .init(),
        openID4VP: OpenID4VPEngine.Configuration = .init(), preference: Preference = .answerable
    ) {
        self.annexC = AnnexCEngine(context: context, configuration: annexC)
        self.openID4VP = OpenID4VPEngine(context: context, configuration: openID4VP)
        self.preference = preference
    }

    /// The two protocols in the order they are tried.
    private var order: [Front] { preference == .openID4VP ? [.openID4VP, .annexC] : [.annexC, .openID4VP] }

    private enum Front { case annexC, openID4VP }

    /// Tries the protocols in order: the first answer wins. A protocol the request does not offer is
    /// passed over; when every offered protocol refuses, the preferred one's refusal is thrown. Under
    /// `.annexC` / `.openID4VP` a refusal by the preferred protocol (when offered) is final.
    private func first<R>(_ attempt: (Front) throws(PresentmentError) -> R) throws(PresentmentError) -> R {
        var refusal: PresentmentError?
        for p in order {
            do { return try attempt(p) } catch {
                if error.code == .unsupportedProtocol {
                    if refusal == nil { refusal = error }
                    continue
                }
                if preference != .answerable { throw error }
                if refusal == nil || refusal!.code == .unsupportedProtocol { refusal = error }
            }
        }
        throw refusal ?? PresentmentError(.unsupportedProtocol, "no org-iso-mdoc or openid4vp-v1-* entry")
    }

    /// Answers a raw request in one call with the chosen protocol, releasing everything requested
    /// and held (see `AnnexCEngine.accept` and `OpenID4VPEngine.accept`), framed automatically.
    public func accept(rawRequest: Data, origin: String, credentialID: String? = nil) throws(PresentmentError)
        -> Data
    {
        try first { (p) throws(PresentmentError) -> Data in
            switch p {
            case .annexC: try annexC.accept(rawRequest: rawRequest, origin: origin, credentialID: credentialID)
            case .openID4VP: try openID4VP.accept(rawRequest: rawRequest, origin: origin, credentialID: credentialID)
            }
        }
    }

    /// Parses a request with the chosen protocol for a consent screen. Under `.answerable` a protocol
    /// whose request nothing stored can answer gives way to the other.
    public func parse(rawRequest: Data, origin: String) throws(PresentmentError) -> PresentmentRequest {
        try first { (p) throws(PresentmentError) -> PresentmentRequest in
            let request =
                switch p {
                case .annexC: try annexC.parse(rawRequest: rawRequest, origin: origin)
                case .openID4VP: try openID4VP.parse(rawRequest: rawRequest, origin: origin)
                }
            if preference == .answerable { try request.checkAnswerable(context: annexC.context) }
            return request
        }
    }

    /// Answers a parsed request with the engine that parsed it (formats automatic).
    public func respond(
        to request: PresentmentRequest, using: [Int: String] = [:], approving: Approval = .allRequested,
        consented: ConsentedRequest? = nil
    ) throws(PresentmentError) -> Data {
        if request.openID4VP != nil {
            return try openID4VP.respond(to: request, using: using, approving: approving, consented: consented)
        }
        return try annexC.respond(to: request, using: using, approving: approving, consented: consented)
    }
}
