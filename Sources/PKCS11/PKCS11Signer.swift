import CryptoCore
import MdocCBOR
import Synchronization

/// A device key held in a PKCS#11 token: signs with `CKM_ECDSA` over the message's SHA-2 digest
/// (SHA-256 for P-256, SHA-384 for P-384, SHA-512 for P-521), computed here, so only the digest goes
/// to the token. The private key is never read or extracted.
///
/// Resolving the URI loads the module, finds the one matching token and private key, reads the public
/// key the token holds beside it (the public key object with the same `CKA_ID`, else the same
/// label, else the private key's `CKA_PUBLIC_KEY_INFO`), checks it is a valid point on the key's
/// curve, and signs a probe to prove the private key matches it. Signing takes a session from the
/// token's pool; a session or key handle that went stale (token re-inserted, login forgotten) is
/// replaced and the signature tried once more.
public final class PKCS11Signer: COSESigner {
    /// ES256, ES384 or ES512, by the key's curve.
    public let algorithm: COSEAlgorithm
    /// The public key the token holds for the private key.
    public let publicKey: COSEKey
    /// The URI the key was found by (its PIN source is re-read for each login).
    public let uri: PKCS11URI
    /// Where the module may be loaded from (again, in a forked child).
    private let moduleDirectories: [String]
    /// The token's session pool and the key's handle in this process: a forked child finds its own
    /// (`ForkGuard.generation`), never using its parent's sessions or handles.
    private let binding: LockedValue<Binding>
    private let digest: DigestAlgorithm
    private let coordinateSize: Int

    private struct Binding {
        var generation: UInt64
        var sessions: TokenSessions
        var keyHandle: UInt
    }

    /// Finds the key `uri` names and checks it (see the type's description).
    /// - Parameters:
    ///   - uri: the RFC 7512 URI of the private key (its module, token and object).
    ///   - moduleDirectories: the directories the URI's `module-path` may lie in (default:
    ///   `PKCS11ModuleDirectories.system`); a module elsewhere is refused (`moduleUnavailable`).
    public init(uri: PKCS11URI, moduleDirectories: [String] = PKCS11ModuleDirectories.system) throws(PKCS11Error) {
        self.uri = uri
        self.moduleDirectories = moduleDirectories
        let sessions = try TokenSessions.forURI(uri, moduleDirectories: moduleDirectories)
        let (handle, curve, key) = try sessions.withSession(pin: uri.pinSource) { (s) throws(PKCS11Error) in
            try Self.findKey(uri, sessions.module, s)
        }
        binding = LockedValue(Binding(generation: sessions.module.generation, sessions: sessions, keyHandle: handle))
        publicKey = key
        coordinateSize = curve.coordinateSize
        switch curve {
        case .p384: (algorithm, digest) = (.es384, .sha384)
        case .p521: (algorithm, digest) = (.es512, .sha512)
        default: (algorithm, digest) = (.es256, .sha256)
        }
        // Prove the private key is the public key's other half.
        let probe = Array("mdoc-respond PKCS#11 device key check".utf8)
        let signature: [UInt8]
        do { signature = try sign(probe) } catch {
            throw PKCS11Error(.tokenFailed, "the key could not sign a check message: \(error.detail)")
        }
        guard (try? COSESign1.verify(signature: signature, over: probe, algorithm: algorithm, key: key)) != nil
        else {
            throw PKCS11Error(
                .keyMismatch, "the private key does not sign for the public key the token holds beside it")
        }
    }

    /// Convenience: parses `reference` and resolves it.
    public convenience init(uri reference: String) throws(PKCS11Error) {
        try self.init(uri: PKCS11URI(parsing: reference))
    }

    /// Signs `message`: raw `r ‖ s`, each the curve's size. Token failures are `signingFailed`; a
    /// token that is gone or will not log in is `keyUnavailable`; the detail names the step and the
    /// token's return value, never the PIN or the URI.
    public func sign(_ message: [UInt8]) throws(COSEError) -> [UInt8] {
        var hashed = [UInt8](repeating: 0, count: digest.outputSize)
        hashed.withUnsafeMutableBytes { digest.hash(message, into: $0) }
        for attempt in 0..<2 {
            do {
                let (sessions, handle) = try current()
                let signature = try sessions.withSession(pin: uri.pinSource) { (s) throws(PKCS11Error) in
                    try hashed.withPKCS11Bytes { (d) throws(PKCS11Error) in
                        try sessions.module.signECDSA(s, key: handle, digest: d)
                    }
                }
                guard signature.count == 2 * coordinateSize else {
                    throw COSEError(.signingFailed, "PKCS#11: the token returned a signature of the wrong length")
                }
                return signature
            } catch let e as PKCS11Error {
                if attempt == 0 && PKCS11Module.isStale(e) {
                    // The token forgot our sessions or handles: start over with fresh ones.
                    do {
                        let (sessions, _) = try current()
                        sessions.drain()
                        let handle = try sessions.withSession(pin: uri.pinSource) { (s) throws(PKCS11Error) in
                            try Self.findKey(uri, sessions.module, s).handle
                        }
                        binding.withLock { if $0.sessions === sessions { $0.keyHandle = handle } }
                    } catch {
                        throw Self.coseError(error)
                    }
                    continue
                }
                throw Self.coseError(e)
            } catch let e as COSEError {
                throw e
            } catch {
                throw COSEError(.signingFailed, "PKCS#11: signing failed")
            }
        }
        throw COSEError(.signingFailed, "PKCS#11: the token kept refusing the session")
    }

