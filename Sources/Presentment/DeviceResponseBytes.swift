import MdocCBOR

/// A DeviceResponse as the builder wrote it: its own bytes, with every piece of at least
/// `referenceThreshold` bytes that is copied verbatim (a released IssuerSignedItemBytes such as a
/// portrait, a ZkDocument) left where it is and referred to. The front ends hand the pieces in order to
/// the cipher (Annex C) or the base64url encoder (OpenID4VP), so a large element is read once, by the
/// step that transforms it, instead of being copied into the response first; `contiguous` joins them
/// where one buffer is needed (the self-check, the prover's input).
///
/// Fast code (unsafe: the pieces are handed out as views of the builder's bytes and the issuer's kept
/// bytes, valid only during the call that receives them; DeviceResponseBytesTests checks the pieces'
/// order and count, and every front end's answer is opened and verified by the peers).
package struct DeviceResponseBytes: Sendable {
    /// Verbatim pieces of at least this many bytes are referred to rather than copied.
    package static let referenceThreshold = 4096

    /// A piece of `source` (its `range`) that comes at offset `at` of the builder's own bytes.
    struct Reference: Sendable {
        let at: Int
        let source: [UInt8]
        let range: Range<Int>
    }

    /// The builder's bytes, with the references' places between them.
    let own: [UInt8]
    /// In ascending `at` order.
    let references: [Reference]
    /// The whole DeviceResponse's length in bytes.
    package let count: Int

    init(own: [UInt8], references: [Reference]) {
        self.own = own
        self.references = references
        count = references.reduce(own.count) { $0 + $1.range.count }
    }

    /// A DeviceResponse held in one buffer.
    package init(_ bytes: [UInt8]) {
        self.init(own: bytes, references: [])
    }

    /// Calls `body` with each piece of the DeviceResponse in order (empty pieces are skipped); the
    /// pieces add up to `count` bytes.
    package func forEachPiece(_ body: (UnsafeRawBufferPointer) -> Void) {
        own.withUnsafeBytes { o in
            var k = 0
            for r in references {
                if r.at > k { body(UnsafeRawBufferPointer(rebasing: o[k..<r.at])) }
                r.source.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[r.range])) }
                k = r.at
            }
            if k < o.count { body(UnsafeRawBufferPointer(rebasing: o[k...])) }
        }
    }

    /// The DeviceResponse in one buffer.
    package var contiguous: [UInt8] {
        if references.isEmpty { return own }
        var out = [UInt8]()
        out.reserveCapacity(count)
        forEachPiece { out.append(contentsOf: $0) }
        return out
    }
}

/// The builder's output: a `CBORWriter` for its own bytes and the references it left in place of
/// large verbatim pieces.
struct DeviceResponseOutput {
    var writer: CBORWriter
    var references: [DeviceResponseBytes.Reference] = []

    init(capacity: Int) { writer = CBORWriter(capacity: capacity) }

    /// Writes `source[range]`, encoded CBOR taken verbatim: copied when short, referred to otherwise.
    mutating func writeVerbatim(_ source: [UInt8], _ range: Range<Int>) {
        if range.count >= DeviceResponseBytes.referenceThreshold {
            references.append(.init(at: writer.bytes.count, source: source, range: range))
        } else {
            source.withUnsafeBufferPointer { writer.writeRaw(UnsafeBufferPointer(rebasing: $0[range])) }
        }
    }

    consuming func finish() -> DeviceResponseBytes {
        DeviceResponseBytes(own: writer.takeBytes(), references: references)
    }
}
