#!/usr/bin/env python3
"""pprof profiles read back by go tool pprof: totals per sample type (-top), per op (-top with
-tagfocus), every stack with its frames and labels (-traces, -raw), mappings and build ids,
compared with the JSON report and with the dumps themselves; on a hand-made census in the
spec's newest form (times, ranks, Python and inlined frames) and on real dumps of a program
under the shim. Also the writer's refusals and its atomic, no-follow output.

usage: pprof_test.py FBCOUNT FLEET_EXPORT SHIM_LIB SHIM_APP
"""
import collections
import gzip
import json
import os
import pty
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import census  # noqa: E402
from verdict import done, expect  # noqa: E402

FB, EXPORT, SHIM, APP = sys.argv[1:5]


def sh(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120, **kw)


if not shutil.which("go"):
    print("FAIL: go is not installed (tools/deps/test-fleet.txt: golang-go)")
    sys.exit(1)


def pprof(*args):
    p = sh("go", "tool", "pprof", *args)
    expect(p.returncode == 0, f"go tool pprof {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


UNITS = {"fallbacks": "", "bytes": "B", "time": "ns", "host_ops": "", "host_bytes": "B",
         "host_time": "ns", "transfers": "", "transfer_bytes": "B", "transfer_time": "ns"}


def top_total(path, index, focus=None):
    """What -top accounts for: the whole total, or the part a -tagfocus keeps."""
    args = ["-top", "-nodefraction=0", "-sample_index=" + index]
    if UNITS[index]:
        args.append("-unit=" + UNITS[index])
    if focus:
        args.append("-tagfocus=" + focus)
    out = pprof(*args, path)
    m = re.search(r"accounting for (\d+)(?:B|ns)?, [\d.]+% of (\d+)(?:B|ns)? total", out)
    if not m:
        expect(False, f"-top {index}: no total in:\n{out}")
        return None
    if not focus:
        expect(m.group(1) == m.group(2), f"-top {index}: nodes left out:\n{out}")
    return int(m.group(1))


def top_fields(path):
    """How many times each top-level field of the Profile message occurs, read from the wire
    format itself (go tool pprof merges equal locations on reading, hiding duplicates)."""
    data = gzip.open(path).read()
    counts, i = collections.Counter(), 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v
    while i < len(data):
        tag = varint()
        counts[tag >> 3] += 1
        if tag & 7 == 0:
            varint()
        elif tag & 7 == 2:
            n = varint()
            i += n
        else:
            raise ValueError("unexpected wire type %d" % (tag & 7))
    return counts


def parse_raw(path):
    """Samples (values, labels, location ids), locations (lines), mappings of -raw."""
    out = pprof("-raw", path)
    samples, locs, maps = [], {}, []
    section, cur = None, None
    for line in out.splitlines():
        if line.startswith("Samples:"):
            section = "s"
            continue
        if line.startswith("Locations"):
            section = "l"
            continue
        if line.startswith("Mappings"):
            section = "m"
            continue
        if section == "s":
            m = re.match(r"^\s+([\d\s]+):\s*([\d\s]*)$", line)
            if m and not line.strip().startswith("fallbacks/"):
                cur = {"values": [int(x) for x in m.group(1).split()],
                       "locs": [int(x) for x in m.group(2).split()], "labels": {}}
                samples.append(cur)
            elif cur is not None:
                for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                    cur["labels"][k] = v
        elif section == "l":
            m = re.match(r"^\s+(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?(.*)$", line)
            if m:
                cur = int(m.group(1))
                locs[cur] = {"addr": int(m.group(2), 16), "mapping": int(m.group(3) or 0),
                             "lines": [m.group(4).strip()]}
            elif line.strip():
                locs[cur]["lines"].append(line.strip())
        elif section == "m":
            if line.strip():
                maps.append(line.strip())
    return samples, locs, maps


def parse_traces(text):
    """Trace blocks of -traces: (labels, value, [frame lines])."""
    out = []
    for block in text.split("-----------+-------------------------------------------------------")[1:]:
        labels, frames, value = {}, [], None
        for line in block.splitlines():
            m = re.match(r"^\s+(\w+):\s+(.*)$", line)
            if m and value is None:
                labels[m.group(1)] = m.group(2).strip()
                continue
            m = re.match(r"^\s+(\d+)\s+(.*)$", line)
            if m and value is None:
                value = int(m.group(1))
                frames.append(m.group(2).strip())
            elif line.strip() and value is not None:
                frames.append(line.strip())
        if value is not None:
            out.append((labels, value, frames))
    return out


def demangled(sym):
    """A C++ name as go tool pprof shows it: demangled, without its parameters."""
    if not sym.startswith("_Z"):
        return sym
    full = subprocess.run(["c++filt", sym], capture_output=True, text=True).stdout.strip()
    depth = 0
    for i, ch in enumerate(full):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0:
            return full[:i]
    return full


def frame_text(f, lines):
    if f.get("symbol"):
        t = demangled(f["symbol"])
    else:
        t = "[%s]" % os.path.basename(f.get("module", "?"))
    if lines and f.get("symbol") and f.get("file"):
        t += " %s:%d" % (f["file"], f.get("line", 0)) if f.get("line") else " " + f["file"]
    if f.get("inlined"):
        t += " (inline)"
    return t


def site_label(d, s):
    """The site label of a stack: the site with the file:line of its frame outward from the
    op (the innermost frame named with an op prefix), as the report names sites."""
    frames = [d["frame_table"][f] if isinstance(f, int) else f for f in s["frames"]]
    prefixes = d.get("config", {}).get("op_prefix") or ["vkt_"]
    op = next((i for i, f in enumerate(frames) if not f.get("python") and
               any(f.get("symbol", "").startswith(p) for p in prefixes)), -1)
    for f in frames[op + 1:]:
        if f.get("symbol") == s["site"] and f.get("file") and f.get("line"):
            return "%s (%s:%d)" % (s["site"], os.path.basename(f["file"]), f["line"])
    return s["site"]


def check_census(name, directory, lines):
    prof = os.path.join(tmp, name + ".pb.gz")
    p = sh(EXPORT, "pprof", prof, directory)
    expect(p.returncode == 0, f"{name}: fleet-export pprof: exit {p.returncode}: {p.stderr}")
    with open(prof, "rb") as f:
        expect(f.read(2) == b"\x1f\x8b", f"{name}: not gzip-compressed")
    rep = json.loads(sh(FB, "report", "--format", "json", directory).stdout)
    dumps = [json.load(open(os.path.join(directory, n))) for n in sorted(os.listdir(directory))
             if n.endswith(".json")]
    total = rep["total"]
    ns = total.get("ns", sum(d["total"].get("ns", 0) for d in dumps))
    host_ns = total.get("host_ns", sum(d["total"].get("host_ns", 0) for d in dumps))
    want = {"fallbacks": total["fallbacks"], "bytes": total["bytes"], "time": ns,
            "host_ops": total["host_ops"], "host_bytes": total["host_bytes"],
            "host_time": host_ns, "transfers": total["transfers"],
            "transfer_bytes": total["transfer_bytes"]}
    for index, value in want.items():
        got = top_total(prof, index)
        expect(got == value, f"{name}: -top -sample_index={index}: total {got}, report {value}")
    # per backend and op, from the samples and their labels (-tagfocus cannot AND two labels)
    per_op = collections.Counter()
    for s in parse_raw(prof)[0]:
        for k, v in enumerate(s["values"]):
            per_op[(s["labels"].get("backend"), s["labels"].get("op"), k)] += v
    for section, base in (("fallbacks", 0), ("host_ops", 3), ("transfers", 6)):
        for row in rep[section]:
            for k, key in ((base, "count"), (base + 1, "bytes")):
                got = per_op[(row["backend"], row["op"], k)]
                expect(got == row[key],
                       f"{name}: {row['backend']} {row['op']} {key}: pprof {got}, report {row[key]}")

    # every stack, with its frames and labels, as -traces shows it
    want_traces = collections.Counter()
    for d in dumps:
        for s in d["stacks"]:
            if s["kind"] != "fallback" or not s["count"]:
                continue
            fr = tuple(frame_text(d["frame_table"][f] if isinstance(f, int) else f, lines)
                       for f in s["frames"])
            want_traces[(d["process"]["pid"], s["op"], site_label(d, s), s["count"], fr)] += 1
    got_traces = collections.Counter()
    args = ["-traces", "-sample_index=fallbacks"] + (["-lines"] if lines else [])
    for labels, value, frames in parse_traces(pprof(*args, prof)):
        if value:
            got_traces[(int(labels.get("pid", -1)), labels.get("op"), labels.get("site"), value,
                        tuple(frames))] += 1
    expect(got_traces == want_traces,
           f"{name}: -traces differ:\n  only in pprof: {list((got_traces - want_traces).items())[:3]}"
           f"\n  only in dumps: {list((want_traces - got_traces).items())[:3]}")

    samples, locs, maps = parse_raw(prof)
    # one location per distinct frame (its address within its module: not the ip, which
    # differs between processes), inlined frames sharing their caller's
    groups = set()
    for d in dumps:
        for s in d["stacks"]:
            group = []
            for x in s["frames"]:
                f = d["frame_table"][x] if isinstance(x, int) else x
                group.append(json.dumps({k: v for k, v in f.items() if k != "ip"}, sort_keys=True))
                if not f.get("inlined"):
                    groups.add(tuple(group))
                    group = []
    fields = top_fields(prof)
    expect(fields[4] == len(groups), f"{name}: {fields[4]} locations for {len(groups)} distinct frames")
    expect(fields[2] == sum(len(d["stacks"]) for d in dumps), f"{name}: {fields[2]} samples")
    expect(len(samples) == sum(len(d["stacks"]) for d in dumps),
           f"{name}: {len(samples)} samples for {sum(len(d['stacks']) for d in dumps)} stacks")
    ranks = {d["process"]["pid"]: d["process"].get("rank") for d in dumps}
    for s in samples:
        pid = int(s["labels"].get("pid", -1))
        r = ranks.get(pid)
        expect(pid in ranks, f"{name}: sample with pid {pid}")
        expect((r is None and "rank" not in s["labels"]) or s["labels"].get("rank") == str(r),
               f"{name}: rank label {s['labels'].get('rank')} for pid {pid} (dump: {r})")
        expect(s["labels"].get("host") == dumps[0]["process"]["host"], f"{name}: host label")
        expect(s["labels"].get("backend"), f"{name}: every sample has a backend label")
    modules = {m["path"]: m.get("build_id") for d in dumps for m in d.get("modules", [])}
    used = {f["module"] for d in dumps for s in d["stacks"]
            for f in (d["frame_table"][x] if isinstance(x, int) else x for x in s["frames"])
            if "module" in f}
    for path in used:
        line = [m for m in maps if " %s " % path in m + " "]
        expect(len(line) == 1, f"{name}: mapping of {path}: {line}")
        if line and modules.get(path):
            expect(modules[path] in line[0].split(), f"{name}: build id of {path}: {line[0]}")
    spans = sorted(tuple(int(x, 16) for x in m.split()[1].split("/")[:2])
                   for m in maps)
    expect(all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), f"{name}: mappings overlap: {maps}")
    return prof


