#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HPKE
import MdocCBOR
internal import CryptoCore

/// The Annex C response engine. Immutable after construction and safe to share between threads:
/// one instance serves concurrent `accept` / `parse` / `respond` calls.
public final class AnnexCEngine: Sendable {
    /// Engine settings.
    public struct Configuration: Sendable {
        /// The clock for credential validity and reader certificate checks.
        public var clock: @Sendable () -> Date
        /// Accept `android:apk-key-hash:` app origins.
        public var allowAppOrigins: Bool
        /// Accept the pre-publication protocol identifier `org.iso.mdoc`.
        public var acceptLegacyProtocolAlias: Bool
        /// What to do with requested elements that are not held.
        public var missingElements: MissingElementPolicy
        /// Re-verify released digests and the device signature before sealing (costs one ECDSA verify).
        public var selfCheck: Bool
        /// Largest raw request accepted, in bytes.
        public var maxRequestBytes: Int
        /// Most DocRequests accepted in one DeviceRequest.
        public var maxDocRequests: Int
        /// Most element references accepted across one DeviceRequest: requested elements plus every
        /// element named in `alternativeDataElements` (substitutes count against the limit).
        public var maxRequestedElements: Int
        /// Largest alternative set honoured (1.1 `alternativeDataElements`): a set is released whole in
        /// place of one missing element, so this bounds what one missing element can cost the holder.
        /// Larger sets are not honoured (shown as ignored). Default 6: the largest honest set seen is a
        /// postal address split into its parts.
        public var maxAlternativeSetSize: Int
        /// Deepest CBOR nesting accepted in a DeviceRequest (arrays, maps, tags; mdoc needs under 10).
        public var maxNestingDepth: Int
        /// Most CBOR data items accepted in one DeviceRequest (including embedded ItemsRequests).
        public var maxDataItems: Int
        /// Source of HPKE ephemeral keys. Leave nil (fresh random keys); set only for deterministic tests.
        public var ephemeralKeySource: (@Sendable () -> HPKE.PrivateKey)?

        /// Creates a configuration with safe defaults.
        public init(clock: @escaping @Sendable () -> Date = { Date() }, allowAppOrigins: Bool = false, acceptLegacyProtocolAlias: Bool = true,
                    missingElements: MissingElementPolicy = .omit, selfCheck: Bool = false, maxRequestBytes: Int = 256 << 10,
                    maxDocRequests: Int = 16, maxRequestedElements: Int = 1024, maxAlternativeSetSize: Int = 6, maxNestingDepth: Int = 16,
                    maxDataItems: Int = 8192, ephemeralKeySource: (@Sendable () -> HPKE.PrivateKey)? = nil) {
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
            self.ephemeralKeySource = ephemeralKeySource
        }
    }

    /// The credential context snapshot.
    public let context: CredentialContext
    /// The configuration.
    public let configuration: Configuration

    /// Creates an engine over a context snapshot.
    public init(context: CredentialContext, configuration: Configuration = Configuration()) {
        self.context = context
        self.configuration = configuration
    }

    // MARK: One call

    /// Parses, selects, builds, signs and seals in one call, releasing everything requested that the
    /// best matching credential holds.
    /// - Parameters:
    ///   - rawRequest: the request JSON in any supported framing.
    ///   - origin: the requesting origin (string form).
    ///   - credentialID: answer with this credential only (for a one-credential provider).
    ///   - format: how to frame the sealed response.
    /// - Returns: the bytes the platform expects.
    public func accept(rawRequest: Data, origin: String, credentialID: String? = nil, format: ResponseFormat = .automatic) throws(AnnexCError) -> Data {
        // The same checks as `parse`, then the plan straight from the DeviceRequest: no consent-screen
        // model (per-element lists, every candidate ranked) is built for a call that shows none.
        // Tests hold this path to `respond(to: parse(…))` response for response.
        var explanation = Explanation()
        let checked = try check(rawRequest: rawRequest, origin: origin, explanation: &explanation, record: false)
        if let credentialID {
            guard context.credential(id: credentialID) != nil else { throw AnnexCError(.noMatchingCredential, "no credential with the given id") }
        }
        let plan = try Planner.bestPlan(checked.queries, request: checked.deviceRequest, context: context, now: checked.now, credentialID: credentialID)
        return try finish(plan, transcript: checked.transcript, encryptionInfo: checked.encryptionInfo, framing: checked.framing, format: format)
    }