    /// This process's session pool and key handle: the ones found at resolution, or, in a forked child
    /// (the first call after a fork), the module initialised again, a new pool and the key found anew.
    private func current() throws(PKCS11Error) -> (TokenSessions, UInt) {
        let generation = ForkGuard.generation
        let known = binding.withLock { b in b.generation == generation ? (b.sessions, b.keyHandle) : nil }
        if let known { return known }
        let sessions = try TokenSessions.forURI(uri, moduleDirectories: moduleDirectories)
        let handle = try sessions.withSession(pin: uri.pinSource) { (s) throws(PKCS11Error) in
            try Self.findKey(uri, sessions.module, s).handle
        }
        binding.withLock { $0 = Binding(generation: generation, sessions: sessions, keyHandle: handle) }
        return (sessions, handle)
    }

    /// The COSE error for a token error: an absent token or a login that fails is `keyUnavailable`,
    /// anything else `signingFailed`.
    static func coseError(_ e: PKCS11Error) -> COSEError {
        switch e.code {
        case .tokenAbsent, .pinUnavailable, .pinIncorrect, .pinLocked, .keyNotFound, .keyAmbiguous, .moduleUnavailable,
            .notAModule, .moduleFailed, .invalidURI, .keyUnsuitable, .keyMismatch:
            return COSEError(.keyUnavailable, "PKCS#11: " + e.message)
        case .tokenFailed:
            return COSEError(.signingFailed, "PKCS#11: " + e.message)
        }
    }

    // MARK: Finding the key

    /// The one private key object `uri` names, its curve and its public key.
    static func findKey(_ uri: PKCS11URI, _ module: PKCS11Module, _ session: UInt) throws(PKCS11Error)
        -> (handle: UInt, curve: COSEKey.Curve, publicKey: COSEKey)
    {
        typealias A = PKCS11Module.AttributeType
        var template: [PKCS11Module.Attribute] = [.ulong(A.objectClass, PKCS11Module.ObjectClass.privateKey)]
        if let label = uri.object { template.append(.bytes(A.label, Array(label.utf8))) }
        if let id = uri.id { template.append(.bytes(A.id, id)) }
        let found = try module.findObjects(session, template, limit: 1)
        guard let handle = found.first else {
            throw PKCS11Error(.keyNotFound, "no private key in the token matches the URI")
        }
        guard found.count == 1 else { throw PKCS11Error(.keyAmbiguous, "more than one private key matches the URI") }
        let attrs = try module.attributes(
            session, object: handle, [A.keyType, A.sign, A.ecParams, A.id, A.label, A.publicKeyInfo])
        guard let type = attrs[A.keyType], type.count == MemoryLayout<UInt>.size,
            type.withUnsafeBytes({ $0.loadUnaligned(as: UInt.self) }) == PKCS11Module.ObjectClass.ecKeyType
        else { throw PKCS11Error(.keyUnsuitable, "the key is not an EC key") }
        guard attrs[A.sign] == [1] else { throw PKCS11Error(.keyUnsuitable, "the key is not allowed to sign") }
        guard let params = attrs[A.ecParams], let curve = curve(ecParams: params) else {
            throw PKCS11Error(.keyUnsuitable, "the key's curve is not P-256, P-384 or P-521")
        }
        // The public half: the public key object with the same id (else label), else the private
        // key's own SubjectPublicKeyInfo.
        var point: [UInt8]?
        var publicTemplate: [PKCS11Module.Attribute] = [.ulong(A.objectClass, PKCS11Module.ObjectClass.publicKey)]
        if let id = attrs[A.id], !id.isEmpty {
            publicTemplate.append(.bytes(A.id, id))
        } else if let label = attrs[A.label], !label.isEmpty {
            publicTemplate.append(.bytes(A.label, label))
        }
        if publicTemplate.count == 2 {
            let publics = try module.findObjects(session, publicTemplate, limit: 1)
            guard publics.count <= 1 else {
                throw PKCS11Error(.keyAmbiguous, "more than one public key object has the private key's id or label")
            }
            if let p = publics.first {
                let pa = try module.attributes(session, object: p, [A.ecParams, A.ecPoint])
                guard pa[A.ecParams].flatMap(Self.curve(ecParams:)) == curve else {
                    throw PKCS11Error(.keyMismatch, "the public key object is on another curve than the private key")
                }
                point = pa[A.ecPoint].flatMap { uncompressedPoint(ecPoint: $0, curve: curve) }
            }
        }
        if point == nil, let spki = attrs[A.publicKeyInfo] {
            point = uncompressedPoint(subjectPublicKeyInfo: spki, curve: curve)
        }
        guard let point else {
            throw PKCS11Error(.keyUnsuitable, "the token holds no readable public key for the private key")
        }
        let n = curve.coordinateSize
        guard let key = try? COSEKey(curve: curve, x: Array(point[1...n]), y: Array(point[(n + 1)...])) else {
            throw PKCS11Error(.keyUnsuitable, "the token's public key is not a valid point on its curve")
        }
        return (handle, curve, key)
    }

