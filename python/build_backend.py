"""The in-tree PEP 517 build backend of `pip install ./python` (a checkout of mdoc-respond).

It writes the wheel straight into the directory pip gives it, so the source tree is left as it was (no
build/ or *.egg-info), and puts the C library inside the package: $MDOC_RESPOND_LIBRARY when set, else
the checkout's .build/release/libmdocrespond.so, else .build/debug's, else it builds the release
library with the Swift toolchain (`swift build -c release --product mdocrespond`). A library built in a
checkout loads the Swift runtime of the toolchain that built it; the self-contained wheel for machines
without Swift is the one scripts/package.sh makes. Standard library only.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TAG = "py3-none-linux_x86_64"


def project_table() -> dict:
    """The [project] table of pyproject.toml."""
    path = os.path.join(HERE, "pyproject.toml")
    try:
        import tomllib
    except ImportError:  # Python 3.10: the [project] table's plain strings, read by pattern
        text = open(path, encoding="utf-8").read().split("[project]", 1)[1].split("\n[", 1)[0]
        return {k: v for k, v in re.findall(r'^([a-z-]+) = "([^"]*)"$', text, re.M)}
    with open(path, "rb") as f:
        return tomllib.load(f)["project"]


def _library() -> str:
    explicit = os.environ.get("MDOC_RESPOND_LIBRARY")
    if explicit:
        if not os.path.isfile(explicit):
            raise RuntimeError(f"MDOC_RESPOND_LIBRARY={explicit}: no such file")
        return explicit
    for config in ("release", "debug"):
        candidate = os.path.join(ROOT, ".build", config, "libmdocrespond.so")
        if os.path.isfile(candidate):
            return candidate
    try:
        subprocess.run(["swift", "build", "-c", "release", "--product", "mdocrespond"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError("libmdocrespond.so is not built and the Swift toolchain could not build it "
                           f"({e}); build it (swift build -c release --product mdocrespond), set "
                           "MDOC_RESPOND_LIBRARY, or install the wheel scripts/package.sh makes") from None
    return os.path.join(ROOT, ".build", "release", "libmdocrespond.so")


def _metadata(project: dict) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project['description']}", f"Requires-Python: {project['requires-python']}",
             "License: Apache-2.0"]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    return ("\n".join(lines) + "\n").encode()


def _dist_info(project: dict) -> str:
    return f"mdoc_respond-{project['version']}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = project_table()
    info = os.path.join(metadata_directory, _dist_info(project))
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "wb") as f:
        f.write(_metadata(project))
    return _dist_info(project)


def write_wheel(wheel_directory, library, licenses=(), generator="python/build_backend.py"):
    """Writes the wheel (tag py3-none-linux_x86_64) with `library` as mdoc_respond/libmdocrespond.so, the
    project's LICENSE and NOTICE, and `licenses` ((name, path) pairs: more licence texts, under
    dist-info/licenses/) into `wheel_directory`; returns its file name. scripts/package.sh writes the
    release wheel with it too (before auditwheel)."""
    project = project_table()
    info = _dist_info(project)
    package = os.path.join(HERE, "mdoc_respond")
    files = {}
    for name in ("__init__.py", "py.typed"):
        with open(os.path.join(package, name), "rb") as f:
            files[f"mdoc_respond/{name}"] = f.read()
    with open(library, "rb") as f:
        files["mdoc_respond/libmdocrespond.so"] = f.read()
    for name in ("LICENSE", "NOTICE"):
        with open(os.path.join(ROOT, name), "rb") as f:
            files[f"{info}/{name}"] = f.read()
    for name, path in licenses:
        with open(path, "rb") as f:
            files[f"{info}/licenses/{name}"] = f.read()
    files[f"{info}/METADATA"] = _metadata(project)
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: mdoc-respond {generator}\n"
                              f"Root-Is-Purelib: false\nTag: {TAG}\n").encode()
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"mdoc_respond-{project['version']}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(files):
            zi = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = (0o755 if path.endswith(".so") else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, files[path])
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return write_wheel(wheel_directory, _library())