    // MARK: Two phases

    /// Parses and validates a request and reports what a consent UI must show. Everything a reader
    /// controls is checked here, before any consent is asked: framing, origin, EncryptionInfo and its
    /// key, DeviceRequest, reader authentication and the holder's trust policy.
    public func parse(rawRequest: Data, origin: String) throws(AnnexCError) -> PresentmentRequest {
        var explanation = Explanation()
        return try parse(rawRequest: rawRequest, origin: origin, explanation: &explanation, describeSelection: false)
    }

    /// Everything `parse` checks before selection: framing, origin, EncryptionInfo, transcript,
    /// DeviceRequest and limits, reader authentication and the trust policy.
    struct CheckedRequest {
        let origin: Origin
        let framing: RequestFraming
        let transcript: SessionTranscript
        let encryptionInfo: EncryptionInfo
        let deviceRequest: DeviceRequest
        /// Each DocRequest prepared for matching (admissible alternative sets).
        let queries: [DocumentQuery]
        let auth: ReaderAuthenticator.Result
        let now: Date
    }

    /// Runs the checks; `record` fills `explanation` (the consent and `explain` paths), otherwise
    /// only a refusal by the reader checks is recorded.
    func check(rawRequest: Data, origin originText: String, explanation: inout Explanation, record: Bool) throws(AnnexCError) -> CheckedRequest {
        guard rawRequest.count <= configuration.maxRequestBytes else { throw AnnexCError(.limitExceeded, "request larger than the configured maximum") }
        // Framing read straight from the caller's buffer (no copy of the request).
        let found: Result<Envelope, AnnexCError> = rawRequest.withUnsafeBytes { raw in
            Result { () throws(AnnexCError) in
                try Envelope.parse(raw.assumingMemoryBound(to: UInt8.self), acceptLegacyAlias: configuration.acceptLegacyProtocolAlias,
                                   maxBytes: configuration.maxRequestBytes)
            }
        }
        let envelope = try found.get()
        if record { explanation.framing = envelope.framing }
        let origin = try Origin(originText, allowAppOrigins: configuration.allowAppOrigins)
        if record { explanation.origin = origin.serialized }
        let encryptionInfo = try EncryptionInfo(base64url: envelope.encryptionInfo)
        let transcript = SessionTranscript(encryptionInfo: envelope.encryptionInfo, origin: origin)
        if record {
            explanation.dcapiInfo = transcript.dcapiInfo
            explanation.sessionTranscript = transcript.bytes
        }

        guard let drBytes = Base64URL.decode(envelope.deviceRequest) else { throw AnnexCError(.malformedRequest, "deviceRequest is not base64url") }
        if record { explanation.deviceRequest = drBytes }
        let options = CBORDecodingOptions(maxDepth: configuration.maxNestingDepth, maxItems: configuration.maxDataItems, maxInputSize: configuration.maxRequestBytes)
        let request: DeviceRequest
        do { request = try DeviceRequest(encoded: drBytes, options: options) } catch {
            if error.code == .cbor, let c = error.cbor, [.itemLimitExceeded, .depthLimitExceeded, .inputTooLarge].contains(c.code) {
                throw AnnexCError(.limitExceeded, "DeviceRequest exceeds the configured CBOR limits (\(c.code.rawValue))")
            }
            throw AnnexCError(.invalidDeviceRequest, error.description)
        }
        guard request.docRequests.count <= configuration.maxDocRequests else { throw AnnexCError(.limitExceeded, "more DocRequests than the configured limit") }
        guard Self.elementReferences(request) <= configuration.maxRequestedElements else {
            throw AnnexCError(.limitExceeded, "more requested and alternative elements than the configured limit")
        }
        let now = configuration.clock()
        let auth: ReaderAuthenticator.Result
        do {
            auth = try ReaderAuthenticator(policy: context.readerTrust, now: now).authenticate(request: request, transcript: transcript, record: record,
                                                                                             checks: &explanation.readerChecks)
        } catch {
            explanation.error = error
            throw error
        }
        if record {
            explanation.readerVerdict = auth.verdict
            explanation.documentVerdicts = request.docRequests.indices.map(auth.verdict(forDocument:))
            explanation.readers = auth.readers
        }
        return CheckedRequest(origin: origin, framing: envelope.framing, transcript: transcript, encryptionInfo: encryptionInfo,
                              deviceRequest: request, queries: DocumentQuery.prepare(request, maxSetSize: configuration.maxAlternativeSetSize),
                              auth: auth, now: now)
    }

