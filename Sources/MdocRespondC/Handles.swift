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
    package let request: DigitalCredentialsRequest

    package init(owner: EngineBox, request: DigitalCredentialsRequest) {
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
    private static func insert<Box>(_ box: Box, _ kind: WritableKeyPath<Table, [UInt: Box]>) -> OpaquePointer {
        let n = table.withLock { t in
            t.next += 1
            t[keyPath: kind][t.next << 4] = box
            return t.next << 4
        }
        return OpaquePointer(bitPattern: n)!
    }

    /// The live box behind a handle of `kind`, removed from the table when `releasing`.
    private static func find<Box>(
        _ p: OpaquePointer?, _ kind: WritableKeyPath<Table, [UInt: Box]>, _ name: String, releasing: Bool = false
    ) throws(ABIFailure) -> Box {
        guard let p else { throw ABIFailure(MDOC_ERR_INVALID_ARGUMENT, "\(name) handle is NULL") }
        let v = UInt(bitPattern: p)
        // A released box is dropped outside the lock (its deinit may free a whole context).
        let box = table.withLock { t in releasing ? t[keyPath: kind].removeValue(forKey: v) : t[keyPath: kind][v] }
        guard let box else {
            throw ABIFailure(
                MDOC_ERR_INVALID_HANDLE, "not a live \(name) handle (released, unknown, or another kind)")
        }
        return box
    }

    package static func add(_ box: EngineBox) -> OpaquePointer { insert(box, \.engines) }

    package static func add(_ box: RequestBox) -> OpaquePointer { insert(box, \.requests) }

    package static func engine(_ p: OpaquePointer?) throws(ABIFailure) -> EngineBox {
        try find(p, \.engines, "engine")
    }

    package static func request(_ p: OpaquePointer?) throws(ABIFailure) -> RequestBox {
        try find(p, \.requests, "request")
    }

    package static func releaseEngine(_ p: OpaquePointer?) throws(ABIFailure) {
        _ = try find(p, \.engines, "engine", releasing: true)
    }

    package static func releaseRequest(_ p: OpaquePointer?) throws(ABIFailure) {
        _ = try find(p, \.requests, "request", releasing: true)
    }

    /// Live handles of each kind (tests check that releases balance).
    package static var liveCounts: (engines: Int, requests: Int) {
        table.withLock { ($0.engines.count, $0.requests.count) }
    }
}
