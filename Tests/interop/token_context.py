"""Builds, through the CLI alone, a copy of the built-in test context whose device keys live only in a
SoftHSM2 token: a token initialised with softhsm2-util in a temporary directory, the published test
keys imported into it (softhsm2-util --import), and every credential imported with
`mdoc-respond context import --device-key 'pkcs11:...' --pkcs11-module ... --pin-file ...`.
The peers run their cases against it with --pkcs11; nothing here is project code."""
import json, os, secrets, shutil, subprocess, tempfile

MODULES = ["/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
           "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so"]


def private_copy(src, dst):
    """A copy of a context directory with the modes the engine requires (directories 0700, files 0600):
    a clean clone's files carry the umask's mode (often 0644), which a context opened by path refuses."""
    shutil.copytree(src, dst)
    for d, _, files in os.walk(dst):
        os.chmod(d, 0o700)
        for f in files:
            os.chmod(os.path.join(d, f), 0o600)
    return dst


def run(args):
    p = subprocess.run(args, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"{os.path.basename(args[0])} {args[1]} failed ({p.returncode}): {p.stderr.decode().strip()}")
    return p.stdout


def build(cli, vectors, module=None, also=()):
    """Returns (context directory, temporary root to remove). Sets SOFTHSM2_CONF for child processes.
    `module`: the module path the credentials' URIs name (default SoftHSM2's own). `also`: more module
    paths (e.g. p11-kit's proxy, which loads SoftHSM2 through its module configuration), each given a
    context of its own over the same token at `<root>/ctx-<basename>` (SoftHSM2 reads its configuration
    once per process, so every context a process uses must share one token directory)."""
    softhsm = next((m for m in MODULES if os.path.exists(m)), None)
    if softhsm is None:
        raise RuntimeError("SoftHSM2 is not installed")
    module = module or softhsm
    root = tempfile.mkdtemp(prefix="mdoc-peer-hsm-")
    os.makedirs(os.path.join(root, "tokens"))
    conf = os.path.join(root, "softhsm2.conf")
    with open(conf, "w") as f:
        f.write(f"directories.tokendir = {root}/tokens\nobjectstore.backend = file\nlog.level = ERROR\n")
    os.environ["SOFTHSM2_CONF"] = conf
    pin, so = secrets.token_hex(6), secrets.token_hex(6)
    pin_file = os.path.join(root, "pin")
    fd = os.open(pin_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, (pin + "\n").encode()); os.close(fd)
    token = "peer-wallet"
    run(["softhsm2-util", "--init-token", "--free", "--label", token, "--pin", pin, "--so-pin", so])
    builtin = private_copy(os.path.join(vectors, "context"), os.path.join(root, "builtin"))
    listing = json.loads(run([cli, "context", "list", "--context", builtin, "--json"]))
    for i, c in enumerate(listing):
        key = os.path.join(builtin, c["deviceKey"])
        run(["softhsm2-util", "--import", key, "--token", token, "--label", c["id"], "--id", f"{i + 1:04x}", "--pin", pin])
    contexts = [(module, os.path.join(root, "ctx"))] + [(m, os.path.join(root, "ctx-" + os.path.basename(m)))
                                                         for m in also]
    for mod, ctx in contexts:
        run([cli, "context", "init", "--context", ctx])
        run([cli, "context", "trust", "add", os.path.join(vectors, "pki", "reader-root.der"), "--context", ctx])
        for c in listing:
            args = [cli, "context", "import", "--context", ctx, "--id", c["id"],
                    "--issuer-signed", os.path.join(vectors, "credentials", f"{c['id']}.issuer-signed.cbor"),
                    "--device-key", f"pkcs11:token={token};object={c['id']};type=private",
                    "--pkcs11-module", mod, "--pin-file", pin_file]
            for d in c["docTypes"]:
                args += ["--doctype", d]
            run(args)
            if c["cancelled"]:
                run([cli, "context", "cancel", c["id"], "--context", ctx])
        mine = json.loads(run([cli, "context", "list", "--context", ctx, "--json"]))
        assert [c["id"] for c in mine] == [c["id"] for c in listing], "the token context holds the built-in credentials"
        assert all(c["deviceKey"].startswith("pkcs11:") and pin_file not in c["deviceKey"] for c in mine)
    return contexts[0][1], root


def cleanup(root):
    shutil.rmtree(root, ignore_errors=True)
