/// Builders for the detached payloads that reader and device sign (ISO/IEC 18013-5 §9.1.3, §9.1.4).
/// The SessionTranscript and the ItemsRequestBytes / DeviceNameSpacesBytes are spliced in verbatim.
public enum MdocAuthentication {
    /// `ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication", SessionTranscript, ItemsRequestBytes])`.
    @inlinable
    public static func readerAuthenticationBytes<S: Collection<UInt8>, I: Collection<UInt8>>(
        sessionTranscript: S, itemsRequestBytes: I
    ) -> [UInt8] {
        // Inlinable, and the parts taken as arrays (no copy when they are arrays): unspecialized, this
        // resolved a collection's iterator type at run time, a scan of the binary's conformances
        // (~0.3M instructions) on a process's first signed request.
        let transcript = Array(sessionTranscript)
        let items = Array(itemsRequestBytes)
        var inner = CBORWriter(capacity: 32 + transcript.count + items.count)
        inner.writeArrayHeader(count: 3)
        inner.writeText("ReaderAuthentication")
        inner.writeRaw(transcript)
        inner.writeRaw(items)
        var w = CBORWriter(capacity: inner.bytes.count + 8)
        w.writeTag(24)
        w.writeBytes(inner.bytes)
        return w.bytes
    }

    /// `ReaderAuthenticationAllBytes = #6.24(bstr .cbor ["ReaderAuthenticationAll", SessionTranscript,
    /// [* ItemsRequestBytes], DeviceRequestInfoBytes / null])`.
    @inlinable
    public static func readerAuthenticationAllBytes<S: Collection<UInt8>>(
        sessionTranscript: S, itemsRequestBytes: [ArraySlice<UInt8>],
        deviceRequestInfoBytes: ArraySlice<UInt8>?
    ) -> [UInt8] {
        let transcript = Array(sessionTranscript)
        var inner = CBORWriter(capacity: 64 + transcript.count + itemsRequestBytes.reduce(0) { $0 + $1.count })
        inner.writeArrayHeader(count: 4)
        inner.writeText("ReaderAuthenticationAll")
        inner.writeRaw(transcript)
        inner.writeArrayHeader(count: itemsRequestBytes.count)
        for i in itemsRequestBytes { inner.writeRaw(i) }
        if let d = deviceRequestInfoBytes { inner.writeRaw(d) } else { inner.writeNull() }
        var w = CBORWriter(capacity: inner.bytes.count + 8)
        w.writeTag(24)
        w.writeBytes(inner.bytes)
        return w.bytes
    }

    /// `DeviceAuthenticationBytes = #6.24(bstr .cbor ["DeviceAuthentication", SessionTranscript, DocType, DeviceNameSpacesBytes])`.
    @inlinable
    public static func deviceAuthenticationBytes<S: Collection<UInt8>, N: Collection<UInt8>>(
        sessionTranscript: S, docType: String, deviceNameSpacesBytes: N
    ) -> [UInt8] {
        let transcript = Array(sessionTranscript)
        let nameSpaces = Array(deviceNameSpacesBytes)
        var w = CBORWriter(
            capacity: deviceAuthenticationLength(
                sessionTranscript: transcript, docType: docType, deviceNameSpacesBytes: nameSpaces))
        writeDeviceAuthentication(
            into: &w, sessionTranscript: transcript, docType: docType, deviceNameSpacesBytes: nameSpaces)
        return w.bytes
    }

    /// The length of DeviceAuthenticationBytes for these parts (so a caller can size one buffer for
    /// it and whatever surrounds it).
    public static func deviceAuthenticationLength(
        sessionTranscript: [UInt8], docType: String, deviceNameSpacesBytes: [UInt8]
    ) -> Int {
        let inner = innerDeviceAuthenticationLength(
            sessionTranscript: sessionTranscript, docType: docType, deviceNameSpacesBytes: deviceNameSpacesBytes)
        return 2 + CBORWriter.headLength(UInt64(inner)) + inner
    }

    private static func innerDeviceAuthenticationLength(
        sessionTranscript: [UInt8], docType: String, deviceNameSpacesBytes: [UInt8]
    ) -> Int {
        let docTypeLength = docType.utf8.count
        return 1 + 21 + sessionTranscript.count + CBORWriter.headLength(UInt64(docTypeLength)) + docTypeLength
            + deviceNameSpacesBytes.count
    }

    /// Writes DeviceAuthenticationBytes into `w`. Every length is known up front, so tag 24 and the
    /// bstr head go first and the DeviceAuthentication array straight after them.
    public static func writeDeviceAuthentication(
        into w: inout CBORWriter, sessionTranscript: [UInt8], docType: String, deviceNameSpacesBytes: [UInt8]
    ) {
        let inner = innerDeviceAuthenticationLength(
            sessionTranscript: sessionTranscript, docType: docType, deviceNameSpacesBytes: deviceNameSpacesBytes)
        w.writeTag(24)
        w.writeHead(major: 2, argument: UInt64(inner))
        w.writeArrayHeader(count: 4)
        w.writeText("DeviceAuthentication")
        w.writeRaw(sessionTranscript)
        w.writeText(docType)
        w.writeRaw(deviceNameSpacesBytes)
    }

    /// `DeviceNameSpacesBytes` for an empty DeviceNameSpaces map: `d8 18 41 a0`.
    public static let emptyDeviceNameSpacesBytes: [UInt8] = [0xd8, 0x18, 0x41, 0xa0]
}

/// What `Document.checkAuthentication` found wrong with a presented document.
public enum DocumentAuthenticationFault: Error, Sendable, Hashable {
    /// A disclosed item does not match its digest in the MSO.
    case digest
    /// The document carries no device signature (deviceMac is not used over the DC API).
    case noDeviceSignature
    /// The device signature does not verify with the MSO's device key.
    case deviceSignature
    /// An attached payload differs from the DeviceAuthenticationBytes of this session.
    case deviceAuthenticationMismatch
}

extension Document {
    /// Checks what binds a presented document to its issuer and to this session (ISO/IEC 18013-5
    /// §9.1.2.4, §9.1.3): every disclosed item against its digest in `mso`, then the device signature
    /// over DeviceAuthenticationBytes (detached, or attached and equal to them) with the MSO's device
    /// key. The wallet's self-check and the reader's verification both run this.
    public func checkAuthentication(mso: MobileSecurityObject, sessionTranscript: [UInt8])
        throws(DocumentAuthenticationFault)
    {
        do { try issuerSigned.checkValueDigests(against: mso) } catch { throw .digest }
        guard case .signature(let sig) = deviceSigned.deviceAuth else { throw .noDeviceSignature }
        let dab = MdocAuthentication.deviceAuthenticationBytes(
            sessionTranscript: sessionTranscript, docType: docType, deviceNameSpacesBytes: deviceSigned.nameSpacesBytes)
        do { try sig.verify(key: mso.deviceKey, detachedPayload: sig.payload == nil ? dab : nil) } catch {
            throw .deviceSignature
        }
        if let attached = sig.payload, !attached.elementsEqual(dab) { throw .deviceAuthenticationMismatch }
    }
}
