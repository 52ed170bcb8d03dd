#!/usr/bin/env python3
"""The man pages render without a groff warning, and the JSON schemas accept what the
command and the shim really write (hand-made dumps, and every report, diff and check form).

usage: docs_test.py FBCOUNT DATA_DIR SOURCE_ROOT [BUILD_ROOT]
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

FB, DATA, SRC = (os.path.abspath(a) for a in sys.argv[1:4])
BUILD = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


pages = [os.path.join(SRC, "tools", "fbcount", "fbcount.1")] + \
        sorted(glob.glob(os.path.join(SRC, "docs", "man", "*.[1-9]")))
for page in pages:
    p = subprocess.run(["groff", "-ww", "-z", "-man", page], capture_output=True, text=True)
    expect(p.returncode == 0 and not p.stderr, f"{page}: groff warns: {p.stderr}")
    p = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                       env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
    text = re.sub(r".\x08", "", p.stdout)  # overstrike bold, where man keeps it
    expect(p.returncode == 0 and "NAME" in text and "SEE ALSO" in text,
           f"{page}: man -l fails: {p.stderr}")

try:
    import jsonschema
except ImportError:  # Debian's python3-jsonschema, when another python3 comes first on PATH
    sys.path.append("/usr/lib/python3/dist-packages")
    import jsonschema


def schema(name):
    return json.load(open(os.path.join(SRC, "docs", "schema", f"fbcount-{name}.schema.json")))


def validate(doc, name, what):
    try:
        jsonschema.validate(doc, schema(name))
    except jsonschema.ValidationError as e:
        expect(False, f"{what}: not a valid {name}: {e.message} at {list(e.absolute_path)}")


dumps = sorted(glob.glob(os.path.join(DATA, "**", "*.json"), recursive=True))
if BUILD:  # dumps the real shim wrote in this build's tests, when there are any
    dumps += sorted(glob.glob(os.path.join(BUILD, "**", "fbcount.*.json"), recursive=True))[:20]
for d in dumps:
    validate(json.load(open(d)), "dump", d)
with tempfile.TemporaryDirectory() as tmp:
    # a dump with every newer field, as the spec has it
    full = json.load(open(os.path.join(DATA, "run1", "fbcount.lenet.4242.1.json")))
    full["process"].update(id="0" * 31 + "1", parent_id="f" * 32, rank=2, elapsed_ns=10**9,
                           start_time="2026-11-30T18:00:00Z")
    full["config"].update(timing="fallback", py_backend=["vkt"])
    full["total"].update(ns=5, host_ns=1)
    full["reason"], full["signal"], full["signal_name"] = "signal", 15, "SIGTERM"
    full["stacks"][0]["frames"].insert(2, {"ip": "0x55550000a010", "symbol": "_ZN1a1bEv",
                                           "file": "a.h", "line": 3, "inlined": True})
    full["stacks"][0]["frames"].append({"python": True, "symbol": "f", "file": "t.py",
                                        "line": 1})
    for o in full["ops"]:
        o.update(ns=2, max_ns=1)
    validate(full, "dump", "dump with the newer fields")
    path = os.path.join(tmp, "full.json")
    json.dump(full, open(path, "w"))
    runs = [os.path.join(DATA, "run1"), path]
    for src in runs:
        for by in ("op", "site", "stack", "shape", "rank", "host", "process"):
            out = subprocess.run([FB, "report", "--format", "json", "--by", by, src],
                                 capture_output=True, text=True).stdout
            validate(json.loads(out), "report", f"report --by {by} {src}")
    for by in ("op", "site"):
        out = subprocess.run([FB, "diff", "--format", "json", "--all", "--by", by,
                              os.path.join(DATA, "before"), path],
                             capture_output=True, text=True).stdout
        validate(json.loads(out), "diff", f"diff --by {by}")
    for args in (["--max", "100"], ["--max-time", "1s", "--host"], []):
        out = subprocess.run([FB, "check", "--json"] + args + [path], capture_output=True,
                             text=True).stdout
        validate(json.loads(out), "check", f"check --json {args}")
for name in ("dump", "report", "diff", "check"):
    jsonschema.Draft202012Validator.check_schema(schema(name))

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print(f"{len(pages)} man pages and {len(dumps)} dumps checked; all passed")
