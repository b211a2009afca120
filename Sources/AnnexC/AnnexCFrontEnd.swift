#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import DCAPIFraming
import MdocCBOR
@_spi(FrontEnd) import Presentment
import WebEncoding

/// The Annex C front end (ISO/IEC 18013-7 Annex C, `org-iso-mdoc`): reads an entry's `data` into the
/// EncryptionInfo, the `dcapi` SessionTranscript and the DeviceRequest, verifies every reader
/// signature and applies the holder's trust policy; answers a settled plan as one DeviceResponse sealed
/// with HPKE to the reader's key. Everything else is the engine's (`PresentmentEngine`).
package struct AnnexCFrontEnd: DCAPIFrontEnd {
    /// The protocol identifier of the Digital Credentials API registry.
    package static let protocolIdentifier = "org-iso-mdoc"
    /// The pre-publication identifier, answered when `AnnexCSettings.acceptLegacyProtocolAlias` is set.
    package static let legacyAlias = "org.iso.mdoc"

    /// Annex C's own settings.
    package let settings: AnnexCSettings

    package init(settings: AnnexCSettings) { self.settings = settings }

    package var protocolIdentifiers: [String] {
        settings.acceptLegacyProtocolAlias ? [Self.protocolIdentifier, Self.legacyAlias] : [Self.protocolIdentifier]
    }

    package static func isBareData(_ json: JSONNode) -> Bool { AnnexCRequestData.isBareData(json) }

    /// Checks, in order: the entry's `data`, EncryptionInfo and its key, the SessionTranscript, the
    /// DeviceRequest and its bounds, a required zero-knowledge proof, every reader signature, then the
    /// holder's trust policy.
    package func check(
        _ entry: RequestEntry, origin: Origin, in environment: CheckEnvironment, trace: inout CheckTrace?
    )
        throws(PresentmentError) -> CheckedRequest<AnnexCDetails>
    {
        let limits = environment.limits
        let data = try AnnexCRequestData(entry, maxBytes: limits.maxRequestBytes)
        // EncryptionInfo and the transcript read the string's bytes (decoded in place; no `String`).
        var parsed: EncryptionInfo?
        var made: AnnexCSessionTranscript?
        var failure: PresentmentError?
        var dcapiInfo: [UInt8]?
        let recording = trace != nil
        _ = data.encryptionInfo.withStringBytes { text in
            do throws(PresentmentError) { parsed = try EncryptionInfo(base64url: text) } catch {
                failure = error
                return
            }
            made = AnnexCSessionTranscript(encryptionInfo: text, origin: origin)
            if recording { dcapiInfo = AnnexCSessionTranscript.dcapiInfo(encryptionInfo: text, origin: origin) }
        }
        if let failure { throw failure }
        guard let encryptionInfo = parsed, let transcript = made else {
            throw PresentmentError(AnnexCRule.encryptionInfoNotString)
        }
        if trace != nil {
            trace!.record("dcapiInfo", dcapiInfo!)
            trace!.record("SessionTranscript", transcript.bytes)
        }
        var decoded: [UInt8]?
        _ = data.deviceRequest.withStringBytes { decoded = Base64URL.decode($0) }
        guard let drBytes = decoded else { throw PresentmentError(AnnexCRule.deviceRequestNotBase64URL) }
        trace?.record("DeviceRequest", drBytes)
        let options = CBORDecodingOptions(
            maxDepth: settings.maxNestingDepth, maxItems: settings.maxDataItems, maxInputSize: limits.maxRequestBytes)
        let request: DeviceRequest
        do { request = try DeviceRequest(encoded: drBytes, options: options) } catch {
            if error.code == .cbor, let c = error.cbor,
                [.itemLimitExceeded, .depthLimitExceeded, .inputTooLarge].contains(c.code)
            {
                throw PresentmentError(AnnexCRule.deviceRequestOverLimits, underlying: c)
            }
            throw PresentmentError(AnnexCRule.deviceRequestInvalid, underlying: error)
        }
        guard request.docRequests.count <= limits.maxDocuments else {
            throw PresentmentError(AnnexCRule.tooManyDocRequests)
        }
        guard Self.elementReferences(request) <= limits.maxRequestedElements else {
            throw PresentmentError(AnnexCRule.tooManyElements)
        }
        let authentication = try ReaderAuthenticator(trust: environment.trust).authenticate(
            request: request, transcript: transcript, consent: environment.consent, trace: &trace)
        return CheckedRequest(
            CheckedEntry(
                // The entry named this protocol, its legacy alias, or nothing (a bare data object).
                protocolIdentifier: entry.names(protocol: Self.legacyAlias)
                    ? Self.legacyAlias : Self.protocolIdentifier,
                queries: DocumentQuery.prepare(request, maxSetSize: settings.maxAlternativeSetSize),
                documentSets: DocumentSetRule.of(request), sessionTranscript: transcript.bytes,
                authentication: authentication),
            details: AnnexCDetails(
                framing: entry.framing, sessionTranscript: transcript, encryptionInfo: encryptionInfo,
                deviceRequest: request))
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

    /// One DeviceResponse for every answered document.
    package var responseLayout: ResponseLayout { .single(missingElements: settings.missingElements) }

    /// Seals the DeviceResponse with HPKE to the reader's key and frames it (`Sealing.swift`).
    package func answer(_ responses: [BuiltResponse], details: AnnexCDetails, format: ResponseFormat)
        throws(PresentmentError) -> Data
    {
        try seal(responses[0].response, details: details, format: format)
    }
}
