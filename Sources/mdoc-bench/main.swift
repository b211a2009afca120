// mdoc-bench: figures for every stage, as a table and as one JSON object per line.
//   swift run -c release mdoc-bench [--quick] [--json-only]
// Times are wall-clock medians over many samples of batched iterations; nothing here asserts speed.
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
import LibCBORPeer

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print(
        """
        usage: mdoc-bench [--quick] [--json-only]
          --quick      short run (a few samples), used by CI to keep the harness working
          --json-only  print only the JSON lines
          --filter S   run only the figures whose name contains S
          --samples N  samples per figure (default 301; more narrows the spread of a ratio between runs)
          --cli PATH   the CLI the process figures launch (default: mdoc-respond beside this binary;
                       dist/mdoc-respond for the shipped static one, after scripts/package.sh)
          --op NAME --iterations N
                       run one operation N times, untimed, then exit (for valgrind --tool=callgrind):
                       accept, accept_ios, accept_reader_auth, floor, floor_reader_auth, accept_ios_and_floor, parse, respond,
                       oid4vp_accept, oid4vp_floor, oid4vp_accept_signed, oid4vp_floor_signed,
                       oid4vp_floor_encoded (the unsigned floor plus the response's three base64url encodings),
                       oid4vp_json (the unsigned request's JSON through the tape parser alone),
                       json_worst (a 256 KiB request with 1,000 escaped keys beside a valid entry),
                       cold_accept_N, cold_abi_accept_N, warm_accept_N (N = 1, 4, 32: a holder's first request
                       from snapshot bytes, through Swift and the C ABI, against a warm engine),
                       cold_floor_N (a warm answer plus what a new engine cannot skip: the selected
                       credential's key file read and imported under its record, its bytes' SHA-256)
        Set MDOC_SHARED_VECTORS to the shared vectors folder to include the Annex D DeviceResponse.
        """)
    exit(0)
}
let quick = arguments.contains("--quick")
/// `--op NAME --iterations N`: run one operation N times without timing (for callgrind instruction counts).
let onlyOp: String? = arguments.firstIndex(of: "--op").flatMap { i in
    arguments.index(after: i) < arguments.endIndex ? arguments[arguments.index(after: i)] : nil
}
let opIterations: Int =
    arguments.firstIndex(of: "--iterations").flatMap { i in
        arguments.index(after: i) < arguments.endIndex ? Int(arguments[arguments.index(after: i)]) : nil
    } ?? 100
/// `--filter SUBSTRING`: run only the figures whose name contains it (for profiling one stage).
let filter: String? = arguments.firstIndex(of: "--filter").flatMap { i in
    arguments.index(after: i) < arguments.endIndex ? arguments[arguments.index(after: i)] : nil
}
let jsonOnly = arguments.contains("--json-only")
/// `--samples N`: samples per figure.
let requestedSamples: Int? = arguments.firstIndex(of: "--samples").flatMap { i in
    arguments.index(after: i) < arguments.endIndex ? Int(arguments[arguments.index(after: i)]) : nil
}
let samples = quick ? 15 : max(1, requestedSamples ?? 301)
/// `--cli PATH`: the CLI the process figures launch.
let cliOption: String? = arguments.firstIndex(of: "--cli").flatMap { i in
    arguments.index(after: i) < arguments.endIndex ? arguments[arguments.index(after: i)] : nil
}

// MARK: Run

var figures = [Figure]()

if let op = onlyOp {
    if op.hasPrefix("oid4vp_") {
        openID4VPFigures()
    } else if op.hasPrefix("json_") {
        jsonFigures()
    } else if op.hasPrefix("abi_") {
        abiFigures()
    } else if op.hasPrefix("cold_") || op.hasPrefix("warm_") {
        coldFigures()
    } else if op.hasPrefix("elements_") || op.hasPrefix("portrait_") {
        scalingFigures()
    } else {
        acceptFigures()
    }
}

if let annexD = annexDResponse() {
    cborFigures("annexd_response", annexD)
    figures.append(
        measure("mdoc.parse.annexd_device_response", bytes: annexD.count) {
            blackHole(try! DeviceResponse(encoded: annexD))
        })
} else if !jsonOnly {
    print("NOTICE: Annex D vectors not found (set MDOC_SHARED_VECTORS); skipping the annexd_response figures")
}
let synthetic = syntheticIssuerSigned()
cborFigures("issuer_signed_20k", synthetic)
figures.append(
    measure("mdoc.parse.issuer_signed_20k", bytes: synthetic.count) { blackHole(try! IssuerSigned(encoded: synthetic)) }
)

hpkeFigures(size: 4096)
hpkeFigures(size: 32768)
acceptFigures()
jsonFigures()
base64URLFigures()
openID4VPFigures()
pkcs11Figures()
abiFigures()
coldFigures()
scalingFigures()
primitiveFigures()
zkFigures()

// MARK: The CLI as a process: `mdoc-respond respond` on the reference readerAuth request, and on the
// same request unsigned (which needs no certificate: the built-in context's trust anchor stays unparsed),
// each interleaved with its floor, `mdoc-process-floor`: the same OpenSSL calls alone in a C process.

