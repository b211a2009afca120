internal import CryptoCore
import MdocCBOR

/// A read-only map from `ElementID` to an index, built once per credential when the context loads
/// and probed for every requested element. Open addressing over a multiplicative hash of the
/// identifier's UTF-8 bytes; keys are kept as bytes in one flat buffer and compared in line (`ShortBytes.equal`).
/// Cheaper than `Dictionary`'s seeded SipHash plus `String` equality, and allocation-free on lookup.
/// The table is built from the holder's own credential, so a request can only probe it, never shape
/// it (no flooding concern). Identifiers compare as encoded bytes, exactly as the MSO digests them.
///
/// Fast code (unsafe: the slot table and the key bytes live in flat buffers probed in line; every
/// probe is bounded by the table's mask and every key compare by its recorded length; tested with keys
/// of every length around the hash's words, misses, repeats and every byte position of the hash:
/// CredentialContextTests).
struct ElementIndex: Sendable {
    private struct Entry: Sendable {
        let identifier: Range<Int>
        let nameSpace: Range<Int>
        let value: Int
        let hash: UInt64
    }
    private let bytes: [UInt8]
    private let entries: [Entry]
    /// Slot → entry index + 1 (0 = empty); capacity is a power of two at least twice the count.
    private let slots: [Int32]
    private let mask: Int

    /// Builds the index, and says whether a key was repeated (a repeated key keeps its first value).
    static func make(_ pairs: [(ElementID, Int)]) -> (index: ElementIndex, repeated: Bool) {
        var repeated = false
        let index = ElementIndex(pairs, repeated: &repeated)
        return (index, repeated)
    }

    /// Builds the index; a repeated key keeps its first value and sets `repeated`. Keys are read from
    /// the strings' own UTF-8 storage (no array per identifier) into one buffer sized up front.
    private init(_ pairs: [(ElementID, Int)], repeated: inout Bool) {
        var capacity = 8
        while capacity < pairs.count * 2 { capacity <<= 1 }
        var slots = [Int32](repeating: 0, count: capacity)
        var entries = [Entry]()
        var bytes = [UInt8]()
        entries.reserveCapacity(pairs.count)
        bytes.reserveCapacity(pairs.reduce(0) { $0 + $1.0.identifier.utf8.count + $1.0.nameSpace.utf8.count })
        let mask = capacity - 1
        for (id, value) in pairs {
            let added = withUTF8Bytes(id.identifier) { ident in
                withUTF8Bytes(id.nameSpace) { ns in
                    let h = Self.hash(ident)
                    var s = Int(truncatingIfNeeded: h) & mask
                    while slots[s] != 0 {
                        let e = entries[Int(slots[s]) - 1]
                        let same =
                            e.hash == h
                            && bytes.withUnsafeBufferPointer {
                                Self.equal($0, e.identifier, ident) && Self.equal($0, e.nameSpace, ns)
                            }
                        if same { return false }
                        s = (s + 1) & mask
                    }
                    let i0 = bytes.count
                    bytes.append(contentsOf: ident)
                    let n0 = bytes.count
                    bytes.append(contentsOf: ns)
                    entries.append(Entry(identifier: i0..<n0, nameSpace: n0..<bytes.count, value: value, hash: h))
                    slots[s] = Int32(entries.count)
                    return true
                }
            }
            if !added { repeated = true }
        }
        self.bytes = bytes
        self.entries = entries
        self.slots = slots
        self.mask = mask
    }

    /// The value stored for `id`, if any.
    subscript(id: ElementID) -> Int? {
        withUTF8Bytes(id.identifier) { ib in withUTF8Bytes(id.nameSpace) { nb in probe(ib, nb) } }
    }

    /// The value stored for the element with these identifier and namespace bytes, if any.
    func probe(_ ident: UnsafeBufferPointer<UInt8>, _ ns: UnsafeBufferPointer<UInt8>) -> Int? {
        let h = Self.hash(ident)
        var s = Int(truncatingIfNeeded: h) & mask
        return bytes.withUnsafeBufferPointer { kb in
            slots.withUnsafeBufferPointer { sl in
                entries.withUnsafeBufferPointer { en in
                    while sl[s] != 0 {
                        let e = en[Int(sl[s]) - 1]
                        if e.hash == h && Self.equal(kb, e.identifier, ident) && Self.equal(kb, e.nameSpace, ns) {
                            return e.value
                        }
                        s = (s + 1) & mask
                    }
                    return nil
                }
            }
        }
    }

    /// Whether `kb[r]` holds exactly the bytes of `x` (also `RequestedElementList`'s compare).
    @inline(__always)
    static func equal(_ kb: UnsafeBufferPointer<UInt8>, _ r: Range<Int>, _ x: UnsafeBufferPointer<UInt8>)
        -> Bool
    {
        r.count == x.count
            && (x.count == 0 || ShortBytes.equal(kb.baseAddress! + r.lowerBound, x.baseAddress!, count: x.count))
    }

    /// A multiplicative hash of the identifier's bytes, eight at a time, the last (partial) word read
    /// as the eight bytes ending the identifier and a shorter identifier with two overlapping loads (no
    /// byte loop; equal bytes give equal hashes, which is all the table needs). The namespace is
    /// compared on a hit but not hashed: one identifier rarely lives in two namespaces of one
    /// credential. Also how `RequestedElementList` finds a repeated element.
    static func hash(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let n = b.count
        var h: UInt64 = 0x9e37_79b9_7f4a_7c15 ^ UInt64(n)
        guard let p = b.baseAddress, n > 0 else { return h }
        let raw = UnsafeRawPointer(p)
        var i = 0
        while i + 8 < n {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xff51_afd7_ed55_8ccd
            h ^= h >> 29
            i += 8
        }
        let tail: UInt64
        if n >= 8 {
            tail = raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4 {
            tail =
                UInt64(raw.loadUnaligned(as: UInt32.self))
                | UInt64(raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)) << 32
        } else {
            tail = UInt64(p[0]) | UInt64(p[n >> 1]) << 8 | UInt64(p[n - 1]) << 16
        }
        h = (h ^ tail) &* 0xc4ce_b9fe_1a85_ec53
        return h ^ (h >> 32)
    }
}

#if canImport(Glibc)
    import Glibc
#endif
