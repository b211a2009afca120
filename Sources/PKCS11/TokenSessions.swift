import CryptoCore
#if canImport(Glibc)
    import Glibc
#endif

extension PINSource {
    /// The largest PIN file read.
    static let maxFileSize = 256

    /// Reads the PIN and calls `body` with it; the copy is cleansed when `body` returns.
    func withPIN<R>(_ body: (UnsafeRawBufferPointer) throws(PKCS11Error) -> R) throws(PKCS11Error) -> R {
        var pin: [UInt8]
        switch self {
        case .environment(let name):
            guard PKCS11URI.isEnvironmentName(name), let value = getenv(name) else {
                throw PKCS11Error(.pinUnavailable, "the PIN environment variable is not set")
            }
            pin = Array(UnsafeRawBufferPointer(start: value, count: strlen(value)))
        case .file(let path):
            pin = try Self.readFile(path)
        }
        defer { SecureBytes.cleanse(&pin) }
        if pin.last == 0x0A { pin.removeLast() }
        if pin.last == 0x0D { pin.removeLast() }
        guard !pin.isEmpty else { throw PKCS11Error(.pinUnavailable, "the PIN source is empty") }
        return try pin.withPKCS11Bytes { (p) throws(PKCS11Error) -> R in try body(p) }
    }

    /// The PIN file's bytes, checked through the descriptor they are read from.
    private static func readFile(_ path: String) throws(PKCS11Error) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw PKCS11Error(.pinUnavailable, "the PIN file cannot be opened") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            throw PKCS11Error(.pinUnavailable, "the PIN file is not a regular file")
        }
        guard st.st_uid == geteuid(), st.st_mode & 0o077 == 0 else {
            throw PKCS11Error(
                .pinUnavailable, "the PIN file must be owned by this user and readable by no one else (mode 0600)")
        }
        var buffer = [UInt8](repeating: 0, count: maxFileSize + 1)
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                SecureBytes.cleanse(&buffer)
                throw PKCS11Error(.pinUnavailable, "the PIN file cannot be read")
            }
            if n == 0 { break }
            total += n
        }
        guard total <= maxFileSize else {
            SecureBytes.cleanse(&buffer)
            throw PKCS11Error(.pinUnavailable, "the PIN file is longer than \(maxFileSize) bytes")
        }
        let pin = Array(buffer.prefix(total))
        SecureBytes.cleanse(&buffer)
        return pin
    }
}

