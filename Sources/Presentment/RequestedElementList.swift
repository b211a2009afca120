internal import CryptoCore

/// A front end's requested elements (a DCQL query's claims) kept as their UTF-8 bytes in one buffer,
/// the way an ItemsRequest is read in place: the planner matches them against a credential's element
/// index by bytes, and a `String` is made per element only when the consent model shows them
/// (`elements`). Equal elements (same namespace and identifier bytes) are listed once.
///
/// Fast code (unsafe: the one byte buffer and its element offsets are read in place and handed to the
/// planner as views; every access stays within the offsets `append` recorded; tested by the DCQL and
/// ItemsRequest suites and the fuzzers).
package struct RequestedElementList: Sendable {
    private struct Entry: Sendable {
        let nameSpace: Range<Int>
        let identifier: Range<Int>
        /// `ElementIndex.hash` of the identifier bytes: repeated elements are found without a byte
        /// compare per entry.
        let identifierHash: UInt64
        let intentToRetain: Bool?
    }

    /// The namespaces' and identifiers' bytes, back to back in the first `used` bytes (a namespace
    /// equal to the previous entry's is stored once); the rest is room, zeroed. (Names are copied into
    /// room made once, not appended: an append of a few bytes costs several times their copy.)
    private var bytes: [UInt8] = []
    private var used = 0
    private var entries: [Entry] = []

    /// An empty list with room for `capacity` elements.
    package init(capacity: Int = 0) {
        entries.reserveCapacity(capacity)
        bytes = ByteArrays.zeros(count: capacity * 32)
    }

    /// Copies `name` after the stored bytes (making room when there is not enough): its range.
    private mutating func store(_ name: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        let start = used
        let end = used + name.count
        if end > bytes.count {
            bytes.append(contentsOf: repeatElement(0, count: max(end, 2 * bytes.count) - bytes.count))
        }
        if let base = name.baseAddress {
            bytes.withUnsafeMutableBufferPointer {
                $0.baseAddress!.advanced(by: start).update(from: base, count: name.count)
            }
        }
        used = end
        return start..<end
    }

    /// The elements as `RequestedElement`s (the form a consent model and a test write).
    package init(_ elements: [RequestedElement]) {
        self.init(capacity: elements.count)
        for e in elements {
            withUTF8Bytes(e.id.nameSpace) { ns in
                withUTF8Bytes(e.id.identifier) { id in
                    _ = append(
                        nameSpace: UnsafeRawBufferPointer(ns), identifier: UnsafeRawBufferPointer(id),
                        intentToRetain: e.intentToRetain)
                }
            }
        }
    }

    /// The number of distinct elements.
    package var count: Int { entries.count }

    /// Lists the element named by `nameSpace` and `identifier` (UTF-8, as the request spells them)
    /// unless an equal one is listed already: its position, and whether it was added now (an equal
    /// element keeps the `intentToRetain` it was first listed with).
    package mutating func append(
        nameSpace ns: UnsafeRawBufferPointer, identifier id: UnsafeRawBufferPointer, intentToRetain: Bool?
    ) -> (position: Int, added: Bool) {
        let nameSpace = ns.assumingMemoryBound(to: UInt8.self)
        let identifier = id.assumingMemoryBound(to: UInt8.self)
        let hash = ElementIndex.hash(identifier)
        let found: Int? = bytes.withUnsafeBufferPointer { b in
            for (k, e) in entries.enumerated()
            where e.identifierHash == hash && ElementIndex.equal(b, e.identifier, identifier)
                && ElementIndex.equal(b, e.nameSpace, nameSpace)
            {
                return k
            }
            return nil
        }
        if let found { return (found, false) }
        let nsRange: Range<Int>
        if let last = entries.last,
            bytes.withUnsafeBufferPointer({ ElementIndex.equal($0, last.nameSpace, nameSpace) })
        {
            nsRange = last.nameSpace
        } else {
            nsRange = store(nameSpace)
        }
        let idRange = store(identifier)
        entries.append(
            Entry(nameSpace: nsRange, identifier: idRange, identifierHash: hash, intentToRetain: intentToRetain))
        return (entries.count - 1, true)
    }

    /// The `intentToRetain` of the element at `position` (nil: the request did not say).
    package func intentToRetain(at position: Int) -> Bool? { entries[position].intentToRetain }

    /// Calls `body` with each element's namespace and identifier bytes and IntentToRetain (false when
    /// not said), in list order.
    @inline(__always)
    func forEachElement(
        _ body: (_ nameSpace: UnsafeBufferPointer<UInt8>, _ identifier: UnsafeBufferPointer<UInt8>, _ intent: Bool)
            -> Void
    ) {
        bytes.withUnsafeBufferPointer { b in
            for e in entries {
                body(
                    UnsafeBufferPointer(rebasing: b[e.nameSpace]), UnsafeBufferPointer(rebasing: b[e.identifier]),
                    e.intentToRetain ?? false)
            }
        }
    }

    /// The elements with their names as `String`s, in list order.
    package var elements: [RequestedElement] {
        bytes.withUnsafeBufferPointer { b in
            var out = [RequestedElement]()
            out.reserveCapacity(entries.count)
            var lastRange: Range<Int>?
            var lastNameSpace = ""
            for e in entries {
                // Entries sharing a namespace share its bytes, and then one String.
                if e.nameSpace != lastRange {
                    lastNameSpace = String(decoding: UnsafeBufferPointer(rebasing: b[e.nameSpace]), as: UTF8.self)
                    lastRange = e.nameSpace
                }
                out.append(
                    RequestedElement(
                        id: ElementID(
                            lastNameSpace,
                            String(decoding: UnsafeBufferPointer(rebasing: b[e.identifier]), as: UTF8.self)),
                        intentToRetain: e.intentToRetain))
            }
            return out
        }
    }
}
