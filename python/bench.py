#!/usr/bin/env python3
"""The Python binding's accept per call, in mdoc-bench terms, beside the Swift API and the CLI process.

Times `Engine.accept` on TestVectors/requests/mdl-dataObject-v1.0-readerAuth.json (the request of
mdoc-bench's `cli.respond.process` and `swift.accept.vector_request`, same clock) from a private copy
of the built-in context: batches of at least 50 µs, 301 samples, the median; and a holder's first
request (`Engine.from_snapshot` over the context's snapshot bytes, `accept`, `close`) against it. Then runs
`mdoc-bench --filter vector_request` and `--filter cli.respond` (release build) and prints, as
mdoc-bench JSON lines, the Python figure with its ratio to the Swift API's and the CLI's.

    swift build -c release --product mdocrespond --product mdoc-bench --product mdoc-respond
    MDOC_RESPOND_LIBRARY=.build/release/libmdocrespond.so python3 python/bench.py [--quick]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from mdoc_respond import Engine  # noqa: E402

CLOCK = "2027-03-01T12:00:00Z"
ORIGIN = "https://verifier.example"


def measure(body, quick):
    for _ in range(3 if quick else 50):
        body()
    batch = 1
    while True:
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            body()
        if time.perf_counter_ns() - t0 > 50_000 or batch >= 1 << 16:
            break
        batch *= 2
    times = []
    for _ in range(5 if quick else 301):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            body()
        times.append((time.perf_counter_ns() - t0) / batch)
    times.sort()
    return times[len(times) // 2], times[len(times) * 9 // 10]


def bench_figures(args):
    exe = os.path.join(ROOT, ".build", "release", "mdoc-bench")
    if not os.access(exe, os.X_OK):
        print(f"NOTICE: {exe} not built; no Swift or CLI figure to compare with", file=sys.stderr)
        return {}
    out = subprocess.run([exe, "--json-only", *args], capture_output=True, text=True, check=True).stdout
    return {f["bench"]: f for f in map(json.loads, filter(None, out.splitlines()))}


def main():
    quick = "--quick" in sys.argv
    work = tempfile.mkdtemp(prefix="mdoc-pybench-")
    try:
        ctx = os.path.join(work, "context")
        shutil.copytree(os.path.join(ROOT, "TestVectors", "context"), ctx)
        for d, _, files in os.walk(ctx):
            os.chmod(d, 0o700)
            for f in files:
                os.chmod(os.path.join(d, f), 0o600)
        raw = open(os.path.join(ROOT, "TestVectors", "requests", "mdl-dataObject-v1.0-readerAuth.json"), "rb").read()
        with Engine(ctx, config={"testing": True, "clock": CLOCK}) as engine:
            median, p90 = measure(lambda: engine.accept(raw, ORIGIN), quick)
        snapshot = open(os.path.join(ctx, "context.cbor"), "rb").read()

        def cold():
            with Engine.from_snapshot(snapshot, config={"testing": True, "clock": CLOCK, "keyDirectory": ctx}) as fresh:
                fresh.accept(raw, ORIGIN)

        cold_median, cold_p90 = measure(cold, quick)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    others = {} if quick else {**bench_figures(["--filter", "vector_request"]), **bench_figures(["--filter", "cli.respond"])}
    swift = others.get("swift.accept.vector_request")
    cli = others.get("cli.respond.process")
    print(json.dumps({"bench": "python.accept.vector_request", "median_ns": round(median), "p90_ns": round(p90),
                      "baseline": "swift.accept.vector_request" if swift else None,
                      "ratio": round(median / swift["median_ns"], 3) if swift else None}, separators=(",", ":")))
    print(json.dumps({"bench": "python.cold.accept_vector_request", "median_ns": round(cold_median),
                      "p90_ns": round(cold_p90), "baseline": "python.accept.vector_request",
                      "ratio": round(cold_median / median, 3)}, separators=(",", ":")))
    for name in ("abi.accept.vector_request", "swift.accept.vector_request", "cli.respond.process"):
        if name in others:
            print(json.dumps(others[name], separators=(",", ":")))
    if cli:
        print(json.dumps({"bench": "python.accept.vector_request_vs_cli", "median_ns": round(median),
                          "p90_ns": round(p90), "baseline": "cli.respond.process",
                          "ratio": round(median / cli["median_ns"], 4)}, separators=(",", ":")))


if __name__ == "__main__":
    main()
