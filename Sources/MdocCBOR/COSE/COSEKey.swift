package import CryptoCore

/// A COSE_Key (RFC 9052 §7, RFC 9053 §7): EC2 on P-256/P-384/P-521, or OKP Ed25519/X25519/X448.
/// Construction validates it completely: coordinates of the exact size and a point on the curve.
public struct COSEKey: Sendable, Hashable {
    /// COSE key types (label 1).
    public enum KeyType: Int64, Sendable, Hashable {
        /// Octet key pair.
        case okp = 1
        /// Elliptic curve with x and y.
        case ec2 = 2
    }

    /// COSE elliptic curves (label -1).
    public enum Curve: Int64, Sendable, Hashable, CaseIterable {
        /// NIST P-256.
        case p256 = 1
        /// NIST P-384.
        case p384 = 2
        /// NIST P-521.
        case p521 = 3
        /// X25519 (OKP).
        case x25519 = 4
        /// X448 (OKP).
        case x448 = 5
        /// Ed25519 (OKP).
        case ed25519 = 6

        /// Coordinate (EC2) or key (OKP) length in bytes.
        public var coordinateSize: Int {
            switch self {
            case .p256: 32
            case .p384: 48
            case .p521: 66
            case .x25519, .ed25519: 32
            case .x448: 56
            }
        }

        /// The key type this curve belongs to.
        public var keyType: KeyType {
            switch self {
            case .p256, .p384, .p521: .ec2
            default: .okp
            }
        }

        var cryptoKind: KeyKind {
            switch self {
            case .p256: .ec(.p256)
            case .p384: .ec(.p384)
            case .p521: .ec(.p521)
            case .x25519: .x25519
            case .x448: .x448
            case .ed25519: .ed25519
            }
        }
    }

    /// COSE key type (label 1), implied by the curve: EC2 for P-curves, OKP for Ed25519/X25519.
    public var keyType: KeyType { curve.keyType }
    /// COSE curve (label -1); EC2 keys are checked on this curve at construction.
    public let curve: Curve
    /// x coordinate (EC2) or the public key (OKP).
    public let x: [UInt8]
    /// y coordinate (EC2 only).
    public let y: [UInt8]?
    /// Key identifier (label 2), if present.
    public let keyID: [UInt8]?

    let validated: PublicKeyBox

    /// Creates an EC2 key from its coordinates; throws unless they are of the right size and on the curve.
    public init(curve: Curve, x: [UInt8], y: [UInt8], keyID: [UInt8]? = nil) throws(COSEError) {
        guard curve.keyType == .ec2, case .ec(let c) = curve.cryptoKind else {
            throw .invalidKey("curve is not an EC2 curve")
        }
        guard x.count == c.coordinateSize, y.count == c.coordinateSize else { throw .invalidKey("coordinate length") }
        do {
            validated = PublicKeyBox(try PublicKey(curve: c, x: x, y: y))
        } catch {
            throw .invalidKey("point not on curve")
        }
        self.curve = curve
        self.x = x
        self.y = y
        self.keyID = keyID
    }

    /// Creates an OKP key (Ed25519, X25519, X448) from its public bytes.
    public init(okp curve: Curve, x: [UInt8], keyID: [UInt8]? = nil) throws(COSEError) {
        guard curve.keyType == .okp else { throw .invalidKey("curve is not an OKP curve") }
        guard x.count == curve.coordinateSize else { throw .invalidKey("key length") }
        do {
            validated = PublicKeyBox(try PublicKey(kind: curve.cryptoKind, raw: x))
        } catch {
            throw .invalidKey("invalid OKP key")
        }
        self.curve = curve
        self.x = x
        self.y = nil
        self.keyID = keyID
    }

    init(publicKey: PublicKey) {
        switch publicKey.kind {
        case .ec(let c):
            let (px, py) = publicKey.coordinates!
            self.curve = c == .p256 ? .p256 : c == .p384 ? .p384 : .p521
            self.x = px
            self.y = py
        case .ed25519, .x25519, .x448:
            self.curve = publicKey.kind == .ed25519 ? .ed25519 : publicKey.kind == .x25519 ? .x25519 : .x448
            self.x = publicKey.rawRepresentation
            self.y = nil
        }
        self.keyID = nil
        self.validated = PublicKeyBox(publicKey)
    }

