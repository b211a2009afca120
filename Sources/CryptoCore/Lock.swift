#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A value guarded by a POSIX mutex.
///
/// The standard library's `Synchronization.Mutex` is built on raw futex calls on Linux, which
/// ThreadSanitizer cannot see: every access it guards is reported as a race. A `pthread_mutex_t` is
/// intercepted by the sanitizers, so the lock's happens-before edges are visible and a real race
/// still shows.
package final class LockedValue<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside the section.
    private let section = CriticalSection()
    private var value: Value

    /// Creates the lock holding `initial`.
    package init(_ initial: Value) { value = initial }

    /// Runs `body` with exclusive access to the value.
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        try section.run { () throws(E) -> R in try body(&value) }
    }
}

/// A POSIX mutex guarding no value, only a critical section (calls into a library that must not be
/// entered twice at once). `LockedValue<Void>` is not used for this: its empty `value` shares its
/// address with the mutex pointer, so ThreadSanitizer reads the inout access of the empty value in one
/// thread and the load of the mutex pointer in another as a race.
package final class CriticalSection: @unchecked Sendable {
    // @unchecked: the only state is the mutex itself.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates the section's mutex.
    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` while no other thread runs a body of this section.
    package func run<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value guarded by a POSIX mutex with a condition variable: a caller may wait until the value
/// satisfies a predicate (a pool waiting for a free slot).
package final class ConditionValue<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched with the mutex held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    /// Creates the lock holding `initial`.
    package init(_ initial: Value) {
        value = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        precondition(pthread_mutex_init(mutex, nil) == 0 && pthread_cond_init(condition, nil) == 0)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deinitialize(count: 1)
        condition.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Waits until `ready(value)` holds, then runs `body` with exclusive access.
    package func withLock<R, E: Error>(waitingUntil ready: (Value) -> Bool, _ body: (inout Value) throws(E) -> R)
        throws(E) -> R
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(value) { pthread_cond_wait(condition, mutex) }
        return try body(&value)
    }

    /// Runs `body` with exclusive access, then wakes every waiter to re-check its predicate.
    package func withLockSignalling<R>(_ body: (inout Value) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return body(&value)
    }
}
