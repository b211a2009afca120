"""Python binding of libmdocrespond (include/mdoc_respond.h) through ctypes: no compiled code of its own.

    from mdoc_respond import Engine

    with Engine("/path/to/context") as engine:
        response = engine.accept(request_bytes, "https://verifier.example")

        request = engine.parse(request_bytes, "https://verifier.example")
        print(request.consent)                       # the consent model (dict)
        response = request.respond(approve=["org.iso.18013.5.1/age_over_18"])

Every refusal raises MdocError, carrying the engine's status code (.code), its name (.name, e.g.
"keyUnavailable") and a static detail (.detail; never request content, values, keys or origins).
Engines are thread-safe: share one between threads (ctypes releases the GIL during each call).

The shared library is found, in order: the `library` argument, the MDOC_RESPOND_LIBRARY environment
variable, the one inside this package (the wheel `scripts/package.sh` builds ships a self-contained
libmdocrespond.so beside this file), the repository's .build/release and .build/debug (when this
package runs from a checkout), then the system's library path (libmdocrespond.so).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import re
import threading
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Sequence, TypeVar, Union

__all__ = ["ABI_VERSION", "Engine", "MdocError", "Request", "__version__", "load_library", "status_name"]

#: This release's version (the repository's VERSION; the library's mdoc_version() says the same).
__version__ = "0.20.0"

#: The ABI version this binding was written for (MDOC_RESPOND_ABI_VERSION).
ABI_VERSION = 1

_DETAIL_CAPACITY = 256


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("detail", ctypes.c_char * _DETAIL_CAPACITY)]


_RULE = re.compile(r"^([A-Za-z0-9]+\.[A-Za-z0-9]+): ")


class MdocError(Exception):
    """A refusal by the engine or the ABI: `code` (the MDOC_ERR_* number), `name`, `detail`, and
    `rule` (`"<domain>.<rule>"`, e.g. `"annexC.nonceNotBytes"` or `"configuration.unknownMember"`: the
    rule that refused, as the header's detail convention gives it; None for the ABI's own misuse codes)."""

    def __init__(self, code: int, name: str, detail: str) -> None:
        super().__init__(f"{name}: {detail}")
        self.code = code
        self.name = name
        self.detail = detail
        match = _RULE.match(detail)
        self.rule: Optional[str] = match.group(1) if match else None


_lib: Optional[ctypes.CDLL] = None
_lib_lock = threading.Lock()

_H = TypeVar("_H", bound="_Handle")

Approve = Union[str, Sequence[str], Mapping[int, Sequence[str]]]


def _candidates(explicit: Optional[str]) -> Iterable[str]:
    if explicit:
        yield explicit
        return
    env = os.environ.get("MDOC_RESPOND_LIBRARY")
    if env:
        yield env
        return
    # The library shipped inside the package (the wheel scripts/package.sh builds).
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libmdocrespond.so")
    root = os.path.dirname(os.path.dirname(here))
    for config in ("release", "debug"):
        yield os.path.join(root, ".build", config, "libmdocrespond.so")
    found = ctypes.util.find_library("mdocrespond")
    if found:
        yield found


def load_library(path: Optional[str] = None) -> ctypes.CDLL:
    """Loads libmdocrespond once per process (see the module notes for where it is looked for) and
    checks its ABI version."""
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for candidate in _candidates(path):
            if os.path.sep in candidate and not os.path.exists(candidate):
                tried.append(candidate)
                continue
            lib = ctypes.CDLL(candidate)
            break
        else:
            raise OSError("libmdocrespond.so not found (tried: %s); set MDOC_RESPOND_LIBRARY" % ", ".join(tried))
        _declare(lib)
        version = lib.mdoc_abi_version()
        if version != ABI_VERSION:
            raise OSError(f"libmdocrespond ABI version {version}, this binding needs {ABI_VERSION}")
        _lib = lib
        return lib


#: The C observer callback: (context, event JSON).
_OBSERVER_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


def _declare(lib: ctypes.CDLL) -> None:
    vp, sz, i32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32
    out_bytes = ctypes.POINTER(ctypes.c_void_p)
    err = ctypes.POINTER(_Error)
    signatures = {
        "mdoc_abi_version": (ctypes.c_uint32, []),
        "mdoc_version": (ctypes.c_char_p, []),
        "mdoc_status_name": (ctypes.c_char_p, [i32]),
        "mdoc_engine_open": (i32, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(vp), err]),
        "mdoc_engine_open_snapshot": (i32, [ctypes.c_char_p, sz, ctypes.c_char_p, ctypes.POINTER(vp), err]),
        "mdoc_engine_open_observed": (i32, [ctypes.c_char_p, ctypes.c_char_p, _OBSERVER_FN, vp, ctypes.POINTER(vp),
                                            err]),
        "mdoc_engine_release": (i32, [vp]),
        "mdoc_accept": (i32, [vp, ctypes.c_char_p, sz, ctypes.c_char_p, out_bytes, ctypes.POINTER(sz), err]),
        "mdoc_parse": (i32, [vp, ctypes.c_char_p, sz, ctypes.c_char_p, ctypes.POINTER(vp), err]),
        "mdoc_request_consent_json": (i32, [vp, out_bytes, ctypes.POINTER(sz), err]),
        "mdoc_respond": (i32, [vp, ctypes.c_char_p, out_bytes, ctypes.POINTER(sz), err]),
        "mdoc_request_release": (i32, [vp]),
        "mdoc_free": (None, [vp]),
    }
    for name, (restype, argtypes) in signatures.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes


def status_name(code: int) -> str:
    """The name of a status code ("ok", "keyUnavailable", ...; "unknown" for numbers the ABI never returns)."""
    name: bytes = load_library().mdoc_status_name(code)
    return name.decode()


def _raise(code: int, err: _Error) -> None:
    raise MdocError(code, status_name(code), err.detail.decode("utf-8", "replace"))


def _take(lib: ctypes.CDLL, ptr: ctypes.c_void_p, length: ctypes.c_size_t) -> bytes:
    try:
        return ctypes.string_at(ptr, length.value) if ptr.value and length.value else b""
    finally:
        lib.mdoc_free(ptr)


def _bytes(value: Any, what: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be bytes")


MDOC_ERR_INVALID_ARGUMENT = 100


def _c_string(data: bytes, what: str) -> bytes:
    """The bytes of a NUL-terminated C argument: an embedded NUL would make C read a shorter string
    (a signed request answered for a truncated origin), so it is refused here."""
    if b"\0" in data:
        raise MdocError(MDOC_ERR_INVALID_ARGUMENT, "invalidArgument", f"{what} contains a NUL character")
    return data


def _text(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be str")
    return _c_string(value.encode("utf-8"), what)


def _path(value: Union[str, "os.PathLike[str]"], what: str) -> bytes:
    return _c_string(os.fsencode(value), what)


def _json(value: Optional[Mapping[str, Any]]) -> Optional[bytes]:
    # json.dumps escapes a NUL inside a string as \u0000; the check keeps that true for any encoder.
    return None if value is None else _c_string(json.dumps(value, separators=(",", ":")).encode(), "JSON")


class _Handle:
    """A library handle released once: close() (or `with`, or garbage collection). The handle value is
    kept after release, so a later call is refused by the library's registry ("invalidHandle")."""

    _release = ""  # the library function that releases this kind of handle
    _lib: ctypes.CDLL
    _handle: Optional[int] = None
    _released = False

    def close(self) -> None:
        """Releases the handle (idempotent here; the library itself refuses a second release)."""
        if self._handle and not self._released:
            self._released = True
            getattr(self._lib, self._release)(self._handle)

    def __enter__(self: "_H") -> "_H":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class Engine(_Handle):
    """An engine over one credential context: `Engine(context_dir)` (the directory `mdoc-respond
    context` manages) or `Engine.from_snapshot(bytes)`. `config` is the configuration of
    mdoc_respond.h as a dict (clock, protocol, limits, trust, ...). Thread-safe; close() (or `with`)
    releases it (requests parsed from it stay usable until closed), after which every call raises
    MdocError("invalidHandle")."""

    _release = "mdoc_engine_release"

    def __init__(self, context_dir: Union[str, "os.PathLike[str]"], *, config: Optional[Mapping[str, Any]] = None,
                 library: Optional[str] = None,
                 observer: Optional[Callable[[Dict[str, Any]], None]] = None) -> None:
        """`observer`, when given, is called after every accept, parse and respond (and refusal) with a
        dict of counts and timings, never content: {"operation", "protocol", "code", "rule",
        "readerVerdict", "seconds", "stages"} (mdoc_respond.h, mdoc_observer_fn; "stages" maps each stage
        the call ran, of read, check, plan, build and seal, to its seconds). It runs on the calling thread;
        an exception it raises is not propagated."""
        self._lib = load_library(library)
        handle = ctypes.c_void_p()
        err = _Error()
        path = _path(context_dir, "context_dir")
        if observer is None:
            rc = self._lib.mdoc_engine_open(path, _json(config), ctypes.byref(handle), ctypes.byref(err))
        else:
            def forward(_context: Optional[int], event: Optional[bytes]) -> None:
                try:
                    observer(json.loads(event or b"{}"))
                except Exception:  # noqa: BLE001 - an observer's failure must not break the call
                    pass
            # Kept alive as long as the engine: the library calls it after every call.
            self._observer = _OBSERVER_FN(forward)
            rc = self._lib.mdoc_engine_open_observed(path, _json(config), self._observer, None, ctypes.byref(handle),
                                                     ctypes.byref(err))
        if rc != 0:
            _raise(rc, err)
        self._handle: Optional[int] = handle.value

    @classmethod
    def from_snapshot(cls, snapshot: bytes, *, config: Optional[Mapping[str, Any]] = None,
                      library: Optional[str] = None) -> "Engine":
        """An engine over snapshot bytes (a context.cbor) held in memory; key files are found under
        config["keyDirectory"], pkcs11: keys need none."""
        data = _bytes(snapshot, "snapshot")
        self = cls.__new__(cls)
        self._lib = load_library(library)
        handle = ctypes.c_void_p()
        err = _Error()
        rc = self._lib.mdoc_engine_open_snapshot(data, len(data), _json(config), ctypes.byref(handle), ctypes.byref(err))
        if rc != 0:
            _raise(rc, err)
        self._handle = handle.value
        return self

    def accept(self, request: bytes, origin: str) -> bytes:
        """Answers a raw Digital Credentials request from `origin`, releasing everything requested and
        held; returns the response in the request's framing."""
        data = _bytes(request, "request")
        out, length, err = ctypes.c_void_p(), ctypes.c_size_t(), _Error()
        rc = self._lib.mdoc_accept(self._handle, data, len(data), _text(origin, "origin"), ctypes.byref(out),
                                   ctypes.byref(length), ctypes.byref(err))
        if rc != 0:
            _raise(rc, err)
        return _take(self._lib, out, length)

    def parse(self, request: bytes, origin: str) -> "Request":
        """Parses a raw request for a consent screen (see Request)."""
        data = _bytes(request, "request")
        handle, err = ctypes.c_void_p(), _Error()
        rc = self._lib.mdoc_parse(self._handle, data, len(data), _text(origin, "origin"), ctypes.byref(handle),
                                  ctypes.byref(err))
        if rc != 0:
            _raise(rc, err)
        return Request(self._lib, handle.value)


