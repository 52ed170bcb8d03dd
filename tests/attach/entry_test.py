#!/usr/bin/env python3
"""Runs attach-entry (the shim's attach and detach entries in-process) in a fresh directory,
then checks that its detach census is the only dump: nothing is written again at exit.

usage: entry_test.py ATTACH_ENTRY SHIM FAKEVKT
"""
import json
import os
import subprocess
import sys
import tempfile

ENTRY, SHIM, FAKE = sys.argv[1:4]
with tempfile.TemporaryDirectory() as d:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FBCOUNT") and k != "LD_PRELOAD"}
    p = subprocess.run([ENTRY, SHIM, FAKE, d], capture_output=True, text=True, env=env, timeout=120)
    print(p.stdout, p.stderr, end="")
    files = sorted(os.listdir(d))
    bad = p.returncode != 0
    if len(files) != 1:
        print(f"FAIL: one dump expected (the detach's), found {files}")
        bad = True
    else:
        with open(os.path.join(d, files[0])) as f:
            dump = json.load(f)
        if dump["reason"] != "detach" or "attached_at" not in dump:
            print(f"FAIL: reason {dump['reason']}, attached_at {'attached_at' in dump}")
            bad = True
    if p.stderr:
        print("FAIL: the program's stderr is not empty")
        bad = True
sys.exit(1 if bad else 0)
