import Foundation
import Dispatch
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR
import HPKE
import CryptoCore
import DigitalCredentials
import AnnexCReader

struct Figure {
    let bench: String
    let medianNs: Double
    let p90Ns: Double
    let baseline: String?
    var ratio: Double?
    var bytes: Int?
    /// Peak resident memory of a measured process, in KiB.
    var peakKiB: Int? = nil
}

@inline(never)
func blackHole<T>(_ x: T) { withExtendedLifetime(x) {} }

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// `--op NAME --iterations N`: one warm-up call in every run (the 0-iteration run too, so one-time
/// runtime work such as metadata and conformance caches and lazy globals cancels out of (N − 0) / N,
/// leaving the steady state), then N calls, then exit.
func runOperation(_ body: () -> Void) -> Never {
    body()
    for _ in 0..<opIterations { body() }
    exit(0)
}

/// An unknown `--op` name: exit 2.
func unknownOperation(_ name: String) -> Never {
    print("unknown --op \(name)")
    exit(2)
}

/// Times `body`, batching iterations so each sample lasts at least ~50 µs.
func measure(_ name: String, baseline: String? = nil, bytes: Int? = nil, _ body: () -> Void) -> Figure {
    if let filter, !name.contains(filter) {
        return Figure(bench: name, medianNs: .nan, p90Ns: .nan, baseline: baseline, bytes: bytes)
    }
    for _ in 0..<(quick ? 3 : 50) { body() }
    var batch = 1
    while true {
        let t0 = now()
        for _ in 0..<batch { body() }
        if now() - t0 > 50_000 || batch >= 1 << 16 { break }
        batch *= 2
    }
    var times = [Double]()
    times.reserveCapacity(samples)
    for _ in 0..<samples {
        let t0 = now()
        for _ in 0..<batch { body() }
        times.append(Double(now() - t0) / Double(batch))
    }
    times.sort()
    return Figure(
        bench: name, medianNs: times[times.count / 2], p90Ns: times[times.count * 9 / 10], baseline: baseline,
        bytes: bytes)
}

/// Times `a` against its baseline `b` with interleaved samples, so machine drift hits both alike.
/// Returns (a with ratio set, b).
func measurePair(_ nameA: String, _ nameB: String, bytes: Int? = nil, _ a: () -> Void, _ b: () -> Void) -> (
    Figure, Figure
) {
    if let filter, !nameA.contains(filter) && !nameB.contains(filter) {
        return (
            Figure(bench: nameA, medianNs: .nan, p90Ns: .nan, baseline: nameB),
            Figure(bench: nameB, medianNs: .nan, p90Ns: .nan, baseline: nil)
        )
    }
    for _ in 0..<(quick ? 3 : 30) {
        a()
        b()
    }
    var batch = 1
    while true {
        let t0 = now()
        for _ in 0..<batch { a() }
        if now() - t0 > 50_000 || batch >= 1 << 16 { break }
        batch *= 2
    }
    var ta = [Double]()
    var tb = [Double]()
    for _ in 0..<samples {
        var t0 = now()
        for _ in 0..<batch { a() }
        ta.append(Double(now() - t0) / Double(batch))
        t0 = now()
        for _ in 0..<batch { b() }
        tb.append(Double(now() - t0) / Double(batch))
    }
    ta.sort()
    tb.sort()
    var fa = Figure(
        bench: nameA, medianNs: ta[ta.count / 2], p90Ns: ta[ta.count * 9 / 10], baseline: nameB, bytes: bytes)
    let fb = Figure(bench: nameB, medianNs: tb[tb.count / 2], p90Ns: tb[tb.count * 9 / 10], baseline: nil, bytes: bytes)
    fa.ratio = fa.medianNs / fb.medianNs
    return (fa, fb)
}