class Request(_Handle):
    """A parsed request: `consent` is the consent model (a dict with "protocol", "readerVerdict" and
    "documents"; element ids as "namespace/identifier", never values); respond() answers it with the
    holder's approval. May be answered more than once; close() (or `with`) releases it."""

    _release = "mdoc_request_release"

    def __init__(self, lib: ctypes.CDLL, handle: Optional[int]) -> None:
        self._lib = lib
        self._handle = handle

    @property
    def consent(self) -> Dict[str, Any]:
        """The consent model, as mdoc_request_consent_json gives it."""
        out, length, err = ctypes.c_void_p(), ctypes.c_size_t(), _Error()
        rc = self._lib.mdoc_request_consent_json(self._handle, ctypes.byref(out), ctypes.byref(length), ctypes.byref(err))
        if rc != 0:
            _raise(rc, err)
        model: Dict[str, Any] = json.loads(_take(self._lib, out, length))
        return model

    def respond(self, approve: Approve = "all", *, using: Optional[Mapping[int, str]] = None,
                consented: Optional[Mapping[str, Sequence[str]]] = None,
                plain_fallback: Optional[Sequence[int]] = None) -> bytes:
        """Answers with what the holder approved: "all" (everything shown), a list of
        "namespace/identifier" elements, or {document index: [elements]}. `using` picks the credential
        per document index; `consented` is what the platform showed ({docType: [elements]});
        `plain_fallback` lists the documents whose proof request the holder agreed to answer with a
        plain, linkable presentation (consent["documents"][i]["zeroKnowledge"]["answer"]["form"] ==
        "plainFallback"); otherwise such a document is refused (rule "zk.fallbackNotApproved")."""
        approval: Dict[str, Any] = {}
        if isinstance(approve, str):
            if approve != "all":
                raise ValueError('approve must be "all", a list of elements, or {index: [elements]}')
            approval["approve"] = "all"
        elif isinstance(approve, Mapping):
            approval["approve"] = {str(int(k)): list(v) for k, v in approve.items()}
        else:
            approval["approve"] = list(approve)
        if using is not None:
            approval["using"] = {str(int(k)): v for k, v in using.items()}
        if consented is not None:
            approval["consented"] = {k: list(v) for k, v in consented.items()}
        if plain_fallback is not None:
            approval["plainFallback"] = [int(i) for i in plain_fallback]
        out, length, err = ctypes.c_void_p(), ctypes.c_size_t(), _Error()
        rc = self._lib.mdoc_respond(self._handle, _json(approval), ctypes.byref(out), ctypes.byref(length),
                                    ctypes.byref(err))
        if rc != 0:
            _raise(rc, err)
        return _take(self._lib, out, length)