    /// Every element a DeviceRequest names: requested elements, and each `alternativeDataElements`
    /// entry's requested element and alternatives (counted in any version: they were parsed).
    static func elementReferences(_ request: DeviceRequest) -> Int {
        var n = 0
        for d in request.docRequests {
            n += d.itemsRequest.elementCount
            for a in d.itemsRequest.requestInfo?.alternativeDataElements ?? [] {
                n += 1
                for s in a.alternativeElementSets { n += s.count }
            }
        }
        return n
    }

    func parse(rawRequest: Data, origin originText: String, explanation: inout Explanation, describeSelection: Bool) throws(AnnexCError) -> PresentmentRequest {
        let checked = try check(rawRequest: rawRequest, origin: originText, explanation: &explanation, record: true)
        let documents = checked.queries.map { q in
            RequestedDocument(q, candidates: Planner.candidates(q, context: context, now: checked.now), readerVerdict: checked.auth.verdict(forDocument: q.index),
                              readerAuthentication: checked.auth.coverage.isEmpty ? [] : checked.auth.coverage[q.index])
        }
        if describeSelection {
            explanation.documents = documents
            for d in documents { explanation.selection.append(Self.describe(d)) }
        }
        return PresentmentRequest(origin: checked.origin, framing: checked.framing, sessionTranscript: checked.transcript, encryptionInfo: checked.encryptionInfo,
                                  deviceRequest: checked.deviceRequest, readerVerdict: checked.auth.verdict, readers: checked.auth.readers,
                                  documents: documents, explanation: explanation)
    }

    /// Builds, signs and seals the answer to a parsed request.
    /// - Parameters:
    ///   - request: the result of `parse`.
    ///   - using: document index → credential id; unlisted documents use their best candidate.
    ///   - approving: the user's choice; nothing outside it is released.
    ///   - consented: what the platform showed the user; a request asking for more is refused.
    ///   - format: how to frame the sealed response.
    public func respond(to request: PresentmentRequest, using: [Int: String] = [:], approving: Approval = .allRequested,
                        consented: ConsentedRequest? = nil, format: ResponseFormat = .automatic) throws(AnnexCError) -> Data {
        let plan = try Planner.plan(request, context: context, using: using, approving: approving, consented: consented)
        return try finish(plan, transcript: request.sessionTranscript, encryptionInfo: request.encryptionInfo, framing: request.framing, format: format)
    }

