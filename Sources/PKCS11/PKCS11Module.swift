internal import CPKCS11
import CryptoCore
#if canImport(Glibc)
    import Glibc
#endif

/// A PKCS#11 module loaded into this process: the one place the project calls Cryptoki.
///
/// A module is `dlopen`ed and `C_Initialize`d once per process per file (with `CKF_OS_LOCKING_OK`, so
/// the module does its own locking and calls on different sessions run concurrently) and is never
/// finalized or unloaded: other code in the process may be using it, and handles stay valid for the
/// process's life. A module that cannot lock for itself (`CKR_CANT_LOCK`) is initialised without
/// threads and every call into it is serialized here.
///
/// Everything else in the target is plain Swift over these methods; no other file imports CPKCS11.
package final class PKCS11Module: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init; `serial` is a lock.
    /// The path the module was loaded from (resolved, absolute).
    package let path: String
    private let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    /// Held around every call when the module cannot lock for itself; nil otherwise.
    private let serial: CriticalSection?
    /// Whether this process's `C_Initialize` call is the one that initialised the module.
    package let initialisedHere: Bool
    /// The process generation (`ForkGuard.generation`) it was initialised in: a forked child loads and
    /// initialises the module again, never using its parent's state.
    package let generation: UInt64

    /// The modules loaded so far, by resolved path.
    private static let loaded = LockedValue<[String: PKCS11Module]>([:])

    /// Loads (once per process) the module at `path`: an absolute path whose resolved file lies
    /// directly in one of `allowedDirectories` (resolved too; a snapshot's `module-path` is trusted
    /// input, and a library's constructor runs on load, so only directories the host names are
    /// admitted), a regular file owned by root or by this user and not writable by group or others
    /// (checked on the opened descriptor), in a directory likewise, so no one else can swap it
    /// between the check and the load.
    package static func load(path: String, allowedDirectories: [String] = PKCS11ModuleDirectories.system)
        throws(PKCS11Error)
        -> PKCS11Module
    {
        guard path.hasPrefix("/"), path.utf8.count <= 4096, !path.utf8.contains(0) else {
            throw PKCS11Error(.moduleUnavailable, "the module path must be absolute")
        }
        guard let resolved = realpath(path, nil) else {
            throw PKCS11Error(.moduleUnavailable, "the module file does not exist")
        }
        let real = String(cString: resolved)
        free(resolved)
        let parent = String(real[..<(real.lastIndex(of: "/") ?? real.startIndex)])
        let admitted = allowedDirectories.contains { dir in
            guard let r = realpath(dir, nil) else { return false }
            defer { free(r) }
            return String(cString: r) == (parent.isEmpty ? "/" : parent)
        }
        guard admitted else {
            throw PKCS11Error(.moduleUnavailable, "the module is not in a configured PKCS#11 module directory")
        }
        return try loaded.withLock { (modules) throws(PKCS11Error) -> PKCS11Module in
            if let m = modules[real], m.generation == ForkGuard.generation { return m }
            let m = try PKCS11Module(resolvedPath: real, directory: parent)
            modules[real] = m
            return m
        }
    }

    private init(resolvedPath real: String, directory: String) throws(PKCS11Error) {
        var dst = stat()
        guard lstat(directory, &dst) == 0, dst.st_mode & S_IFMT == S_IFDIR, dst.st_uid == 0 || dst.st_uid == geteuid(),
            dst.st_mode & 0o022 == 0
        else {
            throw PKCS11Error(
                .moduleUnavailable, "the module directory is writable by group or others, or owned by another user")
        }
        let fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw PKCS11Error(.moduleUnavailable, "the module file cannot be opened") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            throw PKCS11Error(.moduleUnavailable, "the module path is not a regular file")
        }
        guard st.st_uid == 0 || st.st_uid == geteuid(), st.st_mode & 0o022 == 0 else {
            throw PKCS11Error(
                .moduleUnavailable, "the module file is writable by group or others, or owned by another user")
        }
        // Loaded through the descriptor checked above, not by path: a file swapped in at the path after
        // the check (by whoever can write the directory) is never the one loaded.
        guard let handle = DescriptorLoading.open(descriptor: fd, flags: RTLD_NOW | RTLD_LOCAL) else {
            throw PKCS11Error(.moduleUnavailable, "the module file is not a loadable library")
        }
        guard let entry = dlsym(handle, "C_GetFunctionList") else {
            dlclose(handle)
            throw PKCS11Error(.notAModule, "the library has no C_GetFunctionList")
        }
        var list: UnsafeMutablePointer<CK_FUNCTION_LIST>? = nil
        let rv = mdoc_p11_get_function_list(entry, &list)
        guard rv == CKR_OK, let list else {
            throw PKCS11Error(.notAModule, "C_GetFunctionList failed", returnValue: rv)
        }
        let f = list.pointee
        guard f.version.major == 2 || f.version.major == 3 else {
            throw PKCS11Error(.notAModule, "the module's Cryptoki major version is not 2 or 3")
        }
        guard f.C_Initialize != nil, f.C_GetInfo != nil, f.C_GetSlotList != nil, f.C_GetSlotInfo != nil,
            f.C_GetTokenInfo != nil, f.C_OpenSession != nil, f.C_CloseSession != nil, f.C_GetSessionInfo != nil,
            f.C_Login != nil, f.C_FindObjectsInit != nil, f.C_FindObjects != nil, f.C_FindObjectsFinal != nil,
            f.C_GetAttributeValue != nil, f.C_SignInit != nil, f.C_Sign != nil
        else {
            throw PKCS11Error(.notAModule, "the module's function list is incomplete")
        }
        functions = list
        path = real
        generation = ForkGuard.generation
        // The module does its own locking with the operating system's primitives.
        var args = CK_C_INITIALIZE_ARGS(
            CreateMutex: nil, DestroyMutex: nil, LockMutex: nil, UnlockMutex: nil, flags: CK_FLAGS(CKF_OS_LOCKING_OK),
            pReserved: nil)
        var init_rv = ForkGuard.around {
            withUnsafeMutablePointer(to: &args) { f.C_Initialize!(UnsafeMutableRawPointer($0)) }
        }
        var serialized = false
        if init_rv == CKR_CANT_LOCK {
            // The module cannot lock: initialise it single-threaded and serialize every call here.
            init_rv = ForkGuard.around { f.C_Initialize!(nil) }
            serialized = true
        }
        switch init_rv {
        case CKR_OK: initialisedHere = true
        case CKR_CRYPTOKI_ALREADY_INITIALIZED: initialisedHere = false
        default: throw PKCS11Error(.moduleFailed, "C_Initialize failed", returnValue: init_rv)
        }
        serial = serialized ? CriticalSection() : nil
    }

    /// Runs one Cryptoki call, serialized when the module needs it, with no fork in between
    /// (`ForkGuard`).
    @inline(__always)
    private func call(_ body: (CK_FUNCTION_LIST) -> CK_RV) -> CK_RV {
        ForkGuard.around {
            if let serial { return serial.run { body(functions.pointee) } }
            return body(functions.pointee)
        }
    }

    // MARK: Library and slots

    /// The library's manufacturer, description and version (`C_GetInfo`).
    package func libraryInfo() throws(PKCS11Error) -> (manufacturer: String, description: String, version: String) {
        var info = CK_INFO()
        let rv = call { $0.C_GetInfo!(&info) }
        guard rv == CKR_OK else { throw PKCS11Error(.moduleFailed, "C_GetInfo failed", returnValue: rv) }
        return (
            Self.padded(info.manufacturerID), Self.padded(info.libraryDescription),
            "\(info.libraryVersion.major).\(info.libraryVersion.minor)"
        )
    }

    /// A slot and, when present, its token, as `C_GetSlotInfo` / `C_GetTokenInfo` describe them.
    package struct Slot: Sendable {
        /// The slot's id.
        package let id: UInt
        /// Slot description and manufacturer (blank-padded fields, trailing blanks removed).
        package let description: String
        package let manufacturer: String
        /// Token fields, nil when no token is present.
        package let token: Token?

        /// A token's identifying fields and flags.
        package struct Token: Sendable {
            package let label: String
            package let manufacturer: String
            package let model: String
            package let serial: String
            /// `CKF_*` token flags.
            package let flags: UInt
            /// The token needs a login before private objects can be used.
            package var loginRequired: Bool { flags & UInt(CKF_LOGIN_REQUIRED) != 0 }
            /// The token has its own PIN pad (login without a PIN from us).
            package var protectedAuthenticationPath: Bool { flags & UInt(CKF_PROTECTED_AUTHENTICATION_PATH) != 0 }
            /// The token has been initialised.
            package var initialised: Bool { flags & UInt(CKF_TOKEN_INITIALIZED) != 0 }
            /// The user PIN is locked.
            package var userPINLocked: Bool { flags & UInt(CKF_USER_PIN_LOCKED) != 0 }
        }
    }

    /// Every slot (with its token, when one is present). At most 256 slots are read.
    package func slots() throws(PKCS11Error) -> [Slot] {
        var count: CK_ULONG = 0
        var rv = call { $0.C_GetSlotList!(CK_BBOOL(CK_FALSE), nil, &count) }
        guard rv == CKR_OK else { throw PKCS11Error(.moduleFailed, "C_GetSlotList failed", returnValue: rv) }
        guard count <= 256 else { throw PKCS11Error(.moduleFailed, "the module reports more than 256 slots") }
        var ids = [CK_SLOT_ID](repeating: 0, count: Int(count))
        rv = ids.withUnsafeMutableBufferPointer { b in
            call { $0.C_GetSlotList!(CK_BBOOL(CK_FALSE), b.baseAddress, &count) }
        }
        guard rv == CKR_OK else { throw PKCS11Error(.moduleFailed, "C_GetSlotList failed", returnValue: rv) }
        var out = [Slot]()
        for id in ids.prefix(Int(count)) {
            var si = CK_SLOT_INFO()
            guard call({ $0.C_GetSlotInfo!(id, &si) }) == CKR_OK else { continue }
            var token: Slot.Token?
            if si.flags & CK_FLAGS(CKF_TOKEN_PRESENT) != 0 {
                var ti = CK_TOKEN_INFO()
                if call({ $0.C_GetTokenInfo!(id, &ti) }) == CKR_OK {
                    token = Slot.Token(
                        label: Self.padded(ti.label), manufacturer: Self.padded(ti.manufacturerID),
                        model: Self.padded(ti.model), serial: Self.padded(ti.serialNumber), flags: UInt(ti.flags))
                }
            }
            out.append(
                Slot(
                    id: UInt(id), description: Self.padded(si.slotDescription),
                    manufacturer: Self.padded(si.manufacturerID), token: token))
        }
        return out
    }

    /// A blank-padded Cryptoki text field (a fixed-size tuple of bytes) without its trailing blanks.
    private static func padded<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { raw in
            var end = raw.count
            while end > 0, raw[end - 1] == 0x20 || raw[end - 1] == 0 { end -= 1 }
            return String(decoding: raw.prefix(end), as: UTF8.self)
        }
    }

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
    private func withTemplate<R>(
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

    // MARK: Key and token management

    /// Generates an EC key pair (`CKM_EC_KEY_PAIR_GEN`) from the two templates; returns the public
    /// and private object handles.
    package func generateECKeyPair(_ session: UInt, publicTemplate: [Attribute], privateTemplate: [Attribute])
        throws(PKCS11Error) -> (publicKey: UInt, privateKey: UInt)
    {
        guard let generate = functions.pointee.C_GenerateKeyPair else {
            throw PKCS11Error(.notAModule, "the module cannot generate key pairs")
        }
        var mechanism = CK_MECHANISM(
            mechanism: CK_MECHANISM_TYPE(CKM_EC_KEY_PAIR_GEN), pParameter: nil, ulParameterLen: 0)
        var pub: CK_OBJECT_HANDLE = 0
        var priv: CK_OBJECT_HANDLE = 0
        let rv = withTemplate(publicTemplate) { pt, pn in
            withTemplate(privateTemplate) { kt, kn in
                call { _ in generate(CK_SESSION_HANDLE(session), &mechanism, pt, pn, kt, kn, &pub, &priv) }
            }
        }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_GenerateKeyPair failed") }
        return (UInt(pub), UInt(priv))
    }

    /// Creates an object from `template` (test set-ups import the published test keys this way).
    package func createObject(_ session: UInt, _ template: [Attribute]) throws(PKCS11Error) -> UInt {
        guard let create = functions.pointee.C_CreateObject else {
            throw PKCS11Error(.notAModule, "the module cannot create objects")
        }
        var handle: CK_OBJECT_HANDLE = 0
        let rv = withTemplate(template) { t, n in call { _ in create(CK_SESSION_HANDLE(session), t, n, &handle) } }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_CreateObject failed") }
        return UInt(handle)
    }

    /// Destroys an object.
    package func destroyObject(_ session: UInt, _ object: UInt) throws(PKCS11Error) {
        guard let destroy = functions.pointee.C_DestroyObject else {
            throw PKCS11Error(.notAModule, "the module cannot destroy objects")
        }
        let rv = call { _ in destroy(CK_SESSION_HANDLE(session), CK_OBJECT_HANDLE(object)) }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_DestroyObject failed") }
    }

    /// Initialises the token in `slot` with a security officer PIN and a label (`C_InitToken`), then
    /// sets the user PIN (`C_InitPIN` as the security officer). For test and demo set-ups.
    package func initialiseToken(slot: UInt, label: String, soPIN: [UInt8], userPIN: [UInt8]) throws(PKCS11Error) {
        guard let initToken = functions.pointee.C_InitToken, let initPIN = functions.pointee.C_InitPIN else {
            throw PKCS11Error(.notAModule, "the module cannot initialise tokens")
        }
        var labelField = [UInt8](repeating: 0x20, count: 32)
        for (i, b) in label.utf8.prefix(32).enumerated() { labelField[i] = b }
        var rv = soPIN.withUnsafeBufferPointer { so in
            labelField.withUnsafeMutableBufferPointer { l in
                call { _ in
                    initToken(
                        CK_SLOT_ID(slot), UnsafeMutablePointer(mutating: so.baseAddress), CK_ULONG(so.count),
                        l.baseAddress)
                }
            }
        }
        guard rv == CKR_OK else { throw Self.classify(rv, "C_InitToken failed") }
        // The token may move to another slot id once initialised: find it by label.
        guard let moved = try slots().first(where: { $0.token?.label == label && $0.token?.initialised == true })
        else { throw PKCS11Error(.tokenAbsent, "the initialised token is not listed") }
        let session = try openSession(slot: moved.id, readWrite: true)
        defer { closeSession(session) }
        try soPIN.withPKCS11Bytes { (p) throws(PKCS11Error) in try login(session, securityOfficer: true, pin: p) }
        rv = userPIN.withUnsafeBufferPointer { u in
            call { _ in
                initPIN(CK_SESSION_HANDLE(session), UnsafeMutablePointer(mutating: u.baseAddress), CK_ULONG(u.count))
            }
        }
        logout(session)
        guard rv == CKR_OK else { throw Self.classify(rv, "C_InitPIN failed") }
    }

    // MARK: Return values

    /// The error for a failed call: the token gone, a session or object that is no longer valid, a
    /// login needed, or the token failing.
    static func classify(_ rv: CK_RV, _ step: String) -> PKCS11Error {
        switch rv {
        case CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT, CKR_TOKEN_NOT_RECOGNIZED, CKR_SLOT_ID_INVALID:
            return PKCS11Error(.tokenAbsent, step, returnValue: rv)
        case CKR_PIN_LOCKED, CKR_PIN_EXPIRED:
            return PKCS11Error(.pinLocked, step, returnValue: rv)
        case CKR_CRYPTOKI_NOT_INITIALIZED:
            // Not transient: the module holds no state for this process (a forked child whose module
            // refuses the parent's initialisation and was not initialised again).
            return PKCS11Error(
                .moduleFailed, step + ": the module is not initialised in this process", returnValue: rv)
        default:
            return PKCS11Error(.tokenFailed, step, returnValue: rv)
        }
    }

    /// Whether a failed call's return value means the session or object handle went stale (a
    /// fresh session, login and key lookup may succeed).
    package static func isStale(_ error: PKCS11Error) -> Bool {
        guard let rv = error.returnValue else { return false }
        return [
            CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED, CKR_USER_NOT_LOGGED_IN, CKR_OBJECT_HANDLE_INVALID,
            CKR_KEY_HANDLE_INVALID, CKR_OPERATION_ACTIVE,
        ].contains(CK_RV(rv))
    }

    /// The `CKR_*` name of a return value (or its hex).
    package static func returnValueName(_ rv: UInt) -> String {
        let names: [CK_RV: String] = [
            CKR_OK: "CKR_OK", CKR_CANCEL: "CKR_CANCEL", CKR_HOST_MEMORY: "CKR_HOST_MEMORY",
            CKR_SLOT_ID_INVALID: "CKR_SLOT_ID_INVALID", CKR_GENERAL_ERROR: "CKR_GENERAL_ERROR",
            CKR_FUNCTION_FAILED: "CKR_FUNCTION_FAILED", CKR_ARGUMENTS_BAD: "CKR_ARGUMENTS_BAD",
            CKR_CANT_LOCK: "CKR_CANT_LOCK", CKR_ATTRIBUTE_SENSITIVE: "CKR_ATTRIBUTE_SENSITIVE",
            CKR_ATTRIBUTE_TYPE_INVALID: "CKR_ATTRIBUTE_TYPE_INVALID",
            CKR_ATTRIBUTE_VALUE_INVALID: "CKR_ATTRIBUTE_VALUE_INVALID", CKR_DATA_INVALID: "CKR_DATA_INVALID",
            CKR_DATA_LEN_RANGE: "CKR_DATA_LEN_RANGE", CKR_DEVICE_ERROR: "CKR_DEVICE_ERROR",
            CKR_DEVICE_MEMORY: "CKR_DEVICE_MEMORY", CKR_DEVICE_REMOVED: "CKR_DEVICE_REMOVED",
            CKR_FUNCTION_CANCELED: "CKR_FUNCTION_CANCELED", CKR_FUNCTION_NOT_SUPPORTED: "CKR_FUNCTION_NOT_SUPPORTED",
            CKR_KEY_HANDLE_INVALID: "CKR_KEY_HANDLE_INVALID", CKR_KEY_TYPE_INCONSISTENT: "CKR_KEY_TYPE_INCONSISTENT",
            CKR_KEY_FUNCTION_NOT_PERMITTED: "CKR_KEY_FUNCTION_NOT_PERMITTED",
            CKR_MECHANISM_INVALID: "CKR_MECHANISM_INVALID", CKR_MECHANISM_PARAM_INVALID: "CKR_MECHANISM_PARAM_INVALID",
            CKR_OBJECT_HANDLE_INVALID: "CKR_OBJECT_HANDLE_INVALID", CKR_OPERATION_ACTIVE: "CKR_OPERATION_ACTIVE",
            CKR_OPERATION_NOT_INITIALIZED: "CKR_OPERATION_NOT_INITIALIZED", CKR_PIN_INCORRECT: "CKR_PIN_INCORRECT",
            CKR_PIN_INVALID: "CKR_PIN_INVALID", CKR_PIN_LEN_RANGE: "CKR_PIN_LEN_RANGE",
            CKR_PIN_EXPIRED: "CKR_PIN_EXPIRED", CKR_PIN_LOCKED: "CKR_PIN_LOCKED",
            CKR_SESSION_CLOSED: "CKR_SESSION_CLOSED", CKR_SESSION_COUNT: "CKR_SESSION_COUNT",
            CKR_SESSION_HANDLE_INVALID: "CKR_SESSION_HANDLE_INVALID",
            CKR_SESSION_READ_ONLY: "CKR_SESSION_READ_ONLY", CKR_TEMPLATE_INCOMPLETE: "CKR_TEMPLATE_INCOMPLETE",
            CKR_TEMPLATE_INCONSISTENT: "CKR_TEMPLATE_INCONSISTENT", CKR_TOKEN_NOT_PRESENT: "CKR_TOKEN_NOT_PRESENT",
            CKR_TOKEN_NOT_RECOGNIZED: "CKR_TOKEN_NOT_RECOGNIZED",
            CKR_TOKEN_WRITE_PROTECTED: "CKR_TOKEN_WRITE_PROTECTED",
            CKR_USER_ALREADY_LOGGED_IN: "CKR_USER_ALREADY_LOGGED_IN",
            CKR_USER_NOT_LOGGED_IN: "CKR_USER_NOT_LOGGED_IN",
            CKR_USER_PIN_NOT_INITIALIZED: "CKR_USER_PIN_NOT_INITIALIZED",
            CKR_USER_TYPE_INVALID: "CKR_USER_TYPE_INVALID", CKR_BUFFER_TOO_SMALL: "CKR_BUFFER_TOO_SMALL",
            CKR_CRYPTOKI_NOT_INITIALIZED: "CKR_CRYPTOKI_NOT_INITIALIZED",
            CKR_CRYPTOKI_ALREADY_INITIALIZED: "CKR_CRYPTOKI_ALREADY_INITIALIZED",
            CKR_CURVE_NOT_SUPPORTED: "CKR_CURVE_NOT_SUPPORTED", CKR_DOMAIN_PARAMS_INVALID: "CKR_DOMAIN_PARAMS_INVALID",
        ]
        return names[CK_RV(rv)] ?? "CKR 0x" + String(rv, radix: 16)
    }
}
