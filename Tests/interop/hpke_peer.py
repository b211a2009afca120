#!/usr/bin/env python3
"""Independent HPKE peer for mdoc-respond's interop test. Uses only pyhpke and cryptography.

Reads one JSON object from stdin: {"cases": [...]}. For each case (all byte strings hex):
  open:  {"kem","kdf","aead","info","aad","psk","psk_id","skR","pkS"?,"enc","ct","export_context","export_length"}
         -> {"pt": hex, "export": hex}   (opens what the Swift side sealed)
  seal:  {"kem","kdf","aead","info","aad","psk","psk_id","pkR","auth": bool,"pt","export_context","export_length"}
         -> {"enc","ct","pkS"?, "export"} (seals to the Swift side's key)
Writes {"results": [...]} to stdout; a failure is {"error": "..."}.
"""
import json
import sys

from pyhpke import AEADId, CipherSuite, KDFId, KEMId


def suite(c):
    return CipherSuite.new(KEMId(c["kem"]), KDFId(c["kdf"]), AEADId(c["aead"]))


def run(c):
    s = suite(c)
    b = bytes.fromhex
    if c["op"] == "open":
        skr = s.kem.deserialize_private_key(b(c["skR"]))
        pks = s.kem.deserialize_public_key(b(c["pkS"])) if c.get("pkS") else None
        ctx = s.create_recipient_context(b(c["enc"]), skr, info=b(c["info"]), pks=pks, psk=b(c["psk"]), psk_id=b(c["psk_id"]))
        out = {"export": ctx.export(b(c["export_context"]), c["export_length"]).hex()}
        if c["aead"] != 0xFFFF:
            out["pt"] = ctx.open(b(c["ct"]), aad=b(c["aad"])).hex()
        return out
    pkr = s.kem.deserialize_public_key(b(c["pkR"]))
    sks = None
    out = {}
    if c["auth"]:
        pair = s.kem.derive_key_pair(bytes(range(64)))
        sks = pair.private_key
        out["pkS"] = pair.public_key.to_public_bytes().hex()
    enc, ctx = s.create_sender_context(pkr, info=b(c["info"]), sks=sks, psk=b(c["psk"]), psk_id=b(c["psk_id"]))
    out["enc"] = enc.hex()
    if c["aead"] != 0xFFFF:
        out["ct"] = ctx.seal(b(c["pt"]), aad=b(c["aad"])).hex()
    out["export"] = ctx.export(b(c["export_context"]), c["export_length"]).hex()
    return out


def main():
    req = json.load(sys.stdin)
    results = []
    for c in req["cases"]:
        try:
            results.append(run(c))
        except Exception as e:  # report, do not crash: the Swift side asserts
            results.append({"error": type(e).__name__})
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
