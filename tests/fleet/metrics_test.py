#!/usr/bin/env python3
"""The command's metrics text (metrics_report.c through rules/metrics): promtool accepts it, and
its counters add up to the JSON report's counts and bytes, and to the dumps' times, per op and
in total; ranks, hosts and the native share come out per process. On a hand-made census in the
spec's newest form and on real dumps of a program under the shim.

usage: metrics_test.py FBCOUNT FLEET_EXPORT SHIM SHIM_APP
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import census  # noqa: E402
from verdict import done, expect  # noqa: E402

FB, EXPORT, SHIM, APP = (os.path.abspath(a) for a in sys.argv[1:5])
SERIES = re.compile(r'^(\w+)\{(.*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse(text):
    out = []
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            out.append((m.group(1), dict(LABEL.findall(m.group(2))), float(m.group(3))))
    return out


def check(name, directory):
    prom = os.path.join(tmp, name + ".prom")
    p = subprocess.run([EXPORT, "openmetrics", prom, directory], capture_output=True, text=True)
    expect(p.returncode == 0, f"{name}: export: {p.returncode} {p.stderr}")
    text = open(prom).read()
    expect(text.endswith("# EOF\n"), f"{name}: ends with # EOF")
    pc = subprocess.run(["promtool", "check", "metrics"], stdin=open(prom), capture_output=True,
                        text=True)
    expect(pc.returncode == 0, f"{name}: promtool check metrics: {pc.stdout}{pc.stderr}")
    series = parse(text)
    rep = json.loads(subprocess.run([FB, "report", "--format", "json", directory],
                                    capture_output=True, text=True).stdout)
    dumps = [json.load(open(os.path.join(directory, n))) for n in sorted(os.listdir(directory))
             if n.endswith(".json")]
    for family, section, key in (("fbcount_fallbacks_total", "fallbacks", "count"),
                                 ("fbcount_fallback_bytes_total", "fallbacks", "bytes"),
                                 ("fbcount_host_ops_total", "host_ops", "count"),
                                 ("fbcount_host_op_bytes_total", "host_ops", "bytes"),
                                 ("fbcount_transfers_total", "transfers", "count"),
                                 ("fbcount_transfer_bytes_total", "transfers", "bytes")):
        by_op = collections.Counter()
        for f, labels, v in series:
            if f == family:
                by_op[(labels["backend"], labels["op"])] += v
        # a backend that cannot read sizes has no bytes series (its 0 would claim nothing moved)
        want = {(r["backend"], r["op"]): r[key] for r in rep[section]
                if key == "count" or r.get("bytes_known", True)}
        expect(dict(by_op) == {k: float(v) for k, v in want.items()},
               f"{name}: {family} per op {dict(by_op)}, report {want}")
    for family, kind in (("fbcount_fallback_seconds_total", "ops"),
                         ("fbcount_host_op_seconds_total", "host_ops"),
                         ("fbcount_transfer_seconds_total", "transfers")):
        got = sum(v for f, _, v in series if f == family)
        want = sum(o.get("ns", 0) for d in dumps for o in d.get(kind, [])) / 1e9
        expect(abs(got - want) < 1e-9, f"{name}: {family} {got} s, dumps {want} s")
    pids = {str(d["process"]["pid"]): d for d in dumps}
    for f, labels, v in series:
        d = pids.get(labels.get("pid"))
        expect(d is not None, f"{name}: series of an unknown pid: {labels}")
        if d is None:
            continue
        rank = d["process"].get("rank")
        expect(labels.get("rank") == (None if rank is None else str(rank))
               and labels.get("host") == d["process"]["host"]
               and labels.get("exe") == os.path.basename(d["process"]["exe"]),
               f"{name}: process labels {labels} for {d['process']}")
    for d in dumps:
        b = d.get("backend")
        if not b:
            continue
        share = [v for f, l, v in series if f == "fbcount_native_share" and
                 l["pid"] == str(d["process"]["pid"]) and l["backend"] == "vkt"]
        total = b["native"] + b["fallback"] + b["host"]
        expect(share and abs(share[0] - b["native"] / total) < 1e-6,
               f"{name}: native share of {d['process']['pid']}: {share}")


tmp = tempfile.mkdtemp(prefix="fbcount-metrics-")
try:
    hand = os.path.join(tmp, "hand")
    census.sample_census(hand)
    check("hand-made", hand)
    real = os.path.join(tmp, "real")
    os.mkdir(real)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FBCOUNT_")}
    env.update(LD_PRELOAD=SHIM, FBCOUNT_QUIET="1",
               FBCOUNT_OUTPUT=os.path.join(real, "fbcount.%e.%p.%n.json"))
    for args in (["mix", "3"], ["fork", "2"]):
        p = subprocess.run([APP] + args, capture_output=True, text=True, env=env, timeout=60)
        expect(p.returncode == 0, f"shim-app {args}: {p.returncode}")
    check("real", real)
    p = subprocess.run([FB, "report", "--format", "openmetrics", hand], capture_output=True,
                       text=True)
    expect(p.returncode == 0 and p.stdout == open(os.path.join(tmp, "hand-made.prom")).read(),
           f"fbcount report --format openmetrics gives the same text: {p.returncode} {p.stderr}")
    # four backends, transfers, unknown sizes (tests/cmd/data/backends); --where backend=
    multi = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cmd", "data",
                         "backends")
    check("backends", multi)
    p = subprocess.run([FB, "report", "--format", "openmetrics", "--where", "backend=ggml",
                        multi], capture_output=True, text=True)
    kept = {labels.get("backend") for _, labels, _ in parse(p.stdout)}
    expect(p.returncode == 0 and kept == {"ggml"} and "fbcount_transfers_total" in p.stdout,
           f"--where backend=ggml keeps ggml's series: {kept} {p.stderr}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

done("metrics")
