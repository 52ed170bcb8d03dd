#!/usr/bin/env python3
"""results — benchmark results as data, and the documents made from them.

Each sweep is one JSON file in this folder (schema "vkt-results/1"):
  {"schema": "vkt-results/1", "device": "NVIDIA H200", "peer_device": "NVIDIA H200, torch 2.11",
   "commit": "b2cd402", "date": "2026-12-01", "command": "how it was run",
   "rows": [{"bench": "lenet", "case": "native-graph", "size": "64", "value": 0.2, "unit": "ms",
             "peer": "torch-cuda-graph", "peer_value": 0.255}, ...]}
A row may carry more: target (the spec's floor), path (how libvkt ran it), time_us, fallbacks and
host_ops (per step), gpu_ms and host_ms (a step's GPU time, and the rest: recording, submitting,
waiting). The benchmark scripts write these files (write() below); nothing else does.

Documents hold generated blocks between markers that name a renderer and a file:
  <!-- results:RENDERER FILE -->
  ...
  <!-- results:end -->
RENDERER is one of: ops (a table of op throughput against torch and the target), lenet (a table
of step times: native cases against their torch peers, forced fallbacks against native),
lenet-story and lenet-cliff (the README's sentences on the H200 cliff), lenet-graph (the README's
sentence on the recorded step against torch's graph modes). --check fails (exit 1, with a diff) when a
block differs from what its data makes, or when a file of this folder is not of this format; --update
rewrites the blocks.

usage: results.py (--check | --update) DOC.md...
"""
import argparse
import difflib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = "vkt-results/1"
BLOCK = re.compile(r"(<!-- results:([\w-]+) ([\w.-]+) -->\n)(.*?)(<!-- results:end -->)", re.S)


def write(path, device, rows, command, date, commit=None, peer_device=None):
    """Writes one sweep's rows. commit defaults to the checkout's HEAD (short)."""
    if commit is None:
        try:
            import subprocess
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    cwd=HERE).stdout.strip() or "unknown"
        except OSError:
            commit = "unknown"
    doc = {"schema": SCHEMA, "device": device, "peer_device": peer_device, "commit": commit, "date": date,
           "command": command, "rows": rows}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def check_sweep(name):
    """Reads one file here, whichever benchmark wrote it (the C ones write no schema): an object
    with the device it ran on, its date and its rows, each row an object."""
    path = os.path.join(HERE, name)
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"results: cannot read {path}: {e}")
    if not isinstance(doc, dict) or not all(k in doc for k in ("device", "date", "rows")):
        sys.exit(f"results: {path} is not an object with device, date and rows")
    if not isinstance(doc["rows"], list) or not all(isinstance(r, dict) for r in doc["rows"]):
        sys.exit(f"results: {path}: rows is not a list of objects")
    return doc


def load(name):
    """A sweep the documents render: of this schema, with its commit."""
    doc = check_sweep(name)
    path = os.path.join(HERE, name)
    if doc.get("schema") != SCHEMA:
        sys.exit(f"results: {path} is not a {SCHEMA} file")
    if "commit" not in doc:
        sys.exit(f"results: {path} lacks 'commit'")
    return doc


def num(v, unit=""):
    if v is None:
        return "-"
    if unit in ("GB/s", "GFLOP/s"):
        return f"{v:.1f} {unit}"
    return f"{v:.3f}" if v < 10 else f"{v:.2f}" if v < 100 else f"{v:.1f}"


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def header(doc):
    peer = f"; peer: {doc['peer_device']}" if doc.get("peer_device") else ""
    return f"{doc['device']}, commit {doc['commit']}, {doc['date']}{peer}\n"


