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
