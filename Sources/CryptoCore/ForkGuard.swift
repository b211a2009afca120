#if canImport(Glibc)
    internal import Glibc
#endif
import Synchronization

/// Keeps `fork(2)` out of the engine's work, and tells a forked child that it is a new process.
///
/// A pre-fork server (gunicorn, `multiprocessing`) forks whenever it likes; a child forked while a
/// thread of the parent is inside an engine call inherits every lock that thread held (a PKCS#11
/// module's, OpenSSL's, the engine's own) held by a thread that does not exist in the child, and hangs
/// at its first call. Every engine call (the facade's and the C ABI's entry points) and every Cryptoki
/// call runs inside `around`, and a `pthread_atfork` prepare step waits until no call is in flight and
/// holds new ones back until the fork is done; a thread already inside (a Cryptoki call within an
/// engine call) goes on without waiting. In the child the guard starts afresh and `generation`
/// advances: a PKCS#11 module is initialised again and every session pool is opened afresh by the
/// child itself (PKCS#11 v2.40 §6.6: a child must not use its parent's sessions or handles).
package enum ForkGuard {
    /// The process generation: 0 in the process that first loaded a module, one more in each forked
    /// child (a child of a child: one more again). Read on every signing call.
    package static var generation: UInt64 { counter.load(ordering: .acquiring) }

    /// Runs `body` with the guard held: a fork waits until it returns. Reentrant: a thread already
    /// inside runs a nested call without waiting (a fork in preparation waits for the outer call).
    @inline(__always)
    package static func around<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        _ = installed
        let depth = Int(bitPattern: pthread_getspecific(depthKey))
        if depth > 0 {
            pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: depth + 1))
            defer { pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: depth)) }
            return try body()
        }
        pthread_mutex_lock(mutex)
        while forking { pthread_cond_wait(changed, mutex) }
        inFlight += 1
        pthread_mutex_unlock(mutex)
        pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: 1))
        defer {
            pthread_setspecific(depthKey, nil)
            pthread_mutex_lock(mutex)
            inFlight -= 1
            if inFlight == 0 { pthread_cond_broadcast(changed) }
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }

    /// This thread's nesting depth inside `around` (0: outside).
    private static let depthKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    // The guard's state, touched only under `mutex` (and by the fork handlers, which run with it held or
    // in a child with one thread).
    private static let counter = Atomic<UInt64>(0)
    nonisolated(unsafe) fileprivate static var inFlight = 0
    nonisolated(unsafe) fileprivate static var forking = false
    nonisolated(unsafe) fileprivate static let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        m.initialize(to: pthread_mutex_t())
        pthread_mutex_init(m, nil)
        return m
    }()
    nonisolated(unsafe) fileprivate static let changed: UnsafeMutablePointer<pthread_cond_t> = {
        let c = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        c.initialize(to: pthread_cond_t())
        pthread_cond_init(c, nil)
        return c
    }()

    /// The fork handlers, registered once per process (before the first module call).
    private static let installed: Bool = {
        _ = mutex
        _ = changed
        _ = depthKey
        return pthread_atfork(forkPrepare, forkParent, forkChild) == 0
    }()

    /// The child's first act: a fresh guard, and the next generation.
    fileprivate static func startChild() {
        // The parent's mutex is held by a thread the child does not have: made anew, not unlocked.
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        inFlight = 0
        forking = false
        counter.add(1, ordering: .releasing)
    }
}

/// Before `fork`: no module call in flight, none starting (the mutex stays held across the fork).
private func forkPrepare() {
    pthread_mutex_lock(ForkGuard.mutex)
    ForkGuard.forking = true
    while ForkGuard.inFlight > 0 { pthread_cond_wait(ForkGuard.changed, ForkGuard.mutex) }
}

/// After `fork`, in the parent: calls resume.
private func forkParent() {
    ForkGuard.forking = false
    pthread_cond_broadcast(ForkGuard.changed)
    pthread_mutex_unlock(ForkGuard.mutex)
}

/// After `fork`, in the child.
private func forkChild() { ForkGuard.startChild() }
