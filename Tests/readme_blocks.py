#!/usr/bin/env python3
"""Runs every command block of README.md as written (scripts/test.sh's full run calls this).

Each ```sh block's commands run in order, from a fresh directory with HOME pointing at it, where the
files the README names are placed as a newcomer would have them (`request.json`: a page's request from
TestVectors/requests; `mdl.cbor`, `mdl.pem`: a credential as issued and its device key). `mdoc-respond`
is the CLI under test (--cli), and `scripts/...` the checkout's scripts. The one command that cannot run
here is the test command itself (scripts/test.sh, which is running this): it is checked to be the
command `.ci/run` runs. The C and Python examples are compiled and run by scripts/dist-check.sh and
python/tests/test_install.py, the Swift snippets by Tests/AnnexCTests/ReadmeSnippetTests.swift.

usage: readme_blocks.py --cli PATH       prints 'readme blocks: N commands ran, M failed'
"""
import argparse, os, re, shlex, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VECTORS = os.path.join(ROOT, "TestVectors")


def commands(text):
    """The commands of every sh block: one per line, a trailing comment removed."""
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command and not command.startswith("#"):
                yield command


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    listed = list(commands(open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()))
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
    ran = failed = 0
    with tempfile.TemporaryDirectory(prefix="mdoc-readme-") as home:
        shutil.copy(os.path.join(VECTORS, "requests", "mdl-dataObject-v1.0-none.json"), os.path.join(home, "request.json"))
        shutil.copy(os.path.join(VECTORS, "credentials", "mdl.issuer-signed.cbor"), os.path.join(home, "mdl.cbor"))
        shutil.copy(os.path.join(VECTORS, "context", "keys", "mdl.pem"), os.path.join(home, "mdl.pem"))
        os.chmod(os.path.join(home, "mdl.pem"), 0o600)
        env = dict(os.environ, HOME=home, MDOC_RESPOND_TESTVECTORS=VECTORS)
        for command in listed:
            words = shlex.split(command)
            if words[0] == "scripts/test.sh":
                ok = "scripts/test.sh" in ci
                print(f"{'ok' if ok else 'FAILED'}  {command}  (the test command: .ci/run runs it)")
                failed += not ok
                continue
            if words[0] == "mdoc-respond":
                words[0] = cli
            elif words[0].startswith("scripts/"):
                words[0] = os.path.join(ROOT, words[0])
            words = [home + w[1:] if w.startswith("~") else w for w in words]
            r = subprocess.run(words, cwd=home, env=env, capture_output=True, timeout=1800)
            ran += 1
            if r.returncode != 0:
                failed += 1
                print(f"FAILED  {command}  (exit {r.returncode})\n{r.stderr.decode(errors='replace')[-2000:]}")
            else:
                print(f"ok  {command}")
    print(f"readme blocks: {ran} commands ran, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
