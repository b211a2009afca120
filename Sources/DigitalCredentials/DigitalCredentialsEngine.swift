#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
@_exported import AnnexC
@_exported import OpenID4VP
import DCAPIFraming
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

    /// The two protocols in the order they are considered.
    private var order: [Front] { preference == .openID4VP ? [.openID4VP, .annexC] : [.annexC, .openID4VP] }

    private enum Front { case annexC, openID4VP }

    /// A refusal for a selection reason: the entry cannot be answered from what is stored (no entry of
    /// that protocol, no usable credential, not satisfiable as a whole). Only these let the next
    /// entry be tried; every other refusal (a signature, trust, origin, parameter or policy refusal)
    /// is final, whichever entry it came from.
    package static func isSelectionRefusal(_ e: PresentmentError) -> Bool {
        e.code == .unsupportedProtocol || e.code == .noMatchingCredential || e.code == .cannotSatisfyRequest
    }

    /// Answers a raw request in one call with the chosen protocol, releasing everything requested
    /// and held (see `AnnexCEngine.accept` and `OpenID4VPEngine.accept`), framed automatically.
    ///
    /// Which entry answers (one written rule, the same for `parse`): the entries are considered in the
    /// preference's order (Annex C first unless `.openID4VP`); an entry is answered unless it is
    /// refused for a selection reason (`isSelectionRefusal`), and then the next is considered, under
    /// `.answerable` only (under `.annexC` / `.openID4VP` only an absent entry passes). Any other
    /// refusal is final. When no entry can be answered, the preferred offered entry's refusal is thrown.
    public func accept(rawRequest: Data, origin: String, credentialID: String? = nil) throws(PresentmentError)
        -> Data
    {
        var refusal: PresentmentError?
        for p in order {
            do {
                return try
                    (p == .annexC
                    ? annexC.accept(rawRequest: rawRequest, origin: origin, credentialID: credentialID)
                    : openID4VP.accept(rawRequest: rawRequest, origin: origin, credentialID: credentialID))
            } catch {
                guard Self.isSelectionRefusal(error) else { throw error }
                if refusal == nil || refusal!.code == .unsupportedProtocol { refusal = error }
                if error.code != .unsupportedProtocol && preference != .answerable { throw error }
            }
        }
        throw refusal ?? PresentmentError(FramingRule.noEntry)
    }

    /// Parses a request with the chosen protocol for a consent screen, by the rule of `accept`: an
    /// entry that cannot be answered from what is stored gives way to the next (under `.answerable`);
    /// when none can, the preferred entry's consent model is returned with nothing releasable (never
    /// a refusal at `parse` for that: the holder sees the request, and the page gets the refusal it
    /// gets when the holder declines). `protocolChoice` says which entry and why.
    public func parse(rawRequest: Data, origin: String) throws(PresentmentError) -> PresentmentRequest {
        var considered = [String]()
        var unanswerable: PresentmentRequest?
        for p in order {
            var request: PresentmentRequest
            do {
                request =
                    try p == .annexC
                    ? annexC.parse(rawRequest: rawRequest, origin: origin)
                    : openID4VP.parse(rawRequest: rawRequest, origin: origin)
            } catch {
                if error.code == .unsupportedProtocol { continue }
                throw error
            }
            considered.append(request.protocolIdentifier)
            if preference == .answerable {
                do { try request.checkAnswerable(context: annexC.context) } catch {
                    guard Self.isSelectionRefusal(error) else { throw error }
                    if unanswerable == nil { unanswerable = request }
                    continue
                }
            }
            request.protocolChoice = ProtocolChoice(
                considered: considered, reason: unanswerable == nil ? .preferred : .preferredNotAnswerable)
            return request
        }
        guard var shown = unanswerable else {
            throw PresentmentError(FramingRule.noEntry)
        }
        shown.protocolChoice = ProtocolChoice(considered: considered, reason: .noneAnswerable)
        return shown
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
