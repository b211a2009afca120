import CMdocRespondABI
import CryptoCore
import DigitalCredentials
import Presentment

/// An engine behind an `mdoc_engine *` handle.
package final class EngineBox: Sendable {
    package let engine: DigitalCredentialsEngine
    /// The request bound, checked before a request's bytes are read.
    package let maxRequestBytes: Int

    package init(engine: DigitalCredentialsEngine, maxRequestBytes: Int) {
        self.engine = engine
        self.maxRequestBytes = maxRequestBytes
    }
}

/// A parsed request behind an `mdoc_request *` handle; it keeps its engine alive.
package final class RequestBox: Sendable {
    package let owner: EngineBox
    package let request: PresentmentRequest

    package init(owner: EngineBox, request: PresentmentRequest) {
        self.owner = owner
        self.request = request
    }
}

/// The registry of live handles. A handle is a number handed to C as a pointer value and never
/// dereferenced: lookups go through this table, so a released, unknown or wrong-kind handle is
/// refused instead of touching freed memory. Numbers are never reused (a 64-bit counter).
package enum Handles {
    private struct Table {
        var next: UInt = 0
        var engines: [UInt: EngineBox] = [:]
        var requests: [UInt: RequestBox] = [:]
    }

    private static let table = LockedValue(Table())

    /// Handles are multiples of 16 from 0x10 on: they look like aligned pointers to C and are never NULL.
    private static func value(_ p: OpaquePointer?) -> UInt? {
        guard let p else { return nil }
        return UInt(bitPattern: p)
    }

    package static func add(_ box: EngineBox) -> OpaquePointer {
        let n = table.withLock { t in
            t.next += 1
            t.engines[t.next << 4] = box
            return t.next << 4
        }
        return OpaquePointer(bitPattern: n)!
    }

    package static func add(_ box: RequestBox) -> OpaquePointer {
        let n = table.withLock { t in
            t.next += 1
            t.requests[t.next << 4] = box
            return t.next << 4
        }
        return OpaquePointer(bitPattern: n)!
    }

    package static func engine(_ p: OpaquePointer?) throws(ABIFailure) -> EngineBox {
        guard let v = value(p) else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "engine handle is NULL") }
        guard let box = table.withLock({ $0.engines[v] }) else {
            throw ABIFailure(MDOC_ERR_INVALID_HANDLE, "not a live engine handle (released, unknown, or another kind)")
        }
        return box
    }

    package static func request(_ p: OpaquePointer?) throws(ABIFailure) -> RequestBox {
        guard let v = value(p) else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "request handle is NULL") }
        guard let box = table.withLock({ $0.requests[v] }) else {
            throw ABIFailure(MDOC_ERR_INVALID_HANDLE, "not a live request handle (released, unknown, or another kind)")
        }
        return box
    }

    package static func releaseEngine(_ p: OpaquePointer?) throws(ABIFailure) {
        guard let v = value(p) else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "engine handle is NULL") }
        // The box is released outside the lock (its deinit may free the context).
        let box = table.withLock { $0.engines.removeValue(forKey: v) }
        guard box != nil else {
            throw ABIFailure(MDOC_ERR_INVALID_HANDLE, "not a live engine handle (released, unknown, or another kind)")
        }
    }

    package static func releaseRequest(_ p: OpaquePointer?) throws(ABIFailure) {
        guard let v = value(p) else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "request handle is NULL") }
        let box = table.withLock { $0.requests.removeValue(forKey: v) }
        guard box != nil else {
            throw ABIFailure(MDOC_ERR_INVALID_HANDLE, "not a live request handle (released, unknown, or another kind)")
        }
    }

    /// Live handles of each kind (tests check that releases balance).
    package static var liveCounts: (engines: Int, requests: Int) {
        table.withLock { ($0.engines.count, $0.requests.count) }
    }
}
