#!/usr/bin/env python3
"""One allow-file grammar, one verdict: the shim (FBCOUNT_ALLOW, FBCOUNT_MODE=abort) and
`fbcount check --allow` are given the same files, tricky ones included, and must agree on
each: both let the census pass, or both refuse it (the shim by aborting at the first op it
does not allow, the command by a non-zero exit); and both warn about an entry without a
reason. The program falls back in vkt_dot, vkt_add and an op it cannot name, (unknown).

usage: allow_verdict.py FBCOUNT SHIM SHIM_APP
"""
import os
import shutil
import subprocess
import sys
import tempfile

FB, SHIM, APP = (os.path.abspath(a) for a in sys.argv[1:4])
ALL = "vkt_dot # a\nvkt_add # b\n(unknown) # c\n"
CASES = [
    # name, contents (bytes, or a special kind), both pass?, a missing-reason warning?
    ("plain", ALL, True, False),
    ("blanks, tabs, comments, CRLF",
     "# expected\n\n\t vkt_dot\t# a\r\n  vkt_add   #b\r\n(unknown)#c\r\n", True, False),
    ("an entry without a reason", "vkt_dot\nvkt_add # b\n(unknown) # c\n", True, True),
    ("listed twice", ALL + "vkt_dot # again\n", True, False),
    ("an op missing", "vkt_dot # a\n(unknown) # c\n", False, False),
    ("two words before the reason", "vkt_dot extra words # a\n" + ALL, False, False),
    ("two ops on a line", "vkt_dot vkt_add # a\n(unknown) # c\n", False, False),
    ("a control character", "vkt_dot\x1b[2J # a\n" + ALL, False, False),
    ("a NUL byte", "vkt_dot\0 # a\n" + ALL, False, False),
    ("a line too long", ALL + "v" * 5000 + "\n", False, False),
    ("an empty file", "", False, False),
    ("a FIFO", "fifo", False, False),
    ("a device", "/dev/zero", False, False),
    ("a directory", "dir", False, False),
    ("no such file", "missing", False, False),
]

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


tmp = tempfile.mkdtemp(prefix="fbcount-allow-")
base = dict(os.environ)
for k in [k for k in base if k.startswith("FBCOUNT") or k == "LD_PRELOAD"]:
    del base[k]

# The census the command checks: the same program, counting only.
census = os.path.join(tmp, "census")
os.mkdir(census)
subprocess.run([APP, "mix", "2"], env=dict(base, LD_PRELOAD=SHIM, FBCOUNT_QUIET="1",
               FBCOUNT_OUTPUT=os.path.join(census, "d.json")), check=True, capture_output=True)

for i, (name, contents, passes, warns) in enumerate(CASES):
    if contents == "fifo":
        path = os.path.join(tmp, f"fifo{i}")
        os.mkfifo(path)
    elif contents == "dir":
        path = tmp
    elif contents == "missing":
        path = os.path.join(tmp, "no-such-allow-file")
    elif contents.startswith("/dev/"):
        path = contents
    else:
        path = os.path.join(tmp, f"allow{i}")
        with open(path, "wb") as f:
            f.write(contents.encode())
    out = os.path.join(tmp, f"run{i}")
    os.mkdir(out)
    shim = subprocess.run([APP, "mix", "2", "0"], capture_output=True, text=True, timeout=60,
                          env=dict(base, LD_PRELOAD=SHIM, FBCOUNT_QUIET="1", FBCOUNT_MODE="abort",
                                   FBCOUNT_ALLOW=path, FBCOUNT_OUTPUT=os.path.join(out, "d.json")))
    cmd = subprocess.run([FB, "check", "--allow", path, census], capture_output=True, text=True,
                         timeout=60)
    shim_pass, cmd_pass = shim.returncode == 0, cmd.returncode == 0
    expect(shim_pass == passes, f"{name}: the shim {'let it run' if shim_pass else 'stopped it'} "
           f"(status {shim.returncode}): {shim.stderr}")
    expect(cmd_pass == passes, f"{name}: check exited {cmd.returncode}: {cmd.stderr}")
    expect(shim_pass == cmd_pass, f"{name}: the two halves disagree")
    expect(("has no reason" in shim.stderr) == warns, f"{name}: shim warning: {shim.stderr}")
    expect(("has no reason" in cmd.stderr) == warns, f"{name}: check warning: {cmd.stderr}")

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print(f"allow_verdict: {len(CASES)} allow files, the shim and check agree on each")
