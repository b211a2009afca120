internal import CPKCS11
import CryptoCore
#if canImport(Glibc)
    import Glibc
#endif

/// Sessions, objects and signing: the Cryptoki calls a signer makes.
extension PKCS11Module {
    // MARK: Sessions and login

    /// Opens a serial session on `slot` (read-write when asked).
    package func openSession(slot: UInt, readWrite: Bool = false) throws(PKCS11Error) -> UInt {
        var session: CK_SESSION_HANDLE = 0
        let flags = CK_FLAGS(CKF_SERIAL_SESSION) | (readWrite ? CK_FLAGS(CKF_RW_SESSION) : 0)
        let rv = call { $0.C_OpenSession!(CK_SLOT_ID(slot), flags, nil, nil, &session) }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_OpenSession failed") }
        return UInt(session)
    }

    /// Closes a session; errors are ignored (the session is gone either way).
    package func closeSession(_ session: UInt) {
        _ = call { $0.C_CloseSession!(CK_SESSION_HANDLE(session)) }
    }

    /// Whether the session sees the user logged in.
    package func isUserLoggedIn(_ session: UInt) throws(PKCS11Error) -> Bool {
        var info = CK_SESSION_INFO()
        let rv = call { $0.C_GetSessionInfo!(CK_SESSION_HANDLE(session), &info) }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_GetSessionInfo failed") }
        return info.state == CK_STATE(CKS_RO_USER_FUNCTIONS) || info.state == CK_STATE(CKS_RW_USER_FUNCTIONS)
    }

    /// Logs the user (or the security officer) in; a nil PIN uses the token's protected path.
    /// "Already logged in" counts as success.
    package func login(_ session: UInt, securityOfficer: Bool = false, pin: UnsafeRawBufferPointer?) throws(PKCS11Error)
    {
        let user = securityOfficer ? CK_USER_TYPE(CKU_SO) : CK_USER_TYPE(CKU_USER)
        let rv = call {
            $0.C_Login!(
                CK_SESSION_HANDLE(session), user,
                UnsafeMutablePointer(mutating: pin?.baseAddress?.assumingMemoryBound(to: CK_UTF8CHAR.self)),
                CK_ULONG(pin?.count ?? 0))
        }
        switch rv {
        case CKR_OK, CKR_USER_ALREADY_LOGGED_IN: return
        case CKR_PIN_INCORRECT, CKR_PIN_INVALID, CKR_PIN_LEN_RANGE:
            throw PKCS11Error(.pinIncorrect, "the token refused the PIN", returnValue: rv)
        case CKR_PIN_LOCKED, CKR_PIN_EXPIRED:
            throw PKCS11Error(.pinLocked, "the token's user PIN is locked or expired", returnValue: rv)
        case CKR_USER_PIN_NOT_INITIALIZED:
            throw PKCS11Error(.pinIncorrect, "the token has no user PIN set", returnValue: rv)
        default: throw Self.classify(rv, "C_Login failed")
        }
    }

    /// Logs out of the token (every session of this process).
    package func logout(_ session: UInt) {
        if let f = functions.pointee.C_Logout { _ = call { _ in f(CK_SESSION_HANDLE(session)) } }
    }

    // MARK: Objects

    /// One attribute of a search or creation template.
    package enum Attribute: Sendable {
        case ulong(UInt, UInt)
        case bool(UInt, Bool)
        case bytes(UInt, [UInt8])

        var type: UInt {
            switch self {
            case .ulong(let t, _), .bool(let t, _), .bytes(let t, _): t
            }
        }
    }

    /// Attribute type constants the rest of the target names.
    package enum AttributeType {
        package static let objectClass = UInt(CKA_CLASS)
        package static let keyType = UInt(CKA_KEY_TYPE)
        package static let label = UInt(CKA_LABEL)
        package static let id = UInt(CKA_ID)
        package static let token = UInt(CKA_TOKEN)
        package static let isPrivate = UInt(CKA_PRIVATE)
        package static let sensitive = UInt(CKA_SENSITIVE)
        package static let extractable = UInt(CKA_EXTRACTABLE)
        package static let sign = UInt(CKA_SIGN)
        package static let verify = UInt(CKA_VERIFY)
        package static let ecParams = UInt(CKA_EC_PARAMS)
        package static let ecPoint = UInt(CKA_EC_POINT)
        package static let value = UInt(CKA_VALUE)
        package static let publicKeyInfo = UInt(CKA_PUBLIC_KEY_INFO)
    }

    /// Object class and key type constants.
    package enum ObjectClass {
        package static let publicKey = UInt(CKO_PUBLIC_KEY)
        package static let privateKey = UInt(CKO_PRIVATE_KEY)
        package static let ecKeyType = UInt(CKK_EC)
    }