/// One launch (posix_spawn directly: Foundation's Process adds tens of milliseconds of its own):
/// wall time in ns, and the child's peak memory in KiB when it reports it (`--report` on stderr);
/// nil when it could not be started or did not exit with status 0.
func launch(_ args: [String], errFile: String) -> (ns: Double, peakKiB: Int?)? {
    let argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
    defer { for a in argv { free(a) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    var pid: pid_t = 0
    let t0 = now()
    let rc = argv.withUnsafeBufferPointer {
        posix_spawn(&pid, args[0], &actions, nil, UnsafeMutablePointer(mutating: $0.baseAddress!), environ)
    }
    guard rc == 0 else { return nil }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let ns = Double(now() - t0)
    guard status == 0 else { return nil }
    let text = (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""
    guard let r = text.range(of: "peak memory ") else { return (ns, nil) }
    return (ns, Int(text[r.upperBound...].prefix { $0.isNumber }))
}

let binDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
let cliPath =
    cliOption.map { URL(fileURLWithPath: $0).path } ?? binDirectory.appendingPathComponent("mdoc-respond").path
let floorPath = binDirectory.appendingPathComponent("mdoc-process-floor").path
let vectorsPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("TestVectors").path
// The CLI processes timed below answer from this checkout's test data (the binary reads no path compiled
// into it); a value the caller set is kept.
setenv("MDOC_RESPOND_TESTVECTORS", vectorsPath, 0)
for (name, file, mode) in [
    ("cli.respond.process", "mdl-dataObject-v1.0-readerAuth.json", "signed"),
    ("cli.respond.process_unsigned", "mdl-dataObject-v1.0-none.json", "unsigned"),
] where onlyOp == nil && (filter == nil || name.contains(filter!)) {
    guard FileManager.default.isExecutableFile(atPath: cliPath) else {
        if name == "cli.respond.process" {
            print(
                "NOTICE: \(cliPath) not built (swift build -c release --product mdoc-respond); the process figures are skipped"
            )
        }
        continue
    }
    let errFile = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-bench-\(getpid()).err").path
    defer { unlink(errFile) }
    let cliArgs = [
        cliPath, "respond", "--report", "--request", vectorsPath + "/requests/" + file, "--origin",
        "https://verifier.example", "--clock", "2027-03-01T12:00:00Z", "--out", "/dev/null",
    ]
    let floorArgs = [floorPath, vectorsPath, mode]
    let withFloor = FileManager.default.isExecutableFile(atPath: floorPath)
    var walls = [Double]()
    var floorWalls = [Double]()
    var peaks = [Int]()
    var failed = false
    for _ in 0..<(quick ? 3 : 30) {
        guard let run = launch(cliArgs, errFile: errFile) else {
            failed = true
            break
        }
        walls.append(run.ns)
        if let k = run.peakKiB { peaks.append(k) }
        if withFloor {
            guard let floor = launch(floorArgs, errFile: errFile) else {
                failed = true
                break
            }
            floorWalls.append(floor.ns)
        }
    }
    if failed {
        print("NOTICE: \(name): a launch failed (the CLI or mdoc-process-floor exited with an error); skipped")
        continue
    }
    func figure(_ bench: String, _ ws: [Double], baseline: String?) -> Figure {
        let sorted = ws.sorted()
        return Figure(
            bench: bench, medianNs: sorted[sorted.count / 2],
            p90Ns: sorted[min(sorted.count - 1, sorted.count * 9 / 10)],
            baseline: baseline)
    }
    let floorName = name.replacingOccurrences(of: "process", with: "process_floor")
    var f = figure(name, walls, baseline: withFloor ? floorName : nil)
    f.peakKiB = peaks.max()
    if withFloor {
        let fl = figure(floorName, floorWalls, baseline: nil)
        f.ratio = f.medianNs / fl.medianNs
        figures.append(fl)
    }
    figures.append(f)
}

// MARK: Output

figures.removeAll { $0.medianNs.isNaN }

func fmt(_ ns: Double) -> String {
    ns >= 1_000_000
        ? String(format: "%.2f ms", ns / 1e6)
        : ns >= 1000 ? String(format: "%.2f µs", ns / 1000) : String(format: "%.0f ns", ns)
}

if !jsonOnly {
    print("mdoc-bench\(quick ? " (quick)" : "")  libcbor \(LibCBORPeer.version)  samples \(samples)")
    print(
        "bench".padding(toLength: 44, withPad: " ", startingAt: 0)
            + "median".padding(toLength: 12, withPad: " ", startingAt: 0)
            + "p90".padding(toLength: 12, withPad: " ", startingAt: 0)
            + "MB/s".padding(toLength: 9, withPad: " ", startingAt: 0) + "vs baseline")
    for f in figures {
        let mbps = f.bytes.map { String(format: "%.0f", Double($0) / f.medianNs * 1000) } ?? "-"
        let vs =
            f.ratio.map { String(format: "%.2fx time (%.1fx faster)", $0, 1 / $0) } ?? f.peakKiB.map {
                String(format: "peak RSS %.1f MiB", Double($0) / 1024)
            } ?? ""
        print(
            f.bench.padding(toLength: 44, withPad: " ", startingAt: 0)
                + fmt(f.medianNs).padding(toLength: 12, withPad: " ", startingAt: 0)
                + fmt(f.p90Ns).padding(toLength: 12, withPad: " ", startingAt: 0)
                + mbps.padding(toLength: 9, withPad: " ", startingAt: 0) + vs)
    }
}
for f in figures {
    var obj =
        "{\"bench\":\"\(f.bench)\",\"median_ns\":\(Int(f.medianNs.rounded())),\"p90_ns\":\(Int(f.p90Ns.rounded())),"
    obj += "\"baseline\":" + (f.baseline.map { "\"\($0)\"" } ?? "null") + ","
    obj += "\"ratio\":" + (f.ratio.map { String(format: "%.3f", $0) } ?? "null")
    if let b = f.bytes { obj += ",\"bytes\":\(b)" }
    if let k = f.peakKiB { obj += ",\"peak_kib\":\(k)" }
    obj += "}"
    print(obj)
}
