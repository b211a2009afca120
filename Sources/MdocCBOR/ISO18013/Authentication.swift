/// Builders for the detached payloads that reader and device sign (ISO/IEC 18013-5 §9.1.3, §9.1.4).
/// The SessionTranscript and the ItemsRequestBytes / DeviceNameSpacesBytes are spliced in verbatim.
public enum MdocAuthentication {
    /// `ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication", SessionTranscript, ItemsRequestBytes])`.
    public static func readerAuthenticationBytes<S: Collection<UInt8>, I: Collection<UInt8>>(sessionTranscript: S, itemsRequestBytes: I) -> [UInt8] {
        var inner = CBORWriter(capacity: 32 + sessionTranscript.count + itemsRequestBytes.count)
        inner.writeArrayHeader(count: 3)
        inner.writeText("ReaderAuthentication")
        inner.writeRaw(sessionTranscript)
        inner.writeRaw(itemsRequestBytes)
        var w = CBORWriter(capacity: inner.bytes.count + 8)
        w.writeEmbedded(inner.bytes)
        return w.bytes
    }

    /// `ReaderAuthenticationAllBytes = #6.24(bstr .cbor ["ReaderAuthenticationAll", SessionTranscript,
    /// [* ItemsRequestBytes], DeviceRequestInfoBytes / null])`.
    public static func readerAuthenticationAllBytes<S: Collection<UInt8>>(sessionTranscript: S, itemsRequestBytes: [ArraySlice<UInt8>],
                                                                         deviceRequestInfoBytes: ArraySlice<UInt8>?) -> [UInt8] {
        var inner = CBORWriter(capacity: 64 + sessionTranscript.count + itemsRequestBytes.reduce(0) { $0 + $1.count })
        inner.writeArrayHeader(count: 4)
        inner.writeText("ReaderAuthenticationAll")
        inner.writeRaw(sessionTranscript)
        inner.writeArrayHeader(count: itemsRequestBytes.count)
        for i in itemsRequestBytes { inner.writeRaw(i) }
        if let d = deviceRequestInfoBytes { inner.writeRaw(d) } else { inner.writeNull() }
        var w = CBORWriter(capacity: inner.bytes.count + 8)
        w.writeEmbedded(inner.bytes)
        return w.bytes
    }

    /// `DeviceAuthenticationBytes = #6.24(bstr .cbor ["DeviceAuthentication", SessionTranscript, DocType, DeviceNameSpacesBytes])`.
    public static func deviceAuthenticationBytes<S: Collection<UInt8>, N: Collection<UInt8>>(sessionTranscript: S, docType: String, deviceNameSpacesBytes: N) -> [UInt8] {
        // Every length is known up front, so tag 24 and the bstr head go first and the
        // DeviceAuthentication array is written straight after them: one buffer.
        func head(_ n: Int) -> Int { n < 24 ? 1 : n <= 0xff ? 2 : n <= 0xffff ? 3 : n <= 0xffff_ffff ? 5 : 9 }
        let docTypeLength = docType.utf8.count
        let innerLength = 1 + 1 + 20 + sessionTranscript.count + head(docTypeLength) + docTypeLength + deviceNameSpacesBytes.count
        var w = CBORWriter(capacity: 2 + head(innerLength) + innerLength)
        w.writeTag(24)
        w.writeHead(major: 2, argument: UInt64(innerLength))
        w.writeArrayHeader(count: 4)
        w.writeText("DeviceAuthentication")
        w.writeRaw(sessionTranscript)
        w.writeText(docType)
        w.writeRaw(deviceNameSpacesBytes)
        return w.bytes
    }

    /// `DeviceNameSpacesBytes` for an empty DeviceNameSpaces map: `d8 18 41 a0`.
    public static let emptyDeviceNameSpacesBytes: [UInt8] = [0xd8, 0x18, 0x41, 0xa0]
}
