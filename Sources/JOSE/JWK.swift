import CryptoCore
import WebEncoding

/// The elliptic curves a JWK may name here (RFC 7518 §6.2.1.1).
package enum JWKCurve: String, Sendable, Hashable, CaseIterable {
    case p256 = "P-256"
    case p384 = "P-384"
    case p521 = "P-521"

    /// The curve for CryptoCore.
    package var curve: Curve {
        switch self {
        case .p256: .p256
        case .p384: .p384
        case .p521: .p521
        }
    }

    /// The name, as static text (compared in place against a JWK's `crv`).
    package var name: StaticString {
        switch self {
        case .p256: "P-256"
        case .p384: "P-384"
        case .p521: "P-521"
        }
    }

    /// The JWK curve name of a CryptoCore curve.
    package init(_ curve: Curve) {
        switch curve {
        case .p256: self = .p256
        case .p384: self = .p384
        case .p521: self = .p521
        }
    }
}

/// An EC public JSON Web Key (RFC 7517, RFC 7518 §6.2), validated when it is made: `kty` "EC", a
/// known `crv`, `x` and `y` of exactly the curve's coordinate size (unpadded base64url) and a point
/// on the curve. Other key types are refused; a `d` member, if any, is never read here. Immutable, and
/// a class: a key is handed on from the request's metadata to the sealer, and a copy of a struct of
/// seven references retains and releases each of them.
package final class JWK: Sendable {
    /// The curve.
    package let curve: JWKCurve
    /// The point's coordinates, x then y, big-endian, each exactly the curve's size (one array).
    private let point: [UInt8]
    /// The x coordinate, big-endian, exactly the curve's size.
    package var x: [UInt8] { Array(point[..<(point.count / 2)]) }
    /// The y coordinate, big-endian, exactly the curve's size.
    package var y: [UInt8] { Array(point[(point.count / 2)...]) }
    /// `kid`, if given.
    package let keyID: String?
    /// `use` (`sig`, `enc`), if given.
    package let use: String?
    /// `alg`, if given.
    package let algorithm: String?
    /// The validated key.
    package let publicKey: PublicKey

    /// Reads a JWK object.
    /// - Throws: `malformed` for a missing or mistyped member, `invalidKey` for another key type,
    ///   an unknown curve, coordinates of the wrong size or a point off the curve.
    package convenience init(_ json: JSONValue) throws(JOSEError) {
        do { try self.init(try JSONDocument(json.serialized).root) } catch let e as JOSEError { throw e } catch {
            throw JOSEError(.malformed, "JWK is not JSON")
        }
    }

    /// Reads a JWK object from a parsed document (the request path).
    package init(_ json: JSONNode) throws(JOSEError) {
        guard json.isObject else { throw JOSEError(.malformed, "JWK is not a JSON object") }
        // kty, crv, x and y read as bytes in place (no `String` made for them).
        guard let kty = json["kty"], kty.isString else { throw JOSEError(.malformed, "JWK kty missing") }
        guard kty.spells("EC") else { throw JOSEError(.invalidKey, "JWK kty is not EC") }
        guard let crvName = json["crv"], crvName.isString else { throw JOSEError(.malformed, "JWK crv missing") }
        guard let crv = JWKCurve.allCases.first(where: { crvName.spells($0.name) }) else {
            throw JOSEError(.invalidKey, "JWK crv not supported")
        }
        let size = crv.curve.coordinateSize
        guard let xs = json["x"], xs.isString, let ys = json["y"], ys.isString else {
            throw JOSEError(.malformed, "JWK x or y missing")
        }
        // Both coordinates decoded into one array when their text has the curve's length (the usual
        // case); otherwise decoded alone, to tell text that is not base64url from the wrong size.
        var point = [UInt8](repeating: 0, count: 2 * size)
        var decoded = false
        point.withUnsafeMutableBytes { p in
            let encoded = Base64URL.encodedLength(size)
            _ = xs.withStringBytes { x in
                _ = ys.withStringBytes { y in
                    guard x.count == encoded, y.count == encoded else { return }
                    decoded =
                        Base64URL.decode(x, into: UnsafeMutableRawBufferPointer(rebasing: p[..<size]))
                        && Base64URL.decode(y, into: UnsafeMutableRawBufferPointer(rebasing: p[size...]))
                }
            }
        }
        if !decoded {
            var x: [UInt8]?
            var y: [UInt8]?
            _ = xs.withStringBytes { x = Base64URL.decode($0) }
            _ = ys.withStringBytes { y = Base64URL.decode($0) }
            guard let x, let y else { throw JOSEError(.malformed, "JWK x or y is not base64url") }
            guard x.count == size, y.count == size else {
                throw JOSEError(.invalidKey, "JWK coordinates are not the curve's size")
            }
            point = x + y
        }
        func optionalString(_ member: StaticString) throws(JOSEError) -> String? {
            guard let value = json[member] else { return nil }
            guard let s = value.string else { throw JOSEError(.malformed, "JWK \(member) is not a string") }
            return s
        }
        let kid = try optionalString("kid")
        let use = try optionalString("use")
        let alg = try optionalString("alg")
        do {
            publicKey = try point.withUnsafeBytes { p throws(CryptoError) in
                try PublicKey(
                    curve: crv.curve, x: UnsafeRawBufferPointer(rebasing: p[..<size]),
                    y: UnsafeRawBufferPointer(rebasing: p[size...]))
            }
        } catch {
            throw JOSEError(.invalidKey, "JWK point is not on the curve")
        }
        self.curve = crv
        self.point = point
        keyID = kid
        self.use = use
        algorithm = alg
    }

    /// The JWK of an EC public key.
    /// - Throws: `invalidKey` for a key that is not on P-256, P-384 or P-521.
    package init(publicKey: PublicKey, keyID: String? = nil, use: String? = nil, algorithm: String? = nil)
        throws(JOSEError)
    {
        guard case .ec(let c) = publicKey.kind, let xy = publicKey.coordinates else {
            throw JOSEError(.invalidKey, "not an EC key")
        }
        self.curve = JWKCurve(c)
        self.point = xy.x + xy.y
        self.keyID = keyID
        self.use = use
        self.algorithm = algorithm
        self.publicKey = publicKey
    }

    /// The RFC 7638 SHA-256 thumbprint: SHA-256 of the required members in lexicographic order,
    /// `{"crv":…,"kty":"EC","x":…,"y":…}`, without whitespace.
    package var thumbprint: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            thumbprint(into: UnsafeMutableRawBufferPointer(out))
            count = 32
        }
    }

    /// Writes the RFC 7638 SHA-256 thumbprint (32 bytes) into `out`, which must be exactly 32 bytes.
    package func thumbprint(into out: UnsafeMutableRawBufferPointer) {
        // `{"crv":"<crv>","kty":"EC","x":"<x>","y":"<y>"}`: the curve name and base64url need no
        // escaping, so the text is assembled in a stack buffer of its exact length.
        let name = curve.name
        let n = point.count / 2
        let xLength = Base64URL.encodedLength(n)
        let yLength = xLength
        let head: StaticString = "{\"crv\":\""
        let middle: StaticString = "\",\"kty\":\"EC\",\"x\":\""
        let between: StaticString = "\",\"y\":\""
        let tail: StaticString = "\"}"
        let count =
            head.utf8CodeUnitCount + name.utf8CodeUnitCount + middle.utf8CodeUnitCount + xLength
            + between.utf8CodeUnitCount + yLength + tail.utf8CodeUnitCount
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            let base = buffer.baseAddress!
            var at = 0
            func put(_ s: StaticString) {
                (base + at).initialize(from: s.utf8Start, count: s.utf8CodeUnitCount)
                at += s.utf8CodeUnitCount
            }
            put(head)
            put(name)
            put(middle)
            point.withUnsafeBytes { Base64URL.encode(UnsafeRawBufferPointer(rebasing: $0[..<n]), into: base + at) }
            at += xLength
            put(between)
            point.withUnsafeBytes { Base64URL.encode(UnsafeRawBufferPointer(rebasing: $0[n...]), into: base + at) }
            at += yLength
            put(tail)
            DigestAlgorithm.sha256.hash(UnsafeRawBufferPointer(buffer), into: out)
        }
    }

    /// Writes an EC public key's members, `{"kty":"EC","crv":…,"x":…,"y":…}` (as `json` without
    /// `kid`, `use` and `alg`): a JWE's `epk`. The coordinates are read from the key's own point
    /// encoding (no JWK or coordinate arrays made).
    /// - Throws: `JOSEError.invalidKey` when the key is not an EC key.
    package static func writePublicMembers(of key: PublicKey, into w: inout JSONWriter) throws(JOSEError) {
        guard case .ec(let c) = key.kind else { throw JOSEError(.invalidKey, "not an EC key") }
        let n = c.coordinateSize
        // The members before `x` are fixed per curve: written at once.
        switch JWKCurve(c) {
        case .p256: w.writeRaw("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":")
        case .p384: w.writeRaw("{\"kty\":\"EC\",\"crv\":\"P-384\",\"x\":")
        case .p521: w.writeRaw("{\"kty\":\"EC\",\"crv\":\"P-521\",\"x\":")
        }
        // 04 ‖ x ‖ y
        key.rawRepresentation.withUnsafeBytes { p in
            w.writeBase64URLString(UnsafeRawBufferPointer(rebasing: p[1..<(1 + n)]))
            w.writeRaw(",\"y\":")
            w.writeBase64URLString(UnsafeRawBufferPointer(rebasing: p[(1 + n)...]))
        }
        w.writeRaw("}")
    }

    /// The public JWK as JSON: `kty`, `crv`, `x`, `y`, then `kid`, `use`, `alg` when set.
    package var json: JSONValue {
        var m: [(String, JSONValue)] = [
            ("kty", .string("EC")), ("crv", .string(curve.rawValue)), ("x", .string(Base64URL.encode(x))),
            ("y", .string(Base64URL.encode(y))),
        ]
        if let keyID { m.append(("kid", .string(keyID))) }
        if let use { m.append(("use", .string(use))) }
        if let algorithm { m.append(("alg", .string(algorithm))) }
        return .object(m)
    }

    /// Reads the private key of an EC JWK with `d` (a verifier's or test's own key), checking that it
    /// matches `x` and `y`.
    /// - Throws: as `init(_:)`, and `invalidKey` for a missing, mis-sized or non-matching `d`.
    package static func privateKey(_ json: JSONValue) throws(JOSEError) -> PrivateKey {
        let pub = try JWK(json)
        guard let ds = json["d"]?.string, let d = Base64URL.decode(ds),
            d.count == pub.curve.curve.coordinateSize
        else { throw JOSEError(.invalidKey, "JWK d missing or not the curve's size") }
        let key: PrivateKey
        do { key = try PrivateKey(curve: pub.curve.curve, scalar: d) } catch {
            throw JOSEError(.invalidKey, "JWK d is not a valid scalar")
        }
        guard key.publicKey.rawRepresentation == pub.publicKey.rawRepresentation else {
            throw JOSEError(.invalidKey, "JWK d does not match x and y")
        }
        return key
    }
}
