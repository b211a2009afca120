import AnnexC
import OpenID4VP
import Presentment

/// What the protocol of a request carried, typed per protocol: the details its front end kept.
public enum ProtocolDetails: Sendable {
    /// An Annex C request (`org-iso-mdoc`).
    case annexC(AnnexCDetails)
    /// An OpenID4VP request (`openid4vp-v1-*`).
    case openID4VP(OpenID4VPDetails)

    /// The protocol.
    public var presentationProtocol: PresentationProtocol {
        switch self {
        case .annexC: .annexC
        case .openID4VP: .openID4VP
        }
    }

    /// The Annex C details, for an Annex C request.
    public var annexC: AnnexCDetails? {
        if case .annexC(let d) = self { d } else { nil }
    }

    /// The OpenID4VP details, for an OpenID4VP request.
    public var openID4VP: OpenID4VPDetails? {
        if case .openID4VP(let d) = self { d } else { nil }
    }
}

/// A parsed request as `DigitalCredentialsEngine.parse` returns it: the consent model and the
/// protocol's details.
public typealias DigitalCredentialsRequest = PresentmentRequest<ProtocolDetails>