tmp = tempfile.mkdtemp(prefix="fbcount-pprof-")
try:
    # --- the spec's newest dumps, made by hand ------------------------------------------
    hand = os.path.join(tmp, "hand")
    census.sample_census(hand)
    prof = check_census("hand-made", hand, lines=True)
    out = pprof("-traces", "-lines", prof)
    expect("gemm_tile dot.c:70 (inline)\n             vkt_dot dot.c:77" in out,
           "inlined frame shown inside its caller's location:\n" + out)
    expect("<module> /src/train.py:80" in out and "train_step /src/train.py:42" in out,
           "Python frames with file and line:\n" + out)
    samples, locs, maps = parse_raw(prof)
    pyloc = [loc for loc in locs.values() if "train.py" in " ".join(loc["lines"])]
    expect(pyloc and all(loc["mapping"] == 0 for loc in pyloc), f"Python locations have no mapping: {pyloc}")
    expect(maps and "/opt/app/train" in maps[0], f"the program's mapping comes first: {maps}")
    tags = pprof("-tags", "-sample_index=fallbacks", prof)
    expect(re.search(r"rank: Total 48\.0\s+36\.0 \(75\.00%\): 1\s+12\.0 \(25\.00%\): 0", tags),
           "rank labels split the fallbacks 36/12:\n" + tags)
    comments = pprof("-raw", prof)
    expect("Comment: times: measured" in comments, "comment says times are measured")

    # older dumps (no times): time types are zero and the profile says so
    old = os.path.join(tmp, "untimed")
    os.mkdir(old)
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cmd", "data",
                             "run1", "fbcount.lenet.4242.1.json"), old)
    p = check_census("untimed", old, lines=False)
    expect("Comment: times: not measured" in pprof("-raw", p), "untimed comment")

    # two processes, four backends, transfers, sizes a backend cannot read (tests/cmd/data)
    multi = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cmd", "data",
                         "backends")
    p = check_census("backends", multi, lines=False)
    tags = pprof("-tags", "-sample_index=fallbacks", p)
    expect(re.search(r"backend: Total 18\.0", tags) and "torch" in tags and "mygpu" in tags,
           "backend labels split the fallbacks:\n" + tags)
    expect("forward (model.py:8)" in tags and "generate (app.c:88)" in tags,
           "site labels carry file:line:\n" + tags)
    expect(top_total(p, "fallbacks", "backend=^torch$") == 6, "-tagfocus=backend=^torch$: 6")
    sub = os.path.join(tmp, "torch.pb.gz")
    r = sh(FB, "report", "--format", "pprof", "--where", "backend=torch", "-o", sub, multi)
    expect(r.returncode == 0 and top_total(sub, "fallbacks") == 6 and
           top_total(sub, "transfers") == 0, f"--where backend=torch keeps torch's samples: {r.stderr}")

    # --- real dumps of a program under the shim --------------------------------------------
    real = os.path.join(tmp, "real")
    os.mkdir(real)
    env = dict(os.environ, LD_PRELOAD=SHIM, FBCOUNT_QUIET="1",
               FBCOUNT_OUTPUT=os.path.join(real, "fbcount.%e.%p.%n.json"))
    for args in (["mix", "3"], ["stacks", "40"], ["fork", "2"]):
        p = sh(APP, *args, env=env)
        expect(p.returncode == 0, f"shim-app {args}: exit {p.returncode}: {p.stderr}")
    check_census("real", real, lines=False)

    # --- refusals and the output file ------------------------------------------------------
    def on_terminal(argv):
        """Runs argv with a terminal as its standard output: (exit status, what it printed)."""
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(argv[0], argv)
        text = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            text += chunk
        _, status = os.waitpid(pid, 0)
        os.close(fd)
        return os.WEXITSTATUS(status), text

    code, text = on_terminal([EXPORT, "pprof", "-", hand])
    expect(code == 2 and b"not written to a terminal" in text,
           f"stdout on a terminal refused: {code} {text!r}")
    p = sh(EXPORT, "pprof", "/nonexistent/dir/x.pb.gz", hand)
    expect(p.returncode == 3 and p.stderr.count("\n") == 1 and "/nonexistent/dir/x.pb.gz: cannot write"
           in p.stderr, f"unwritable path: {p.returncode} {p.stderr!r}")
    victim = os.path.join(tmp, "victim")
    open(victim, "w").write("keep me")
    link = os.path.join(tmp, "link.pb.gz")
    os.symlink(victim, link)
    p = sh(EXPORT, "pprof", link, hand)
    expect(p.returncode == 0 and not os.path.islink(link) and open(victim).read() == "keep me",
           "a symbolic link at the path is replaced, not followed")
    expect(not [n for n in os.listdir(tmp) if ".tmp." in n], "no temporary left")
    # one policy for every file the command writes (output.h): a device is refused
    p = sh(EXPORT, "pprof", "/dev/null", hand)
    expect(p.returncode == 3 and "not a regular file" in p.stderr and
           os.stat("/dev/null").st_rdev != 0 and not os.path.isfile("/dev/null"),
           f"/dev/null is refused, not replaced: {p.returncode} {p.stderr!r}")
    if os.path.exists("/dev/full"):  # a full disk: standard output redirected to /dev/full
        with open("/dev/full", "wb") as full:
            p = subprocess.run([EXPORT, "pprof", "-", hand], stdout=full, stderr=subprocess.PIPE,
                               text=True, timeout=60)
        expect(p.returncode == 3 and "No space left" in p.stderr,
               f"/dev/full: {p.returncode} {p.stderr!r}")
    with open(os.path.join(tmp, "stdout.pb.gz"), "wb") as f:
        p = subprocess.run([EXPORT, "pprof", "-", hand], stdout=f, timeout=60)
    expect(p.returncode == 0 and open(os.path.join(tmp, "stdout.pb.gz"), "rb").read() ==
           open(os.path.join(tmp, "hand-made.pb.gz"), "rb").read(),
           "standard output (not a terminal) gets the same profile as a file")

    # --- through the command ----------------------------------------------------------------
    out = os.path.join(tmp, "cmd.pb.gz")
    p = sh(FB, "report", "--format", "pprof", "-o", out, hand)
    expect(p.returncode == 0 and open(out, "rb").read() ==
           open(os.path.join(tmp, "hand-made.pb.gz"), "rb").read(),
           f"fbcount report --format pprof writes the same profile: {p.returncode} {p.stderr}")
    code, text = on_terminal([FB, "report", "--format", "pprof", hand])
    expect(code == 2 and text.count(b"\n") == 1 and b"not written to a terminal" in text,
           f"report --format pprof without -o on a terminal: one line, exit 2: {code} {text!r}")
    p = sh(FB, "report", "--format", "pprof", "-o", "/nonexistent/dir/x.pb.gz", hand)
    expect(p.returncode == 9 and p.stderr.count("\n") == 1,
           f"report --format pprof to an unwritable path: one line, exit 9: {p.returncode} {p.stderr!r}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

done("pprof")
