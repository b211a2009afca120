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
/// Everything else in the target is plain Swift over these methods; no file but this one and its
/// extensions (PKCS11Module+Sessions.swift, +Tokens.swift) imports CPKCS11.
package final class PKCS11Module: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init; `serial` is a lock.
    /// The path the module was loaded from (resolved, absolute).
    package let path: String
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    /// Held around every call when the module cannot lock for itself; nil otherwise.
    let serial: CriticalSection?
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
    func call(_ body: (CK_FUNCTION_LIST) -> CK_RV) -> CK_RV {
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
    static func padded<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { raw in
            var end = raw.count
            while end > 0, raw[end - 1] == 0x20 || raw[end - 1] == 0 { end -= 1 }
            return String(decoding: raw.prefix(end), as: UTF8.self)
        }
    }
}