    /// Builds the DeviceResponse for a plan, enforces maximumResponseSize, self-checks if configured, seals.
    private func finish(_ plan: Plan, transcript: SessionTranscript, encryptionInfo: EncryptionInfo, framing: RequestFraming,
                        format: ResponseFormat) throws(AnnexCError) -> Data {
        let response = try ResponseBuilder.build(plan: plan, transcript: transcript, missingElements: configuration.missingElements)
        for d in plan.answered {
            if let max = d.maximumResponseSize, UInt64(response.count) > max {
                throw AnnexCError(.responseTooLarge, "the DeviceResponse exceeds the reader's maximumResponseSize")
            }
        }
        if configuration.selfCheck { try ResponseBuilder.selfCheck(response, plan: plan, transcript: transcript) }
        return try seal(response, encryptionInfo: encryptionInfo, transcript: transcript, framing: framing, format: format)
    }

    /// One line of `explain`'s selection record for a requested document: what each candidate would
    /// release (substitutes named with what they replace), what it lacks, and alternatives not honoured.
    static func describe(_ d: RequestedDocument) -> String {
        var line = "docRequests[\(d.index)] \(d.docType): \(d.elements.count) elements requested; "
        line += d.candidates.isEmpty ? "no usable credential" : d.candidates.map { c in
            "\(c.credentialID) can release \(c.shownElements.count)"
                + (c.releasable.isEmpty ? "" : " [\(c.releasable.map(\.identifier).joined(separator: ", "))]")
                + c.substitutions.map { ", replaces \($0.requested.identifier) with [\($0.replacement.map(\.identifier).joined(separator: ", "))]" }.joined()
                + (c.missing.isEmpty ? "" : ", lacks [\(c.missing.map(\.identifier).joined(separator: ", "))]")
        }.joined(separator: "; ")
        for i in d.ignoredAlternatives {
            line += "; alternative for \(i.requested.identifier) not honoured (\(i.reason.rawValue)): [\(i.set.map(\.description).joined(separator: ", "))]"
        }
        return line
    }

    /// Explains what the engine does with a request (framing, origin, transcript, reader checks,
    /// selection), without building a response. Never throws: a refusal is recorded in `error`.
    public func explain(rawRequest: Data, origin: String) -> Explanation {
        var e = Explanation()
        do { _ = try parse(rawRequest: rawRequest, origin: origin, explanation: &e, describeSelection: true) } catch { e.error = error }
        return e
    }

    // MARK: Sealing

    /// Length of the EncryptedResponse head: `["dcapi", {"enc": bstr, "cipherText":` and the
    /// cipherText's bstr head.
    private static func encryptedHeadLength(enc: Int, cipherText: Int) -> Int {
        1 + 6 + 1 + 4 + CBORWriter.headLength(UInt64(enc)) + enc + 11 + CBORWriter.headLength(UInt64(cipherText))
    }

    /// Writes the EncryptedResponse CBOR to `out` — the head (`["dcapi", {"enc": enc, "cipherText":`
    /// and the bstr head), then `deviceResponse` sealed in place — which holds exactly
    /// `encryptedHeadLength + deviceResponse.count + Nt` bytes. Keys in bytewise order: "enc" < "cipherText".
    private static func writeEncrypted(_ out: UnsafeMutableRawBufferPointer, deviceResponse: [UInt8], sender: inout HPKE.Sender) throws(AnnexCError) {
        let enc = sender.encapsulatedKey
        let ctLen = deviceResponse.count + HPKE.AEAD.aes128GCM.tagSize
        let p = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var n = 0
        func text(_ t: StaticString) { n += CBORWriter.writeText(UnsafeBufferPointer(start: t.utf8Start, count: t.utf8CodeUnitCount), at: p + n) }
        p[n] = 0x82; n += 1
        text("dcapi")
        p[n] = 0xa2; n += 1
        text("enc")
        n += CBORWriter.writeHead(major: 2, argument: UInt64(enc.count), at: p + n)
        enc.withUnsafeBufferPointer { (p + n).update(from: $0.baseAddress!, count: $0.count) }
        n += enc.count
        text("cipherText")
        n += CBORWriter.writeHead(major: 2, argument: UInt64(ctLen), at: p + n)
        let sealed: Bool = deviceResponse.withUnsafeBytes { pt in
            do { try sender.seal(pt, into: UnsafeMutableRawBufferPointer(rebasing: out[n...])); return true } catch { return false }
        }
        guard sealed else { throw AnnexCError(.sealingFailed, "HPKE seal failed") }
    }

