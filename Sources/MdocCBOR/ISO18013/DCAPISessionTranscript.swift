internal import CryptoCore

/// The SessionTranscript both Digital Credentials API protocols use for an mdoc (ISO/IEC 18013-7
/// Annex C §C.3; OpenID4VP 1.0 B.2.6.2): `[null, null, [name, SHA-256(info)]]`. No DeviceEngagement
/// and no reader key (the browser carries the session); the handover is the protocol's name and the
/// hash of its info array, `info` being CBOR the protocol defines (`[encryptionInfo, origin]` for
/// "dcapi", `[origin, nonce, jwkThumbprint]` for "OpenID4VPDCAPIHandover").
package enum DCAPISessionTranscript {
    /// The encoded SessionTranscript for the handover `name` over the encoded `info`, written once into
    /// the array returned (the digest straight into its place).
    package static func encoded(handover name: StaticString, info: [UInt8]) -> [UInt8] {
        let nameBytes = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        let count = 4 + CBORWriter.headLength(UInt64(nameBytes.count)) + nameBytes.count + 2 + 32
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, written in
            let p = buffer.baseAddress!
            var n = CBORWriter.writeHead(major: 4, argument: 3, at: p)
            n += CBORWriter.writeHead(major: 7, argument: 22, at: p + n)  // null: DeviceEngagementBytes
            n += CBORWriter.writeHead(major: 7, argument: 22, at: p + n)  // null: EReaderKeyBytes
            n += CBORWriter.writeHead(major: 4, argument: 2, at: p + n)  // the handover
            n += CBORWriter.writeText(nameBytes, at: p + n)
            n += CBORWriter.writeHead(major: 2, argument: 32, at: p + n)
            DigestAlgorithm.sha256.hash(info, into: UnsafeMutableRawBufferPointer(start: p + n, count: 32))
            written = n + 32
        }
    }

    /// The handover's info array as the protocol defines it, written with `write` (which writes the
    /// array's elements) after an array head of `count`.
    package static func info(count: Int, capacity: Int, _ write: (inout CBORWriter) -> Void) -> [UInt8] {
        var w = CBORWriter(capacity: capacity)
        w.writeArrayHeader(count: count)
        write(&w)
        return w.takeBytes()
    }
}