def render_ops(doc):
    out = [header(doc),
           "| op | size | libvkt path | libvkt time | libvkt | torch | libvkt/torch | target | libvkt/target |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        t = r.get("time_us")
        tm = "-" if t is None else f"{t:.1f} us" if t < 1000 else f"{t / 1000:.3f} ms"
        tgt = f">= {r['target']:.0f} {r['unit']}" if r.get("target") else "-"
        out.append(f"| {r['case']} | {r['size']} | {r.get('path', 'native')} | {tm} | {num(r.get('value'), r['unit'])} "
                   f"| {num(r.get('peer_value'), r['unit'])} | {ratio(r.get('value'), r.get('peer_value'))} | {tgt} "
                   f"| {ratio(r.get('value'), r.get('target'))} |")
    return "\n".join(out) + "\n"


def render_lenet(doc):
    """Step times; with the GPU/host split of each step where the sweep measured it."""
    split = any("gpu_ms" in r for r in doc["rows"])
    extra = " GPU ms/step | host ms/step |" if split else ""
    out = [header(doc), "| batch | case | fallbacks/step | host ops/step | libvkt ms/step |" + extra +
           " peer | peer ms/step | libvkt/peer |", "|---|---|---|---|---|" + ("---|---|" if split else "") +
           "---|---|---|"]
    for r in doc["rows"]:
        cols = f" {num(r.get('gpu_ms'))} | {num(r.get('host_ms'))} |" if split else ""
        out.append(f"| {r['size']} | {r['case']} | {r.get('fallbacks', 0):.0f} | {r.get('host_ops', 0):.0f} "
                   f"| {num(r['value'])} |{cols} {r.get('peer', '-')} | {num(r.get('peer_value'))} "
                   f"| {ratio(r['value'], r.get('peer_value'))} |")
    return "\n".join(out) + "\n"


def find(doc, case, size, peer=None):
    for r in doc["rows"]:
        if r["case"] == case and r["size"] == size and (peer is None or r.get("peer") == peer):
            return r
    sys.exit(f"results: {doc['device']} {doc['commit']} has no row {case} {size} {peer or ''}")


def render_lenet_story(doc):
    """The cliff at the largest batch, in one sentence."""
    size = max((r["size"] for r in doc["rows"] if r["case"] == "native"), key=int)
    nat = find(doc, "native", size, "torch-eager")
    conv = find(doc, "conv-fallback", size)
    text = (f"On an {doc['device']} it does: a native LeNet step at batch {size} takes {num(nat['value'])} ms "
            f"(PyTorch's eager CUDA step: {num(nat.get('peer_value'))} ms)")
    # torch's graphs replay on static inputs: the like-for-like case is the fixed batch, where measured
    for case, flags in (("native-graph-fixed", "--graph --fixed-batch"), ("native-graph", "--graph")):
        graph = [r for r in doc["rows"] if r["case"] == case and r["size"] == size]
        if graph:
            peers = ", ".join(f"{r['peer']} {num(r.get('peer_value'))} ms" for r in graph)
            text += f", {num(graph[0]['value'])} ms recorded once and replayed (`{flags}`; {peers})"
            break
    text += (f"; with conv on the host it takes {num(conv['value'])} ms, "
             f"{conv['value'] / conv['peer_value']:.0f}× slower, with the same loss "
             f"(`tools/bench/RESULTS.md`, commit {doc['commit']}).")
    return text + "\n"


def render_lenet_cliff(doc):
    """Story 1's figures: the forced conv case against native at every batch."""
    sizes = sorted({r["size"] for r in doc["rows"] if r["case"] == "conv-fallback"}, key=int)
    parts, natives = [], []
    for size in sizes:
        conv, nat = find(doc, "conv-fallback", size), find(doc, "native", size, "torch-eager")
        parts.append(f"{conv['value'] / conv['peer_value']:.0f}× slower than native at batch {size} "
                     f"({num(conv['value'])} ms against {num(conv['peer_value'])} ms a step)")
        natives.append(num(nat.get("peer_value")))
    return (f"the same forced case is {' and '.join(parts)}, while the native step runs against PyTorch's eager "
            f"CUDA step at {' and '.join(natives)} ms (commit {doc['commit']}, {doc['date']}).\n")


def render_lenet_graph(doc):
    """The recorded step on a fixed batch against torch's graph modes, at every batch."""
    rows = [r for r in doc["rows"] if r["case"] == "native-graph-fixed"]
    sizes = sorted({r["size"] for r in rows}, key=int)
    mine = [num(find(doc, "native-graph-fixed", s)["value"]) for s in sizes]
    parts = []
    for peer, name in (("torch-compile-cuda-graph", "torch.compile then a CUDA graph"),
                       ("torch-cuda-graph", "a CUDA graph alone")):
        rs = [find(doc, "native-graph-fixed", s, peer) for s in sizes]
        parts.append(f"{name} {' and '.join(num(r.get('peer_value')) for r in rs)} ms "
                     f"({' and '.join(ratio(r['value'], r.get('peer_value')) for r in rs)})")
    return (f"Recorded once and replayed on a fixed batch, LeNet's step on an {doc['device']} takes "
            f"{' and '.join(mine)} ms at batch {' and '.join(sizes)}, against PyTorch's {parts[0]} and "
            f"{parts[1]} (commit {doc['commit']}, {doc['date']}).\n")


RENDERERS = {"ops": render_ops, "lenet": render_lenet, "lenet-story": render_lenet_story,
             "lenet-cliff": render_lenet_cliff, "lenet-graph": render_lenet_graph}


def regenerate(text):
    def sub(m):
        renderer, name = m.group(2), m.group(3)
        if renderer not in RENDERERS:
            sys.exit(f"results: unknown renderer '{renderer}' (known: {', '.join(RENDERERS)})")
        return m.group(1) + RENDERERS[renderer](load(name)) + m.group(5)
    return BLOCK.sub(sub, text)


def paired(values, base):
    """The cost of values over base, run round by round: the median of each round's
    difference, its quartiles and its least (a slow stretch of a shared machine moves both
    sides of a difference; the least is what a quiet moment shows)."""
    import statistics
    over = [v - b for v, b in zip(values, base)]
    q = statistics.quantiles(over, n=4) if len(over) > 1 else [over[0]] * 3
    return {"over": statistics.median(over), "q1": q[0], "q3": q[2], "least": min(over)}


def bench_options(ap):
    """The options every benchmark takes beside its own: where it ran, where its rows go, and
    the document blocks made from them."""
    import os
    ap.add_argument("--device", default=f"this machine, {os.cpu_count()} CPUs")
    ap.add_argument("--json")
    ap.add_argument("--doc")
    ap.add_argument("--check-doc")


def doc_requested(a, name, render):
    """The exit code of --doc or --check-doc (a's options), or None when neither was given."""
    if not (a.doc or a.check_doc):
        return None
    return doc_mode(name, render, a.check_doc or a.doc, bool(a.check_doc))


def doc_mode(name, render, md, check):
    """A benchmark's --doc / --check-doc: its blocks (<!-- results:NAME FILE -->) made by
    render from FILE's rows, through this module's block handling."""
    RENDERERS[name] = render
    argv, sys.argv = sys.argv, ["results.py", "--check" if check else "--update", md]
    try:
        return main()
    finally:
        sys.argv = argv


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when a generated block drifted")
    mode.add_argument("--update", action="store_true", help="rewrite the generated blocks")
    ap.add_argument("docs", nargs="+")
    args = ap.parse_args()
    # Every sweep in the folder is read, in a document or not: a device and rows in all of them.
    for name in sorted(os.listdir(HERE)):
        if name.endswith(".json"):
            check_sweep(name)
    drift = False
    for doc in args.docs:
        with open(doc) as f:
            text = f.read()
        if not BLOCK.search(text):
            sys.exit(f"results: {doc} has no results block")
        new = regenerate(text)
        if new == text:
            continue
        if args.update:
            with open(doc, "w") as f:
                f.write(new)
            print(f"results: rewrote {doc}")
        else:
            drift = True
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), doc,
                                                       doc + " (from the results)"))
    if drift:
        print("results: the documents drifted from tools/bench/results/*.json; run results.py --update",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
