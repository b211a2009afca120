"""Fixtures: a private copy of the built-in test context, the test PKI, and the independent verifiers
of Tests/interop (cbor2, cryptography, pyhpke, jwcrypto; no project code) importable as modules."""
import datetime
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.environ.get("MDOC_TEST_VECTORS", os.path.join(ROOT, "TestVectors"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "interop"))
sys.path.insert(0, os.path.join(ROOT, "python"))


@pytest.fixture
def context_dir(tmp_path):
    """TestVectors/context copied with the modes the engine requires (a clone's files carry the umask's)."""
    import token_context

    return token_context.private_copy(os.path.join(VECTORS, "context"), str(tmp_path / "context"))


@pytest.fixture(scope="session")
def pki():
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    p = os.path.join(VECTORS, "pki")
    return {
        "iaca": x509.load_der_x509_certificate(open(os.path.join(p, "iaca.der"), "rb").read()),
        "reader_key": serialization.load_pem_private_key(open(os.path.join(p, "reader.key.pem"), "rb").read(), None),
        "reader_chain": [open(os.path.join(p, "reader.der"), "rb").read()],
    }


@pytest.fixture(scope="session")
def now():
    return datetime.datetime.now(datetime.timezone.utc)


PROXY_DIR = "/usr/lib/x86_64-linux-gnu"
PROXY = os.path.join(PROXY_DIR, "p11-kit-proxy.so")


@pytest.fixture(scope="session")
def token_contexts():
    """Contexts whose device keys live only in one SoftHSM2 token (built through the CLI by
    Tests/interop/token_context.py): {"softhsm2": dir} and, when p11-kit's proxy is installed,
    {"p11-kit-proxy": dir} naming the proxy as the module. One token for the whole session: SoftHSM2 reads
    its configuration once per process."""
    import token_context

    cli = os.environ.get("MDOC_RESPOND_CLI", os.path.join(ROOT, ".build", "debug", "mdoc-respond"))
    if not os.access(cli, os.X_OK) or not any(os.path.exists(m) for m in token_context.MODULES):
        pytest.skip("needs the CLI (swift build) and SoftHSM2")
    proxy = os.path.exists(PROXY)
    saved = os.environ.get("MDOC_PKCS11_MODULE_DIRS")
    if proxy:
        os.environ["MDOC_PKCS11_MODULE_DIRS"] = PROXY_DIR + ":/usr/lib/softhsm:/usr/lib/x86_64-linux-gnu/softhsm"
    try:
        ctx, root = token_context.build(cli, VECTORS, also=[PROXY] if proxy else [])
    finally:
        if saved is None:
            os.environ.pop("MDOC_PKCS11_MODULE_DIRS", None)
        else:
            os.environ["MDOC_PKCS11_MODULE_DIRS"] = saved
    out = {"softhsm2": ctx}
    if proxy:
        out["p11-kit-proxy"] = os.path.join(root, "ctx-" + os.path.basename(PROXY))
    yield out
    token_context.cleanup(root)
