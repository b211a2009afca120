#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore
import JOSE
import MdocCBOR
import Presentment
import DCAPIFraming
import WebEncoding

/// The wallet side of OpenID for Verifiable Presentations 1.0 over the Digital Credentials API
/// (Appendix A) for `mso_mdoc`: unsigned, signed and multisigned requests, DCQL, the
/// `OpenID4VPDCAPIHandover` SessionTranscript, and responses in mode `dc_api` or `dc_api.jwt`. It
/// answers from the same credential context, the same one planner and the same reader-trust policy as
/// the Annex C engine, and produces the same consent model. Immutable and safe to share between
/// threads.
public final class OpenID4VPEngine: Sendable {
    /// The credential context snapshot it answers from (and its reader-trust policy).
    public let context: CredentialContext
    /// Clock, origins, bounds and response preferences, fixed at construction.
    public let configuration: Configuration

    /// Engine settings; `Configuration()` is a valid wallet setup.
    public struct Configuration: Sendable {
        /// The clock for credential validity and verifier certificate checks.
        public var clock: @Sendable () -> Date
        /// Accept `android:apk-key-hash:` app origins; default false.
        public var allowAppOrigins: Bool
        /// The largest raw request accepted, in bytes (signed requests carry certificate chains).
        public var maxRequestBytes: Int
        /// Credential queries per request.
        public var maxCredentialQueries: Int
        /// Claims across all credential queries.
        public var maxRequestedElements: Int
        /// `A256GCM` when the verifier offers both encryptions (HAIP's recommendation); false prefers `A128GCM`.
        public var preferA256GCM: Bool
        /// Re-verify every DeviceResponse before it leaves (digests, device signature: an ECDSA
        /// verification per document); default false, as for Annex C.
        public var selfCheck: Bool
        /// Test hook: a fixed JWE ephemeral key (known-answer tests and the fuzzer).
        @_spi(Testing) public var ephemeralKeySource: (@Sendable () -> JWEEphemeralKey)?

        /// Creates a configuration.
        public init(
            clock: @escaping @Sendable () -> Date = { Date() }, allowAppOrigins: Bool = false,
            maxRequestBytes: Int = 256 * 1024, maxCredentialQueries: Int = 16, maxRequestedElements: Int = 1024,
            preferA256GCM: Bool = true, selfCheck: Bool = false
        ) {
            self.clock = clock
            self.allowAppOrigins = allowAppOrigins
            self.maxRequestBytes = maxRequestBytes
            self.maxCredentialQueries = maxCredentialQueries
            self.maxRequestedElements = maxRequestedElements
            self.preferA256GCM = preferA256GCM
            self.selfCheck = selfCheck
            ephemeralKeySource = nil
        }
    }

    /// Creates an engine over a context snapshot.
    public init(context: CredentialContext, configuration: Configuration = Configuration()) {
        self.context = context
        self.configuration = configuration
    }

    /// Whether a Digital Credentials API protocol identifier is one this engine answers.
    public static func answers(protocolIdentifier: String) -> Bool {
        OpenID4VPRequestForm(protocolIdentifier: protocolIdentifier) != nil
    }

    // MARK: One call