    func seal(_ deviceResponse: [UInt8], encryptionInfo: EncryptionInfo, transcript: SessionTranscript, framing: RequestFraming,
              format: ResponseFormat) throws(AnnexCError) -> Data {
        // The key was validated (on the curve) when EncryptionInfo was parsed; reuse it.
        // Its SEC1 form `04 ‖ x ‖ y` is the one the validated point already holds.
        let key = encryptionInfo.recipientPublicKey.publicKey
        let pkR = HPKE.PublicKey(key: key, kem: .p256HKDFSHA256, serialized: key.rawRepresentation)
        var f = format
        if f == .automatic { f = framing == .dataObject ? .encryptedResponseCBOR : .androidEnvelope }
        // EncryptedResponse = ["dcapi", {"enc": bstr(65), "cipherText": bstr(ct ‖ tag)}]. Every length
        // is known before sealing, so the response is written once into the buffer that becomes the
        // returned Data: the CBOR head, then HPKE seals in place (iOS framing); for the JSON framings
        // the CBOR goes to a scratch buffer and base64url writes straight into the output.
        var sender: HPKE.Sender
        do {
            if let source = configuration.ephemeralKeySource {
                sender = try HPKE.Sender(suite: .annexC, recipient: pkR, info: transcript.bytes, ephemeralKey: source())
            } else {
                sender = try HPKE.Sender(suite: .annexC, recipient: pkR, info: transcript.bytes)
            }
        } catch {
            throw AnnexCError(.sealingFailed, "HPKE seal failed")
        }
        let ctLen = deviceResponse.count + HPKE.AEAD.aes128GCM.tagSize
        let cborLen = Self.encryptedHeadLength(enc: sender.encapsulatedKey.count, cipherText: ctLen) + ctLen
        switch f {
        case .encryptedResponseCBOR, .automatic:
            let out = UnsafeMutableRawBufferPointer.allocate(byteCount: cborLen, alignment: 1)
            do { try Self.writeEncrypted(out, deviceResponse: deviceResponse, sender: &sender) } catch { out.deallocate(); throw error }
            return Data(bytesNoCopy: out.baseAddress!, count: cborLen, deallocator: .custom { p, _ in p.deallocate() })
        case .responseJSON, .androidEnvelope:
            let prefix: StaticString = f == .responseJSON ? "{\"response\":\"" : "{\"protocol\":\"org-iso-mdoc\",\"data\":{\"response\":\""
            let suffix: StaticString = f == .responseJSON ? "\"}" : "\"}}"
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: cborLen, alignment: 1)
            defer { scratch.deallocate() }
            try Self.writeEncrypted(scratch, deviceResponse: deviceResponse, sender: &sender)
            let b64 = Base64URL.encodedLength(cborLen)
            let total = prefix.utf8CodeUnitCount + b64 + suffix.utf8CodeUnitCount
            let out = UnsafeMutableRawBufferPointer.allocate(byteCount: total, alignment: 1)
            let o = out.baseAddress!
            o.copyMemory(from: prefix.utf8Start, byteCount: prefix.utf8CodeUnitCount)
            Base64URL.encode(UnsafeRawBufferPointer(scratch), into: (o + prefix.utf8CodeUnitCount).assumingMemoryBound(to: UInt8.self))
            (o + prefix.utf8CodeUnitCount + b64).copyMemory(from: suffix.utf8Start, byteCount: suffix.utf8CodeUnitCount)
            return Data(bytesNoCopy: o, count: total, deallocator: .custom { p, _ in p.deallocate() })
        }
    }
}
