#!/usr/bin/env python3
"""`fbcount symbolize` writes the symbolized dump byte for byte as jansson writes a parsed and
edited document, though it rewrites the stacks from the dump's text.

data/symbolize/crash.json is the two censuses of several backends in data/backends made into
one crash dump (every stack's op or site unknown, the counts in "(unknown)" rows), with
escapes, non-ASCII strings, reals, -0, nulls, members no reader knows and a frame of a module
that is not there. crash.sym.json is what `fbcount symbolize` wrote for it when it parsed the
whole dump with jansson and wrote the tree back (commit c7e7efe), with the debug-information
policy its frames were named by ("debuginfo") added last, and without the two "(unknown)" rows
that version left beside the rows of stacks whose op their reader had named (those stacks'
counts are now moved out of the "(unknown)" rows too): the output must not change.
The same dump with blanks, with every non-ASCII character escaped, and with its frames in a
frame_table must give the same bytes; and so must a dump whose raw frames resolve in real
modules (this command and libjansson), each distinct frame symbolized once.

usage: symbolize_text.py FBCOUNT DATA_DIR
"""
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

FB, DATA = sys.argv[1], os.path.join(sys.argv[2], "symbolize")
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def symbolize(path, out):
    p = subprocess.run([FB, "symbolize", "-q", "-o", out, path], capture_output=True, text=True)
    expect(p.returncode == 0, f"symbolize {path}: exit {p.returncode}\n{p.stderr}")
    with open(out, "rb") as f:
        return f.read(), p.stderr


def with_frame_table(d):
    """The dump with each stack's frames as indices into a frame_table written after them."""
    d = copy.deepcopy(d)
    table, seen = [], {}
    for st in d["stacks"]:
        idx = []
        for fr in st["frames"]:
            key = json.dumps(fr, sort_keys=True)
            if key not in seen:
                seen[key] = len(table)
                table.append(fr)
            idx.append(seen[key])
        st["frames"] = idx
    d["frame_table"] = table
    return d


def variants(d, tmp, name):
    """The dump as the shim writes it and three spellings of the same document."""
    out = []
    for tag, doc, kw in (("compact", d, {"separators": (",", ":"), "ensure_ascii": False}),
                         ("blanks", d, {"indent": 2, "ensure_ascii": False}),
                         ("escaped", d, {"ensure_ascii": True}),
                         ("frame-table", with_frame_table(d), {"ensure_ascii": False})):
        path = os.path.join(tmp, f"{name}-{tag}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, **kw)
        out.append((tag, path))
    return out


def nm_symbol(path, name, dynamic=False):
    out = subprocess.run(["nm"] + (["-D"] if dynamic else []) + [path], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].split("@")[0] == name:
            return int(parts[0], 16)
    return None


with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(DATA, "crash.sym.json"), "rb") as f:
        golden = f.read()
    got, _ = symbolize(os.path.join(DATA, "crash.json"), os.path.join(tmp, "stored.sym.json"))
    expect(got == golden, "crash.json: the output differs from crash.sym.json")
    with open(os.path.join(DATA, "crash.json"), encoding="utf-8") as f:
        crash = json.load(f)
    for tag, path in variants(crash, tmp, "crash"):
        got, _ = symbolize(path, path + ".sym")
        expect(got == golden, f"crash.json {tag}: the output differs from crash.sym.json")

    # Raw frames in real modules: resolved, inlined chains written out, the same bytes for
    # every spelling of the dump.
    fb = os.path.realpath(FB)
    jans = next((os.path.realpath(p) for p in glob.glob("/usr/lib/*/libjansson.so.4*")
                 if nm_symbol(os.path.realpath(p), "json_loads", True)), None)
    a_op, a_site = nm_symbol(fb, "fbx_symbolize"), jans and nm_symbol(jans, "json_loads", True)
    expect(a_op and a_site, "nm found no fbx_symbolize in fbcount or json_loads in libjansson")
    if a_op and a_site:
        live = copy.deepcopy(crash)
        live["config"]["op_prefix"] = ["fbx_"]
        raw = [{"ip": hex(0x555500000000 + a_op + 8), "module": fb, "offset": hex(a_op + 8)},
               {"ip": hex(0x7f0000000000 + a_site + 9), "module": jans, "offset": hex(a_site + 9)}]
        for i in range(3):  # the same frames again: symbolized once, written each time
            live["stacks"].append({"kind": "fallback", "backend": "vkt", "op": "(unknown)",
                                   "site": "(unknown)", "count": 1 + i, "bytes": 8,
                                   "frames": copy.deepcopy(raw[i % 2:] + raw[:i % 2])})
        live["ops"][0]["count"] += 6
        live["modules"] += [{"path": fb, "base": "0x555500000000", "size": 1 << 26},
                            {"path": jans, "base": "0x7f0000000000", "size": 1 << 24}]
        first = None
        for tag, path in variants(live, tmp, "live"):
            got, err = symbolize(path, path + ".sym")
            expect("0 frames resolved" not in err, f"live {tag}: nothing resolved:\n{err}")
            first = first if first is not None else got
            expect(got == first, f"live {tag}: the output differs from the compact dump's")
        s = json.loads(first)
        names = {fr.get("symbol") for st in s["stacks"] for fr in st["frames"]}
        expect("fbx_symbolize" in names and "json_loads" in names,
               f"live: the raw frames were not named: {sorted(n for n in names if n)}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("symbolize output checks passed")
