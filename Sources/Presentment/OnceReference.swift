import Synchronization

/// A class reference set at most once and then read without a lock by any thread: the contract of the
/// standard library's `AtomicLazyReference`, whose `load()` is not inlined into this module (an
/// unspecialized call with a run-time metadata lookup, about 650 instructions a load, measured on the
/// credential index). Here a load is one acquiring atomic load.
///
/// Fast code (unsafe: an atomic pointer to the retained reference, released in `deinit`; set once,
/// read with acquiring loads; exercised from two threads under ThreadSanitizer by the stress and
/// context-store tests).
struct OnceReference<T: AnyObject & Sendable>: ~Copyable, Sendable {
    /// The stored object's address (retained once by this reference), or 0.
    private let bits = Atomic<UInt>(0)

    init() {}

    /// The stored object, or nil before one was stored.
    @inline(__always) func load() -> T? {
        let b = bits.load(ordering: .acquiring)
        guard b != 0 else { return nil }
        return Unmanaged<T>.fromOpaque(UnsafeRawPointer(bitPattern: b)!).takeUnretainedValue()
    }

    /// Stores `value` unless another was stored first; returns the one stored.
    func storeIfNil(_ value: T) -> T {
        let candidate = UInt(bitPattern: Unmanaged.passRetained(value).toOpaque())
        let (exchanged, current) = bits.compareExchange(
            expected: 0, desired: candidate, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if exchanged { return value }
        Unmanaged<T>.fromOpaque(UnsafeRawPointer(bitPattern: candidate)!).release()
        return Unmanaged<T>.fromOpaque(UnsafeRawPointer(bitPattern: current)!).takeUnretainedValue()
    }

    deinit {
        let b = bits.load(ordering: .acquiring)
        if b != 0 { Unmanaged<T>.fromOpaque(UnsafeRawPointer(bitPattern: b)!).release() }
    }
}
