#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import AnnexC
import DCAPIFraming
import OpenID4VP
@_spi(FrontEnd) import Presentment
import WebEncoding

/// One registered front end as the facade dispatches to it: its protocol, how it recognises its
/// entries, and the engine's three operations bound to it (the front end's details wrapped in, and
/// unwrapped from, `ProtocolDetails`). A class: handed around by one reference, not six closures.
final class RegisteredFrontEnd: Sendable {
    let presentationProtocol: PresentationProtocol
    /// The protocol identifiers it declared (`DCAPIFrontEnd.protocolIdentifiers`).
    let identifiers: [String]
    let isBareData: @Sendable (JSONNode) -> Bool
    let accept:
        @Sendable (PresentmentEngine, RequestEntry, Origin, String?, ResponseFormat, StageClock?)
            throws(PresentmentError) -> Data
    let parse:
        @Sendable (PresentmentEngine, RequestEntry, Origin, inout CheckTrace?, StageClock?) throws(PresentmentError)
            -> DigitalCredentialsRequest
    /// Answers a request whose details are this front end's; nil for another front end's request.
    let respond:
        @Sendable (
            PresentmentEngine, DigitalCredentialsRequest, [Int: String], Approval, ConsentedRequest?, Set<Int>,
            ResponseFormat, StageClock?
        )
            throws(PresentmentError) -> Data?

    init<F: DCAPIFrontEnd>(
        _ p: PresentationProtocol, _ frontEnd: F, wrap: @escaping @Sendable (F.Details) -> ProtocolDetails,
        unwrap: @escaping @Sendable (ProtocolDetails) -> F.Details?
    ) {
        presentationProtocol = p
        identifiers = frontEnd.protocolIdentifiers
        isBareData = { F.isBareData($0) }
        accept = { (engine, entry, origin, credentialID, format, stages) throws(PresentmentError) in
            try engine.accept(
                entry, origin: origin, via: frontEnd, credentialID: credentialID, format: format, stages: stages)
        }
        parse = { (engine, entry, origin, trace, stages) throws(PresentmentError) in
            try engine.parse(entry, origin: origin, via: frontEnd, trace: &trace, details: wrap, stages: stages)
        }
        respond = {
            (engine, request, using, approving, consented, plainFallback, format, stages) throws(PresentmentError) in
            guard let details = unwrap(request.details) else { return nil }
            return try engine.respond(
                to: request.withDetails(details), via: frontEnd, using: using, approving: approving,
                consented: consented, plainFallback: plainFallback, format: format, stages: stages)
        }
    }

    /// Whether an entry's `protocol` is one of this front end's identifiers (compared in place, byte
    /// for byte; no `String` made from the request).
    func answers(_ entry: RequestEntry) -> Bool { identifiers.contains { entry.names(protocol: $0) } }

    /// The built-in front ends, in the order the facade considers them by default (Annex C first).
    /// Adding a protocol: its front end here, and its case in `ProtocolDetails` and
    /// `PresentationProtocol`.
    static func builtIn(_ configuration: DigitalCredentialsEngine.Configuration) -> [RegisteredFrontEnd] {
        [
            RegisteredFrontEnd(
                .annexC, AnnexCFrontEnd(settings: configuration.annexC), wrap: { .annexC($0) }, unwrap: { $0.annexC }),
            RegisteredFrontEnd(
                .openID4VP, OpenID4VPFrontEnd(settings: configuration.openID4VP), wrap: { .openID4VP($0) },
                unwrap: { $0.openID4VP }),
        ]
    }
}

/// The front ends an engine routes to, each protocol identifier claimed by exactly one of them.
struct FrontEndRegistry: Sendable {
    /// Two front ends declared one identifier.
    struct Conflict: Error, Equatable {
        /// The identifier claimed twice.
        let identifier: String
    }

    /// The front ends, in registration order.
    let frontEnds: [RegisteredFrontEnd]

    /// Registers `frontEnds` in order.
    /// - Throws: `Conflict` when an identifier is declared twice (by two front ends, or twice by one).
    init(_ frontEnds: [RegisteredFrontEnd]) throws(Conflict) {
        var claimed = Set<String>()
        for f in frontEnds {
            for identifier in f.identifiers where !claimed.insert(identifier).inserted {
                throw Conflict(identifier: identifier)
            }
        }
        self.frontEnds = frontEnds
    }

    /// The built-in front ends under `configuration` (which declare disjoint identifiers; a test holds
    /// them to it in every setting, so a conflict here is a programming error).
    static func builtIn(_ configuration: DigitalCredentialsEngine.Configuration) -> FrontEndRegistry {
        do { return try FrontEndRegistry(RegisteredFrontEnd.builtIn(configuration)) } catch {
            preconditionFailure("two built-in front ends claim the protocol identifier \(error.identifier)")
        }
    }
}