    /// `CKA_EC_PARAMS` (a DER named-curve OID) for the three NIST curves.
    static let curveParameters: [(COSEKey.Curve, [UInt8])] = [
        (.p256, [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]),
        (.p384, [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]),
        (.p521, [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x23]),
    ]

    static func curve(ecParams: [UInt8]) -> COSEKey.Curve? {
        curveParameters.first { $0.1 == ecParams }?.0
    }

    static func ecParams(_ curve: COSEKey.Curve) -> [UInt8]? {
        curveParameters.first { $0.0 == curve }?.1
    }

    /// The uncompressed point in a `CKA_EC_POINT`: a DER OCTET STRING around it (as the standard
    /// says), or the bare point (as some tokens give it).
    static func uncompressedPoint(ecPoint v: [UInt8], curve: COSEKey.Curve) -> [UInt8]? {
        let size = 1 + 2 * curve.coordinateSize
        if v.count == size, v[0] == 0x04 { return v }
        let header: [UInt8] = size < 128 ? [0x04, UInt8(size)] : [0x04, 0x81, UInt8(size)]
        guard v.count == header.count + size, Array(v.prefix(header.count)) == header, v[header.count] == 0x04 else {
            return nil
        }
        return Array(v[header.count...])
    }

    /// The uncompressed point at the end of an EC SubjectPublicKeyInfo whose algorithm names `curve`.
    static func uncompressedPoint(subjectPublicKeyInfo spki: [UInt8], curve: COSEKey.Curve) -> [UInt8]? {
        let size = 1 + 2 * curve.coordinateSize
        guard let params = ecParams(curve), spki.count > size + 2 + params.count,
            spki[spki.count - size - 1] == 0x00, spki[spki.count - size] == 0x04,
            spki.firstRange(of: params) != nil
        else { return nil }
        return Array(spki.suffix(size))
    }
}

extension Array where Element == UInt8 {
    /// The first occurrence of `needle`.
    fileprivate func firstRange(of needle: [UInt8]) -> Range<Int>? {
        guard !needle.isEmpty, needle.count <= count else { return nil }
        for i in 0...(count - needle.count) where self[i..<(i + needle.count)].elementsEqual(needle) {
            return i..<(i + needle.count)
        }
        return nil
    }
}

/// The directories a PKCS#11 module may be loaded from. A context snapshot's `pkcs11:` URIs are
/// trusted input: their `module-path` names a library whose constructor runs when it is loaded, so
/// only libraries in directories the host names are loaded at all.
public enum PKCS11ModuleDirectories {
    /// The system's PKCS#11 module directories (p11-kit's, on Debian `/usr/lib/<triplet>/pkcs11`) and
    /// SoftHSM2's: the default everywhere a module may be loaded.
    public static let system = [
        "/usr/lib/x86_64-linux-gnu/pkcs11", "/usr/lib/aarch64-linux-gnu/pkcs11", "/usr/lib/pkcs11", "/usr/lib64/pkcs11",
        "/usr/local/lib/pkcs11", "/usr/lib/softhsm", "/usr/lib/x86_64-linux-gnu/softhsm",
        "/usr/lib/aarch64-linux-gnu/softhsm", "/usr/lib64/softhsm",
    ]
}
