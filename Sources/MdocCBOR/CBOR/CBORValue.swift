/// An owned CBOR value tree, for building structures to encode and for tests. Parsing never needs
/// it: `CBORItem` views the input directly.
public indirect enum CBORValue: Hashable, Sendable {
    /// Major type 0.
    case unsigned(UInt64)
    /// Major type 1, by its argument n: the value is −1 − n (so `.negative(0)` is −1).
    case negative(UInt64)
    /// A byte string.
    case bytes([UInt8])
    /// A text string.
    case text(String)
    /// An array.
    case array([CBORValue])
    /// A map, in the order given (the writer sorts keys when encoding).
    case map([MapEntry])
    /// A tagged item.
    case tagged(UInt64, CBORValue)
    /// A simple value other than false/true/null/undefined.
    case simple(UInt8)
    /// `true` / `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// `undefined`.
    case undefined
    /// A float (encoded in its shortest exact width).
    case float(Double)
    /// Pre-encoded CBOR spliced verbatim when written.
    case encoded([UInt8])

    /// One key/value pair of a map.
    public struct MapEntry: Hashable, Sendable {
        /// The key; any CBOR value (ISO 18013-5 structures use text or small integers).
        public var key: CBORValue
        /// The value stored under `key`.
        public var value: CBORValue
        /// Creates a pair; encoding sorts a map's pairs into deterministic key order (RFC 8949 §4.2.1).
        public init(_ key: CBORValue, _ value: CBORValue) {
            self.key = key
            self.value = value
        }
    }

    /// An integer of either sign.
    public static func int(_ v: Int64) -> CBORValue {
        v >= 0 ? .unsigned(UInt64(v)) : .negative(UInt64(-1 - v))
    }

    /// `#6.24(bstr .cbor value)`.
    public static func embedded(_ value: CBORValue) -> CBORValue {
        .tagged(24, .bytes(value.encoded()))
    }

    /// The deterministic encoding (RFC 8949 §4.2.1) of the value.
    public func encoded() -> [UInt8] {
        var w = CBORWriter()
        w.write(self)
        return w.bytes
    }

    /// Builds an owned copy of a decoded item (indefinite lengths become definite).
    public init(_ item: CBORItem) {
        switch item.type {
        case .unsignedInt: self = .unsigned(item.argument)
        case .negativeInt: self = .negative(item.argument)
        case .byteString: self = .bytes(item.byteStringValue ?? [])
        case .textString: self = .text(item.stringValue ?? "")
        case .array: self = .array(item.children.map { CBORValue($0) })
        case .map: self = .map(item.mapEntries.map { MapEntry(CBORValue($0.key), CBORValue($0.value)) })
        case .tag: self = .tagged(item.argument, CBORValue(item.tagContent!))
        case .simple:
            switch item.argument {
            case 20: self = .bool(false)
            case 21: self = .bool(true)
            case 22: self = .null
            case 23: self = .undefined
            default: self = .simple(UInt8(item.argument))
            }
        case .float: self = .float(item.doubleValue ?? .nan)
        }
    }
}