    /// Answers a raw request in one call, releasing everything each chosen credential can deliver
    /// for the query (for a wallet that asked consent before, or a test).
    /// - Parameters:
    ///   - rawRequest: the request as the platform handed it over (any framing; the first
    ///     `openid4vp-v1-*` entry is answered).
    ///   - origin: the requesting origin as the platform reports it (compared verbatim with a signed
    ///     request's `expected_origins`, serialized into the transcript).
    ///   - credentialID: answer with this credential only.
    ///   - format: how to frame the response data.
    /// - Returns: `{"vp_token": {...}}` (`dc_api`) or `{"response": "<JWE>"}` (`dc_api.jwt`), framed.
    /// - Throws: `PresentmentError`; no bytes are produced on any refusal (see `protocolError(for:)`
    ///   for the error object a caller may send after user interaction).
    public func accept(
        rawRequest: Data, origin: String, credentialID: String? = nil, format: OpenID4VPResponseFormat = .automatic
    ) throws(PresentmentError) -> Data {
        let checked = try check(rawRequest: rawRequest, origin: origin)
        if let credentialID, context.credential(id: credentialID) == nil {
            throw PresentmentError(SelectionRule.unknownCredentialID)
        }
        let plan = try Planner.bestPlan(
            checked.dcql.queries, documentSets: checked.dcql.documentSets, context: context,
            now: checked.now, credentialID: credentialID)
        return try finish(plan, checked.state, format: format)
    }

    // MARK: Two phases

    /// Parses and validates a request and reports what a consent UI must show (the same model as
    /// Annex C): framing, origin, the request object and every verifier signature, `expected_origins`,
    /// the holder's trust policy, every parameter, the DCQL query and the response encryption key are
    /// all checked here, before consent.
    public func parse(rawRequest: Data, origin: String) throws(PresentmentError) -> PresentmentRequest {
        let checked = try check(rawRequest: rawRequest, origin: origin)
        let verdict = checked.state.verifierVerdict
        let documents = checked.dcql.queries.map { q in
            RequestedDocument(
                q, candidates: Planner.candidates(q, context: context, now: checked.now),
                excluded: Planner.excluded(q, context: context, now: checked.now), readerVerdict: verdict,
                readerAuthentication: checked.state.signers.map(\.label))
        }
        return PresentmentRequest(
            origin: checked.state.origin, protocolIdentifier: checked.state.form.protocolIdentifier,
            readerVerdict: verdict, readers: checked.state.signers.map(\.verdict), documents: documents,
            sessionTranscriptBytes: checked.state.handover.sessionTranscript,
            documentSets: checked.dcql.documentSets, frontEnd: checked.state)
    }

    /// Answers a parsed request after consent.
    /// - Parameters:
    ///   - using: credential query position → the credential to answer it with (default: the best).
    ///   - approving: the user's choice; a query's claims (or its chosen claim set) are released whole
    ///     or the query is not answered (OpenID4VP §6.4.1).
    ///   - consented: what the platform showed; anything beyond it refuses (`consentMismatch`).
    /// - Throws: `unsupportedProtocol` for a request another front end parsed; the planning, signing
    ///   and encryption refusals otherwise.
    public func respond(
        to request: PresentmentRequest, using: [Int: String] = [:], approving: Approval = .allRequested,
        consented: ConsentedRequest? = nil, format: OpenID4VPResponseFormat = .automatic
    ) throws(PresentmentError) -> Data {
        guard let state = request.frontEnd as? RequestState else {
            throw PresentmentError(FramingRule.noEntry)
        }
        let plan = try Planner.plan(request, context: context, using: using, approving: approving, consented: consented)
        return try finish(plan, state, format: format)
    }

    /// The protocol error object (`{"error": "invalid_request"}` etc., OpenID4VP §8.5) for a refusal,
    /// for the caller to return through the platform when it chooses: never sent automatically, and
    /// a wallet should not reveal errors before user interaction.
    public static func protocolError(for error: PresentmentError) -> Data {
        Data(JSONValue.object([("error", .string(OpenID4VPError(error).rawValue))]).serialized)
    }
}

/// How the response data is framed.
public enum OpenID4VPResponseFormat: String, Sendable, Hashable, CaseIterable {
    /// The data object for a bare or `{protocol, data}` request; `{"protocol", "data"}` for the list framings.
    case automatic
    /// The response data object alone: `{"vp_token": …}` or `{"response": …}`.
    case dataObject
    /// `{"protocol": "openid4vp-v1-…", "data": {…}}`.
    case protocolAndData
}

