"""Forked workers and token keys: a pre-fork server (os.fork, multiprocessing) whose parent is signing
with a key in a SoftHSM2 token when it forks. No child may hang (a fork never lands inside a module
call), and each child initialises the module itself and opens its own sessions: directly, and through
p11-kit's proxy, which enforces PKCS#11's fork rule (a child may not use the parent's initialisation)."""
import multiprocessing
import os
import threading
import time

import pytest

import annexc_peer
from mdoc_respond import Engine

MDL, MNS = "org.iso.18013.5.1.mDL", "org.iso.18013.5.1"
ORIGIN = annexc_peer.ORIGIN
PROXY_DIR = "/usr/lib/x86_64-linux-gnu"
EXPECTED = {MDL: [f"{MNS}/family_name"]}
CHILD_TIMEOUT = int(os.environ.get("MDOC_FORK_TIMEOUT", "60"))
FORKS = 16


@pytest.fixture(params=["softhsm2", "p11-kit-proxy"])
def token(request, token_contexts):
    """(context directory, engine configuration) with the device keys in the session's SoftHSM2 token,
    named directly or through p11-kit's proxy."""
    if request.param not in token_contexts:
        if os.environ.get("CI"):
            pytest.fail("p11-kit's proxy is missing (scripts/bootstrap.sh installs p11-kit-modules)")
        pytest.skip("p11-kit's proxy is not installed (p11-kit-modules)")
    config = {"pkcs11ModuleDirectories": [PROXY_DIR]} if request.param == "p11-kit-proxy" else None
    return token_contexts[request.param], config


def _request(pki):
    return annexc_peer.build_request([(MDL, MNS, ["family_name"])], "digital", "1.0", "none", pki["reader_key"],
                                     pki["reader_chain"])


def _answers(engine, pki, now):
    raw, state = _request(pki)
    return annexc_peer.verify(engine.accept(raw, ORIGIN), state, pki["iaca"], now) == EXPECTED


def _reap(children):
    """Waits for every child (at most CHILD_TIMEOUT s in all); returns their exit codes, killing and
    reporting any still running as hung (None)."""
    codes, deadline = {}, time.monotonic() + CHILD_TIMEOUT
    while len(codes) < len(children) and time.monotonic() < deadline:
        for pid in children:
            if pid not in codes:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    codes[pid] = os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    for pid in children:
        if pid not in codes:
            if os.environ.get("MDOC_FORK_DEBUG"):
                import subprocess
                subprocess.run(["gdb", "-nx", "-p", str(pid), "-batch", "-ex", "set debuginfod enabled off", "-ex", "thread apply all bt"], timeout=300)
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            codes[pid] = None
    return [codes[p] for p in children]


def test_os_fork_while_signing(token, pki, now):
    ctx, config = token
    with Engine(ctx, config=config) as engine:
        assert _answers(engine, pki, now)
        stop, errors, outputs = threading.Event(), [], []
        # The signing threads only call the engine (the request built here, the answers verified after):
        # the test's own verifier uses a vendored OpenSSL whose locks no fork guard covers.
        raw, state = _request(pki)

        def sign():
            while not stop.is_set():
                try:
                    out = engine.accept(raw, ORIGIN)
                    if len(outputs) < 4:
                        outputs.append(out)
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(repr(e))

        signers = [threading.Thread(target=sign) for _ in range(3)]
        for t in signers:
            t.start()
        children = []
        try:
            for _ in range(FORKS):
                time.sleep(0.002)
                pid = os.fork()
                if pid == 0:
                    code = 1
                    try:
                        # The inherited engine, then a fresh one: both sign through the child's own
                        # module initialisation and sessions.
                        ok = _answers(engine, pki, now)
                        with Engine(ctx, config=config) as fresh:
                            ok = ok and _answers(fresh, pki, now)
                        code = 0 if ok else 3
                    except BaseException:  # noqa: BLE001 - the exit code says it
                        code = 2
                    os._exit(code)
                children.append(pid)
        finally:
            stop.set()
            for t in signers:
                t.join()
        codes = _reap(children)
        assert codes == [0] * len(children), f"child exit codes (None: hung): {codes}"
        assert not errors, errors[:3]
        assert outputs and all(annexc_peer.verify(o, state, pki["iaca"], now) == EXPECTED for o in outputs)
        # The parent goes on signing with its own sessions.
        assert _answers(engine, pki, now)


_worker_state = None


def _worker(_):
    engine, pki, now = _worker_state
    return _answers(engine, pki, now)


def test_multiprocessing_pool_forked_from_a_signing_parent(token, pki, now):
    global _worker_state
    ctx, config = token
    with Engine(ctx, config=config) as engine:
        _worker_state = (engine, pki, now)
        assert _answers(engine, pki, now)
        stop = threading.Event()
        raw, _ = _request(pki)

        def sign():
            while not stop.is_set():
                engine.accept(raw, ORIGIN)

        t = threading.Thread(target=sign)
        t.start()
        try:
            with multiprocessing.get_context("fork").Pool(3) as pool:
                result = pool.map_async(_worker, range(6))
                answers = result.get(timeout=CHILD_TIMEOUT)
        finally:
            stop.set()
            t.join()
            _worker_state = None
        assert answers == [True] * 6