/// The token a URI names in its module, and a small pool of logged-in sessions on it.
///
/// Each signing call takes a session of its own from the pool (so concurrent calls never share one)
/// and gives it back; the pool's lock is held only to take and return a session, never across a
/// call into the token. When every session is busy and the pool is full, a caller waits for one to
/// come back. A session that failed is closed rather than returned. Pools are kept per token for the
/// life of the process; logging in happens once per token (PKCS#11 logs in every session of the
/// process at once) and again only if the token forgot the login.
package final class TokenSessions: Sendable {
    /// The module.
    package let module: PKCS11Module
    /// The slot holding the token.
    package let slot: UInt
    /// The token as it was found.
    package let token: PKCS11Module.Slot.Token
    /// The most sessions kept open on the token.
    package let capacity: Int
    private let state: ConditionValue<State>

    private struct State {
        var idle: [UInt] = []
        var open = 0
    }

    /// Sessions opened per token by default: enough for the cores of a wallet backend's host.
    package static let defaultCapacity = 8

    private static let shared = LockedValue<[String: TokenSessions]>([:])

    private init(module: PKCS11Module, slot: PKCS11Module.Slot, capacity: Int) {
        self.module = module
        self.slot = slot.id
        self.token = slot.token!
        self.capacity = capacity
        self.state = ConditionValue(State())
    }

    /// The pool for the token `uri` names: the module loaded, the one matching token found (and
    /// checked usable: initialised, its user PIN not locked).
    package static func forURI(_ uri: PKCS11URI, moduleDirectories: [String] = PKCS11ModuleDirectories.system)
        throws(PKCS11Error) -> TokenSessions
    {
        guard let path = uri.modulePath else {
            throw PKCS11Error(.invalidURI, "the URI has no module-path")
        }
        let module = try PKCS11Module.load(path: path, allowedDirectories: moduleDirectories)
        if uri.libraryManufacturer != nil || uri.libraryDescription != nil || uri.libraryVersion != nil {
            let info = try module.libraryInfo()
            guard uri.libraryManufacturer.map({ $0 == info.manufacturer }) ?? true,
                uri.libraryDescription.map({ $0 == info.description }) ?? true,
                uri.libraryVersion.map({ $0 == info.version }) ?? true
            else { throw PKCS11Error(.tokenAbsent, "the module does not match the URI's library attributes") }
        }
        let matching = try module.slots().filter { s in
            guard let t = s.token else { return false }
            return (uri.slotID.map { $0 == s.id } ?? true)
                && (uri.slotDescription.map { $0 == s.description } ?? true)
                && (uri.slotManufacturer.map { $0 == s.manufacturer } ?? true)
                && (uri.token.map { $0 == t.label } ?? true) && (uri.manufacturer.map { $0 == t.manufacturer } ?? true)
                && (uri.model.map { $0 == t.model } ?? true) && (uri.serial.map { $0 == t.serial } ?? true)
        }
        guard let slot = matching.first, let t = slot.token else {
            throw PKCS11Error(.tokenAbsent, "no slot holds a token matching the URI")
        }
        guard matching.count == 1 else {
            throw PKCS11Error(.keyAmbiguous, "more than one token matches the URI (name its serial)")
        }
        guard t.initialised else { throw PKCS11Error(.tokenAbsent, "the token is not initialised") }
        guard !t.userPINLocked else { throw PKCS11Error(.pinLocked, "the token's user PIN is locked") }
        // One pool per process generation: a forked child opens and logs in its own sessions.
        let key = "\(module.generation)\u{0}\(module.path)\u{0}\(slot.id)\u{0}\(t.serial)\u{0}\(t.label)"
        return shared.withLock { pools in
            if let p = pools[key] { return p }
            let p = TokenSessions(module: module, slot: slot, capacity: defaultCapacity)
            pools[key] = p
            return p
        }
    }

    /// Runs `body` on a logged-in session of this process's own; the session goes back to the pool
    /// when `body` returns, and is closed when it throws (its state is unknown). A new session logs
    /// in with the PIN from `pin` when the process is not logged in to the token yet (PKCS#11 logs a
    /// process in per token, not per session).
    package func withSession<R>(pin: PINSource?, _ body: (UInt) throws(PKCS11Error) -> R) throws(PKCS11Error) -> R {
        let session = try checkOut(pin: pin)
        let result: R
        do {
            result = try body(session)
        } catch {
            discard(session)
            throw error
        }
        state.withLockSignalling { $0.idle.append(session) }
        return result
    }

    /// Closes every idle session (the next call opens and logs in afresh). For recovery after the
    /// token forgot this process's login or was re-inserted.
    package func drain() {
        let idle = state.withLockSignalling { s -> [UInt] in
            let idle = s.idle
            s.open -= idle.count
            s.idle = []
            return idle
        }
        for s in idle { module.closeSession(s) }
    }

    private func discard(_ session: UInt) {
        module.closeSession(session)
        state.withLockSignalling { $0.open -= 1 }
    }

    private func checkOut(pin: PINSource?) throws(PKCS11Error) -> UInt {
        let capacity = self.capacity
        let ready: (State) -> Bool = { !$0.idle.isEmpty || $0.open < capacity }
        let reused = state.withLock(waitingUntil: ready) { s -> UInt? in
            if let session = s.idle.popLast() { return session }
            s.open += 1
            return nil
        }
        if let reused { return reused }
        do throws(PKCS11Error) {
            let session = try module.openSession(slot: slot)
            do throws(PKCS11Error) {
                try logIn(session, pin: pin)
            } catch {
                module.closeSession(session)
                throw error
            }
            return session
        } catch {
            state.withLockSignalling { $0.open -= 1 }
            throw error
        }
    }

    /// Logs the user in on a new session when the token needs it and the process is not logged in yet.
    func logIn(_ session: UInt, pin pinSource: PINSource?) throws(PKCS11Error) {
        guard token.loginRequired, try !module.isUserLoggedIn(session) else { return }
        if let pinSource {
            try pinSource.withPIN { (pin) throws(PKCS11Error) in try module.login(session, pin: pin) }
        } else if token.protectedAuthenticationPath {
            try module.login(session, pin: nil)
        } else {
            throw PKCS11Error(.pinUnavailable, "the token needs a PIN and the URI names no pin-source or x-pin-env")
        }
    }
}