    /// Parses and validates a COSE_Key map. Unknown labels are ignored; a private key (label -4) is
    /// refused, since a COSE_Key received from a peer must be public.
    public init(_ item: CBORItem) throws(COSEError) {
        guard item.type == .map else { throw .malformed("COSE_Key is not a map") }
        var kty: Int64?
        var crv: Int64?
        // The coordinates as ranges of the buffer (plain values: no optional slices to destroy).
        var x: Range<Int>?
        var y: Range<Int>?
        var kid: [UInt8]?
        // The entries are walked on the tape: an item is made only for the value of a label read here.
        let storage = item.storage
        var key = item.index + 1
        for _ in 0..<Int(item.node.argument) {
            let k = storage[key]
            let valueIndex = key + Int(k.span)
            key = valueIndex + Int(storage[valueIndex].span)
            // Integer labels only (an unsigned one past Int64.max is no label of ours either).
            guard k.type == .unsignedInt || k.type == .negativeInt, k.argument <= UInt64(Int64.max) else { continue }
            let label = k.type == .unsignedInt ? Int64(k.argument) : -1 - Int64(k.argument)
            guard label >= -4 && label <= 2 && label != 0 else { continue }
            let v = CBORItem(storage: storage, index: valueIndex)
            switch label {
            case 1:
                kty = v.int64Value
                if kty == nil { throw .invalidKey("kty") }
            case 2:
                kid = v.byteStringValue
                if kid == nil { throw .invalidKey("kid") }
            case -1:
                crv = v.int64Value
                if crv == nil { throw .invalidKey("crv") }
            case -2:
                guard v.type == .byteString, !v.isIndefiniteLength else { throw .invalidKey("x is not a byte string") }
                x = v.contentRange
            case -3:
                if v.boolValue != nil { throw .invalidKey("compressed point") }
                guard v.type == .byteString, !v.isIndefiniteLength else { throw .invalidKey("y is not a byte string") }
                y = v.contentRange
            case -4: throw .invalidKey("private key material in a public COSE_Key")
            default: continue
            }
        }
        guard let kty, let type = KeyType(rawValue: kty) else { throw .invalidKey("unsupported kty") }
        guard let crv, let curve = Curve(rawValue: crv), curve.keyType == type else {
            throw .invalidKey("unsupported crv")
        }
        guard let x else { throw .invalidKey("missing x") }
        if type == .ec2 {
            guard let y else { throw .invalidKey("missing y") }
            try self.init(curve: curve, x: Array(storage.bytes[x]), y: Array(storage.bytes[y]), keyID: kid)
        } else {
            guard y == nil else { throw .invalidKey("y on an OKP key") }
            try self.init(okp: curve, x: Array(storage.bytes[x]), keyID: kid)
        }
    }

    /// Parses a COSE_Key from its encoding.
    public init(encoded bytes: [UInt8]) throws(COSEError) {
        do {
            let doc = try CBORDocument(decoding: bytes)
            try self.init(doc.root)
        } catch let e as COSEError {
            throw e
        } catch {
            throw .cbor(error as! CBORError)
        }
    }

    /// The key as a CBOR value (labels 1, -1, -2, -3, and 2 when a key ID is set).
    public var cborValue: CBORValue {
        var entries: [CBORValue.MapEntry] = [
            .init(.int(1), .int(keyType.rawValue)),
            .init(.int(-1), .int(curve.rawValue)),
            .init(.int(-2), .bytes(x)),
        ]
        if let y { entries.append(.init(.int(-3), .bytes(y))) }
        if let keyID { entries.append(.init(.int(2), .bytes(keyID))) }
        return .map(entries)
    }

    /// Deterministic encoding of the key.
    public func encoded() -> [UInt8] { cborValue.encoded() }

    /// The key as PEM text (`-----BEGIN PUBLIC KEY-----`, a SubjectPublicKeyInfo), for an issuer.
    public func pem() throws(COSEError) -> String {
        do { return try publicKey.pem() } catch {
            throw .invalidKey("the key cannot be encoded as SubjectPublicKeyInfo")
        }
    }

    /// Keys are equal when their type, curve and public bytes are equal.
    public static func == (a: COSEKey, b: COSEKey) -> Bool {
        a.curve == b.curve && a.x == b.x && a.y == b.y && a.keyID == b.keyID
    }

    /// Hashes the public bytes.
    public func hash(into h: inout Hasher) {
        h.combine(curve)
        h.combine(x)
        h.combine(y)
        h.combine(keyID)
    }

    /// The validated OpenSSL key (package-internal: lets other modules reuse it without a re-import).
    package var publicKey: PublicKey { validated.key }
}

/// Holds the validated OpenSSL key behind a COSEKey (kept out of the public API).
final class PublicKeyBox: Sendable {
    let key: PublicKey
    init(_ key: PublicKey) { self.key = key }
}
