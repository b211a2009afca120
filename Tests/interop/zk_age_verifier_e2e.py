#!/usr/bin/env python3
"""End to end against a real EU age-verification verifier: zk-age-verifier 0.4.0 (its own
configuration, Google's C++ Longfellow verifier through pylongfellow 0.5.2, its own request builder
and HPKE), run on 127.0.0.1 with the test IACA as its only trust anchor, started and stopped here and
bounded in time. Its request goes to `mdoc-respond respond` unchanged; its verdict on the answer is
the test. Also: an answer altered in transit, and an answer to another session, are refused by it.

usage: zk_age_verifier_e2e.py --cli PATH --vectors TestVectors/ --zk-dir DIR   (prints 'N passed, M failed')
Run with the Python of a venv holding Tests/interop/requirements-zav.txt.
"""
import argparse, base64, json, os, socket, subprocess, sys, tempfile, time, urllib.request

ORIGIN = "https://verifier.example"


def post(port, path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--zk-dir", required=True)
    a = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        der = open(os.path.join(a.vectors, "pki/iaca.der"), "rb").read()
        os.mkdir(os.path.join(tmp, "anchors"))
        with open(os.path.join(tmp, "anchors", "iaca.pem"), "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der).decode() + "-----END CERTIFICATE-----\n")
        config = os.path.join(tmp, "config.toml")
        with open(config, "w") as f:
            f.write(f'[service]\nexpected_origin = "{ORIGIN}"\n\n[[trust.sources]]\npem = "{tmp}/anchors"\n')
        port = free_port()
        log = open(os.path.join(tmp, "server.log"), "w")
        server = subprocess.Popen([sys.executable, "-m", "zk_age_verifier", "--config", config, "--port", str(port)],
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                        if json.loads(r.read()).get("status") == "ok":
                            break
                except OSError:
                    pass
                if time.time() > deadline or server.poll() is not None:
                    log.flush()
                    print(open(os.path.join(tmp, "server.log")).read()[-2000:], file=sys.stderr)
                    raise SystemExit("zk-age-verifier did not start")
                time.sleep(0.2)

            def session():
                s = post(port, "/sessions", {"checks": ["age_over_18"]})
                dc = s["transports"]["dc"]
                request = json.dumps({"digital": dc["digital"]}).encode()
                r = subprocess.run([a.cli, "respond", "--request", "-", "--origin", ORIGIN, "--format", "json"],
                                   input=request, capture_output=True, timeout=120,
                                   env=dict(os.environ, MDOC_ZK_DIR=a.zk_dir))
                assert r.returncode == 0, r.stderr.decode()
                return s["session_id"], json.loads(r.stdout)["response"]

            def check(name, fn):
                nonlocal passed, failed
                try:
                    fn()
                    passed += 1
                except Exception as e:
                    failed += 1
                    print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)

            def verified():
                sid, response = session()
                verdict = post(port, f"/sessions/{sid}/presentation", {"response": response})
                assert verdict == {"state": "verified", "result": {"age_over_18": True},
                                   "verified_at": verdict.get("verified_at")}, verdict

            def altered():
                sid, response = session()
                raw = bytearray(base64.urlsafe_b64decode(response + "=" * (-len(response) % 4)))
                raw[len(raw) // 2] ^= 1
                bad = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
                verdict = post(port, f"/sessions/{sid}/presentation", {"response": bad})
                assert verdict.get("state") == "failed", verdict

            def other_session():
                _, response = session()
                sid = post(port, "/sessions", {"checks": ["age_over_18"]})["session_id"]
                verdict = post(port, f"/sessions/{sid}/presentation", {"response": response})
                assert verdict.get("state") == "failed", verdict

            check("zk-age-verifier verifies the engine's proof: age_over_18 true", verified)
            check("an answer altered in transit is refused by the verifier", altered)
            check("an answer to another session is refused by the verifier", other_session)
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    print(f"zk-age-verifier e2e: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