/// The OAuth / OpenID4VP error codes a refusal maps to (OpenID4VP §8.5, RFC 6749 §4.1.2.1).
public enum OpenID4VPError: String, Sendable, Hashable, CaseIterable {
    /// The request is malformed, its verifier could not be authenticated, or its origin does not match.
    case invalidRequest = "invalid_request"
    /// The wallet holds no credential to answer, or the user declined.
    case accessDenied = "access_denied"
    /// `transaction_data` of an unsupported type.
    case invalidTransactionData = "invalid_transaction_data"
    /// The verifier's `vp_formats_supported` excludes what the wallet holds.
    case vpFormatsNotSupported = "vp_formats_not_supported"
    /// Anything else (the wallet failed).
    case serverError = "server_error"

    /// The code for a refusal.
    public init(_ e: PresentmentError) {
        switch e.code {
        case .noMatchingCredential, .cannotSatisfyRequest, .consentMismatch: self = .accessDenied
        case .unsupportedTransactionData: self = .invalidTransactionData
        case .keyUnavailable, .signingFailed, .sealingFailed, .selfCheckFailed, .contextUnavailable,
            .contextCorrupt, .contextInsecure, .contextBusy:
            self = .serverError
        default: self = .invalidRequest
        }
    }
}

/// The ephemeral key of one JWE (test hook).
public struct JWEEphemeralKey: Sendable {
    let key: PrivateKey
    /// A P-256 key from its 32-byte scalar.
    public init(p256Scalar: [UInt8]) throws(PresentmentError) {
        do { key = try PrivateKey(curve: .p256, scalar: p256Scalar) } catch {
            throw PresentmentError(OpenID4VPRule.sealing, underlying: error)
        }
    }
}

/// What the engine did with an OpenID4VP request, for debugging and the CLI's `inspect`: the parsed
/// request (consent model and `openID4VP` details: form, nonce, encryption key, handover, every
/// verifier signature) or the refusal. Holds no element values or keys.
public struct OpenID4VPExplanation: Sendable {
    /// The origin as serialized into the transcript, when it parsed.
    public var origin: String?
    /// The request, when it parsed.
    public var request: PresentmentRequest?
    /// The refusal, if any.
    public var error: PresentmentError?
}

extension OpenID4VPEngine {
    /// Runs `parse` and records what it found or why it refused. Never throws.
    public func explain(rawRequest: Data, origin: String) -> OpenID4VPExplanation {
        var e = OpenID4VPExplanation()
        e.origin = (try? Origin(origin, allowAppOrigins: configuration.allowAppOrigins))?.serialized
        do { e.request = try parse(rawRequest: rawRequest, origin: origin) } catch { e.error = error }
        return e
    }
}

extension OpenID4VPEngine {
    /// Test hook: the response payload (`{"vp_token": …}` JSON) of an answer to `request`, read back by
    /// the sender: a `dc_api.jwt` answer is decrypted with the fixed ephemeral key and the verifier's
    /// public key (the same ECDH secret). Nil when the answer is not one this engine wrote for it.
    @_spi(Testing) public static func payload(
        of response: Data, for request: PresentmentRequest, ephemeral: JWEEphemeralKey
    )
        -> [UInt8]?
    {
        guard let state = request.frontEnd as? RequestState, var data = try? JSONValue.parse(Array(response)) else {
            return nil
        }
        if data["protocol"] != nil, let inner = data["data"] { data = inner }
        guard let enc = state.encryption else { return data["vp_token"] != nil ? data.serialized : nil }
        guard let jwe = data["response"]?.string,
            let opened = try? JWE.decrypt(
                jwe,
                agreement: { (_) throws(JOSEError) -> [UInt8] in
                    do { return try ephemeral.key.sharedSecret(with: enc.key.publicKey) } catch {
                        throw JOSEError(.invalidKey, "key agreement failed")
                    }
                })
        else { return nil }
        return opened.plaintext
    }
}