    /// Calls `body` with a `CK_ATTRIBUTE` array for `template`, every value in one buffer that is
    /// cleansed afterwards (a template may hold a private scalar).
    func withTemplate<R>(
        _ template: [Attribute], _ body: (UnsafeMutablePointer<CK_ATTRIBUTE>?, CK_ULONG) -> R
    ) -> R {
        var size = 0
        for a in template {
            switch a {
            case .ulong: size += MemoryLayout<CK_ULONG>.stride
            case .bool: size += 1
            case .bytes(_, let b): size += b.count
            }
        }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 8)
        defer {
            SecureBytes.cleanse(storage)
            storage.deallocate()
        }
        var attrs = [CK_ATTRIBUTE]()
        attrs.reserveCapacity(template.count)
        var offset = 0
        for a in template {
            let p = storage.baseAddress! + offset
            switch a {
            case .ulong(let t, let v):
                // Aligned: ulongs come first in every template we build, or the offset is re-aligned.
                let aligned = (offset + 7) & ~7
                let q = storage.baseAddress! + aligned
                q.storeBytes(of: CK_ULONG(v), as: CK_ULONG.self)
                attrs.append(CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(t), pValue: q, ulValueLen: CK_ULONG(8)))
                offset = aligned + 8
            case .bool(let t, let v):
                p.storeBytes(of: v ? CK_BBOOL(CK_TRUE) : CK_BBOOL(CK_FALSE), as: CK_BBOOL.self)
                attrs.append(CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(t), pValue: p, ulValueLen: 1))
                offset += 1
            case .bytes(let t, let b):
                b.withUnsafeBytes {
                    if let s = $0.baseAddress, !b.isEmpty { p.copyMemory(from: s, byteCount: b.count) }
                }
                attrs.append(CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(t), pValue: p, ulValueLen: CK_ULONG(b.count)))
                offset += b.count
            }
        }
        return attrs.withUnsafeMutableBufferPointer { body($0.baseAddress, CK_ULONG($0.count)) }
    }

    /// The handles of objects matching `template` (at most `limit`; one more found is reported as
    /// `limit + 1` handles so a caller can tell "ambiguous").
    package func findObjects(_ session: UInt, _ template: [Attribute], limit: Int = 8) throws(PKCS11Error) -> [UInt] {
        let s = CK_SESSION_HANDLE(session)
        var rv = withTemplate(template) { t, n in call { $0.C_FindObjectsInit!(s, t, n) } }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_FindObjectsInit failed") }
        defer { _ = call { $0.C_FindObjectsFinal!(s) } }
        var handles = [CK_OBJECT_HANDLE](repeating: 0, count: limit + 1)
        var found: CK_ULONG = 0
        rv = handles.withUnsafeMutableBufferPointer { b in
            call { $0.C_FindObjects!(s, b.baseAddress, CK_ULONG(b.count), &found) }
        }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_FindObjects failed") }
        return handles.prefix(Int(min(found, CK_ULONG(limit + 1)))).map { UInt($0) }
    }

    /// The values of `types` on `object`; nil for an attribute the object does not have, may not
    /// reveal (sensitive), or holds more than `maxLength` bytes of.
    package func attributes(_ session: UInt, object: UInt, _ types: [UInt], maxLength: Int = 1024) throws(PKCS11Error)
        -> [UInt: [UInt8]]
    {
        var out = [UInt: [UInt8]]()
        for t in types {
            // One attribute per call: a module answers a template with one unavailable attribute
            // with an error for the whole call.
            var buffer = [UInt8](repeating: 0, count: maxLength)
            var length: CK_ULONG = 0
            let rv = buffer.withUnsafeMutableBytes { b -> CK_RV in
                var a = CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(t), pValue: b.baseAddress, ulValueLen: CK_ULONG(b.count))
                let rv = call { $0.C_GetAttributeValue!(CK_SESSION_HANDLE(session), CK_OBJECT_HANDLE(object), &a, 1) }
                length = a.ulValueLen
                return rv
            }
            switch rv {
            case CKR_OK:
                guard length != CK_ULONG.max, length <= CK_ULONG(maxLength) else { continue }
                buffer.removeLast(maxLength - Int(length))
                out[t] = buffer
            case CKR_ATTRIBUTE_SENSITIVE, CKR_ATTRIBUTE_TYPE_INVALID, CKR_BUFFER_TOO_SMALL:
                continue
            default:
                throw Self.classify(rv, "C_GetAttributeValue failed")
            }
        }
        return out
    }

    // MARK: Signing

    /// `CKM_ECDSA` over `digest` with `key`: the raw `r ‖ s` the token returns (at most 132 bytes).
    package func signECDSA(_ session: UInt, key: UInt, digest: UnsafeRawBufferPointer) throws(PKCS11Error) -> [UInt8] {
        let s = CK_SESSION_HANDLE(session)
        var mechanism = CK_MECHANISM(mechanism: CK_MECHANISM_TYPE(CKM_ECDSA), pParameter: nil, ulParameterLen: 0)
        var rv = call { $0.C_SignInit!(s, &mechanism, CK_OBJECT_HANDLE(key)) }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_SignInit failed") }
        var signature = [UInt8](repeating: 0, count: 132)
        var length = CK_ULONG(signature.count)
        rv = signature.withUnsafeMutableBufferPointer { out in
            call {
                $0.C_Sign!(
                    s, UnsafeMutablePointer(mutating: digest.baseAddress!.assumingMemoryBound(to: CK_BYTE.self)),
                    CK_ULONG(digest.count), out.baseAddress, &length)
            }
        }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_Sign failed") }
        guard length <= CK_ULONG(signature.count) else {
            throw PKCS11Error(.tokenFailed, "the token returned a signature longer than the buffer")
        }
        signature.removeLast(signature.count - Int(length))
        return signature
    }
}
