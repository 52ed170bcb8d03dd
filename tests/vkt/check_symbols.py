#!/usr/bin/env python3
"""check_symbols.py LIBVKT VKT_H — libvkt's symbol tables keep the contracts of
vkt(3)'s RESIDENCY AND FALLBACKS: host_result and host_resident_op are called through the PLT (a
JUMP_SLOT relocation each, so an interposer sees every call); the dynamic table
exports only those two and vkt_ functions declared in vkt.h; and no internal
symbol starts with vkt_ (the shim reads that prefix as a public op)."""
import re
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def declared(header):
    text = open(header, encoding="utf-8").read()
    names = set(re.findall(r"\b(vkt_\w+)\s*\(", text))
    # Ops declared through the X-macro lists (VKT_UNARY_OPS, VKT_REDUCE_OPS, ...): X(name) or
    # X(name, class).
    for body in re.findall(r"#define VKT_\w+_OPS\(X\)((?:.*\\\n)*.*)", text):
        names |= {"vkt_" + n for n in re.findall(r"X\((\w+)(?:,\s*\w+)?\)", body)}
    return names


def main():
    lib, header = sys.argv[1], sys.argv[2]
    errors = []
    relocs = run("readelf", "-r", "--wide", lib)
    for sym in ("host_result", "host_resident_op"):
        if not re.search(r"R_X86_64_JUMP_SLOT\s+\S+\s+" + sym + r"\b", relocs) and \
           not re.search(r"JUMP_SLOT.*\b" + sym + r"\b", relocs):
            errors.append(f"no JUMP_SLOT relocation for {sym}: libvkt calls it directly, an interposer cannot see it")

    public = declared(header)
    exported = set()
    for line in run("nm", "-D", "--defined-only", lib).splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] not in "TtWwDdBbRr":
            continue
        exported.add(parts[2])
    for name in sorted(exported):
        if name in ("host_result", "host_resident_op"):
            continue
        if name.startswith("_"):  # _init, _fini and toolchain symbols
            continue
        if not name.startswith("vkt_"):
            errors.append(f"exported symbol {name} is neither a fallback exit nor public API")
        elif name not in public:
            errors.append(f"exported symbol {name} starts with vkt_ but is not declared in vkt.h")

    symtab = run("nm", lib)
    if not symtab.strip():
        print("note: libvkt is stripped; internal symbol check skipped")
    for line in symtab.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name = parts[-1]
        if not name.startswith("vkt_"):
            continue
        base = name.split(".")[0]  # vkt_x.cold / .part.0 clones belong to vkt_x
        if base not in public:
            errors.append(f"internal symbol {name} starts with vkt_")
        elif name not in exported and base not in exported:
            errors.append(f"{name} starts with vkt_ but is not exported")

    for e in errors:
        print("FAIL:", e)
    print(f"{len(exported)} exported, {len(public)} declared in vkt.h, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
