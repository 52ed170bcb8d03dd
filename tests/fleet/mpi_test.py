#!/usr/bin/env python3
"""An MPI job under fbcount run: `fbcount run -- mpirun -np 3 vkt-lenet-mpi` collects one census
per rank (process.rank 0, 1, 2) and nothing from mpirun, which uses no backend; the rank whose
last batch is short, and only it, shows the fallbacks of its other path (vkt_pow, played by
VKT_NATIVE_DISABLE=pow); `report --by rank` tells the ranks apart.

usage: mpi_test.py FBCOUNT SHIM VKT_LENET_MPI
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verdict import done, expect  # noqa: E402

FB, SHIM, PROG = (os.path.abspath(a) for a in sys.argv[1:4])
mpirun = shutil.which("mpirun")
if not mpirun:
    print("FAIL: mpirun is not installed (tools/deps/test-mpi.txt: openmpi-bin)")
    sys.exit(1)
tmp = tempfile.mkdtemp(prefix="fbcount-mpi-")
try:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FBCOUNT_") and k not in ("LD_PRELOAD", "VKT_FALLBACK_RESULT")}
    env.update(FBCOUNT_SHIM=SHIM, VKT_NATIVE_DISABLE="pow")
    out = os.path.join(tmp, "job")
    p = subprocess.run([FB, "run", "-o", out, "--", mpirun, "-np", "3", "--oversubscribe",
                        "--allow-run-as-root", PROG], capture_output=True, text=True, env=env,
                       timeout=240)
    expect(p.returncode == 0, f"fbcount run mpirun: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    short = re.findall(r"rank (\d+): \d+ steps, last batch 7 images \(short", p.stdout)
    expect(short == ["2"], f"rank 2 has the short last batch: {short}\n{p.stdout}")
    dumps = [json.load(open(os.path.join(out, n))) for n in sorted(os.listdir(out))
             if n.endswith(".json")]
    ranks = sorted(d["process"].get("rank", -1) for d in dumps)
    expect(ranks == [0, 1, 2] and all(d["process"]["exe"].endswith("vkt-lenet-mpi") for d in dumps),
           "three censuses, ranks 0, 1 and 2, none from mpirun: %s" %
           [(os.path.basename(d["process"]["exe"]), d["process"].get("rank")) for d in dumps])
    pow_by_rank = {d["process"].get("rank"): sum(o["count"] for o in d["ops"] if o["op"] == "vkt_pow")
                   for d in dumps}
    expect(pow_by_rank.get(2) == 1 and pow_by_rank.get(0) == 0 and pow_by_rank.get(1) == 0,
           f"only the short batch's rank falls back, once: {pow_by_rank}")
    sites = {s["site"] for d in dumps for o in d["ops"] for s in o["sites"]}
    expect(sites == {"clip_update"}, f"the fallback's site is clip_update: {sites}")
    m = re.search(r"fbcount: (\d+) processes watched, (\d+) used a backend", p.stderr)
    expect(m and int(m.group(1)) >= 4 and m.group(2) == "3",
           f"summary: mpirun and 3 ranks watched, 3 used a backend: {m and m.group(0)}\n{p.stderr}")
    r = subprocess.run([FB, "report", "--by", "rank", out], capture_output=True, text=True)
    rows = re.findall(r"^\s+(?:rank )?([012])\s+(\d+)\b", r.stdout, re.M)
    expect(r.returncode == 0 and ("2", "1") in rows,
           f"report --by rank: rank 2 has the one fallback:\n{r.stdout}{r.stderr}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

done("mpi")
