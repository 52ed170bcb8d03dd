"""llama.cpp's own decode under `fbcount run`, checked decode by decode against ggml's
scheduler's own account (GGML_SCHED_DEBUG=2, sched_account.py).

libllama and ggml come from the pinned npm build (tools/deps/ggml.sh); the models are
written here (make_gguf.py): llama architecture, random weights, a SentencePiece vocabulary.
llama-driver decodes a 16-token prompt and 31 generated tokens (one decode each), marks the
decodes in its log and asks the shim for a dump after each, so each decode's census is the
difference of two successive dumps. Cases:
  offload    every layer on the GPU: the token embeddings stay on the host (a CPU split by
             placement, its GET_ROWS bytes exact) and six inputs are copied to Vulkan0;
  partial    one of two layers on the GPU: a CPU split of a layer's nodes (SET_ROWS counts the
             rows it writes into the KV cache, not the cache);
  upload     partial offload with a 64-token prompt: op offload uploads the host's weights
             to the GPU for the prompt's matrix products, each a copy of its own split;
  fallback   flash attention on a model whose head size (20) the Vulkan backend refuses:
             FLASH_ATTN_EXT falls back, once per layer and decode, in a split of its own;
  cpu        no layer on the GPU: one CPU split of every node, by placement.
For every decode: each copy the account lists (count exact, bytes within the account's
rounding, by direction and split), each CPU split's nodes in order with its cause and bytes,
each fallback; the program's output unchanged; every row at the driver's line that called
llama_decode. Then the views: the report's headings and words, per-split time in the text,
JSON, OpenMetrics and pprof views. Exits 77, saying why, where no Vulkan device is found.
  usage: llama_test.py FBCOUNT DRIVER DRIVER_SOURCE MAKE_GGUF GGML_SH CACHE_DIR"""
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

import pinned
import sched_account

FBCOUNT, DRIVER, SOURCE, MAKE_GGUF, GGML_SH, CACHE = sys.argv[1:7]
GPU = "Vulkan0"
EMBD = 256  # the main model's width: every node of a decode writes a whole number of KiB
CASES = [  # name, model, driver arguments, ops the GPU refuses (as the account prints them)
    ("offload", "main", [], set()),
    ("partial", "main", ["--gpu-layers", "2"], set()),
    ("upload", "main", ["--gpu-layers", "2", "--prompt", "64", "--gen", "3"], set()),
    ("fallback", "fa", ["--flash-attn"], {"FLASH_ATTN"}),
    ("cpu", "main", ["--gpu-layers", "0"], set()),
]
MODELS = {"main": ["--embd", str(EMBD), "--heads", "4", "--ff", "512", "--words", "253"],
          "fa": ["--embd", "80", "--heads", "4", "--ff", "160"]}
expect, failures = pinned.expect, pinned.failures


def decode_line():
    return next(n for n, t in enumerate(open(SOURCE, encoding="utf-8"), 1)
                if "/* DRIVER-DECODE */" in t)


def rows(dump, key):
    return {o["op"]: o for o in dump.get(key, [])}


def delta(new, old, key):
    """Rows of one kind counted between two states of the census: {op: (count, bytes)}."""
    a, b = rows(new, key), rows(old, key) if old else {}
    out = {}
    for op, o in a.items():
        c = o["count"] - b.get(op, {}).get("count", 0)
        if c:
            out[op] = (c, o["bytes"] - b.get(op, {}).get("bytes", 0))
    return out


def split_label(label):
    """'CPU (placement): GET_ROWS MUL_MAT×3' -> ('CPU', 'placement', [ops, 10 wide])."""
    m = re.match(r"^(\S+) \((\w+)\): (.*)$", label)
    if not m:
        return None
    ops = []
    for part in m.group(3).split(" "):
        op, _, n = part.partition("\u00d7")
        ops += [op[:10]] * (int(n) if n else 1)
    return m.group(1), m.group(2), ops


def check_decode(name, i, tokens, want, got):
    """One decode's census (got: kind -> {op: (count, bytes)}) against its account."""
    where = f"{name} decode {i}"
    expect(set(got["transfers"]) == set(want["transfers"]),
           f"{where}: copies {sorted(got['transfers'])}, the account's {sorted(want['transfers'])}")
    for label, (count, lo, hi) in want["transfers"].items():
        c, b = got["transfers"].get(label, (0, 0))
        expect(c == count and lo <= b <= hi,
               f"{where}: {label}: {c} copies of {b} B; the account: {count} of {lo}..{hi} B")
    have, need = {}, {}
    for label, (c, b) in got["splits"].items():
        p = split_label(label) or (label, "", [])
        have[(p[0], p[1], tuple(p[2]))] = (c, b)
    for cause, ops, lo, hi in want["splits"]:
        n = need.setdefault(("CPU", cause, tuple(ops)), [0, 0, 0])
        n[0], n[1], n[2] = n[0] + 1, n[1] + lo, n[2] + hi
    expect(set(have) == set(need), f"{where}: CPU splits {sorted(got['splits'])}, the "
                                   f"account's {sorted(need)}")
    for key, (count, lo, hi) in need.items():
        c, b = have.get(key, (0, 0))
        expect(c == count and lo <= b <= hi, f"{where}: split {key[1]} {' '.join(key[2][:4])}"
                                             f"...: {c}, {b} B written; the account: {count}, "
                                             f"{lo}..{hi} B")
    if name == "offload":
        b = got["splits"].get("CPU (placement): GET_ROWS", (0, 0))[1]
        expect(b == tokens * EMBD * 4, f"{where}: GET_ROWS wrote {b} B, not {tokens} rows")
    fell = {op[:10]: c for op, (c, _) in got["fallbacks"].items()}
    expect(fell == want["fallbacks"], f"{where}: fallbacks {fell}, the account's "
                                      f"{want['fallbacks']}")
    expect(not got["host_ops"], f"{where}: host-resident ops {got['host_ops']}")


def run_case(case, model, bins, tmp, env):
    name, _, args, unsupported = case
    cmd = [DRIVER, bins, model] + args
    plain = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if plain.returncode == 77:
        print(plain.stdout.strip() or "llama: no Vulkan device")
        sys.exit(77)
    if not expect(plain.returncode == 0, f"{name}: the driver failed: {plain.stderr[-1500:]}"):
        return None
    out, log = os.path.join(tmp, name), os.path.join(tmp, name + ".log")
    run = subprocess.run([FBCOUNT, "run", "-o", out, "--"] + cmd + ["--log", log, "--dump-each"],
                         capture_output=True, text=True, timeout=600,
                         env=dict(env, GGML_SCHED_DEBUG="2"))
    expect(run.returncode == 0, f"{name}: under fbcount run: exit {run.returncode}: "
                                f"{run.stderr[-1500:]}")
    expect(run.stdout.startswith(plain.stdout), f"{name}: the program's output changed")
    dumps = sorted((json.load(open(p, encoding="utf-8"))
                    for p in glob.glob(os.path.join(out, "*.json"))), key=lambda d: d["seq"])
    decodes = sched_account.per_decode(open(log, encoding="utf-8").read())
    if not expect(len(dumps) == len(decodes) + 1,
                  f"{name}: {len(dumps)} dumps for {len(decodes)} decodes (and the exit's)"):
        return None
    kinds = {"transfers": "transfers", "splits": "splits", "fallbacks": "ops",
             "host_ops": "host_ops"}
    for i, (tokens, splits) in enumerate(decodes):
        got = {k: delta(dumps[i], dumps[i - 1] if i else None, key) for k, key in kinds.items()}
        check_decode(name, i, tokens, sched_account.expected(splits, GPU, unsupported), got)
    return dumps[-1], out


def check_census(name, final, line):
    """The whole run: one backend, every row at the driver's line, totals from the rows."""
    expect([b["name"] for b in final.get("backends", [])] == ["ggml"],
           f"{name}: backends {final.get('backends')}")
    for key in ("ops", "host_ops", "transfers", "splits"):
        for o in final.get(key, []):
            sites = [(os.path.basename(s.get("file", "")), s.get("line")) for s in o["sites"]]
            expect(sites == [(os.path.basename(SOURCE), line)], f"{name}: {o['op']}: {sites}")
    t = final["total"]
    for key, count, nbytes in (("transfers", "transfers", "transfer_bytes"),
                               ("splits", "splits", "split_bytes")):
        r = final.get(key, [])
        expect(t.get(count) == sum(o["count"] for o in r) and
               t.get(nbytes) == sum(o["bytes"] for o in r), f"{name}: total.{count}: {t}")
    for o in final.get("ops", []):
        expect(o.get("timed") == "split" and o["ns"] == 0,
               f"{name}: {o['op']}: a node's time is its split's, not its own: {o}")
    expect(all(o["ns"] > 0 for o in final.get("splits", [])), f"{name}: untimed splits")


def check_views(name, out):
    """What the report says of a census: headings by what ggml's work is, per-split time."""
    text = subprocess.run([FBCOUNT, "report", out], capture_output=True, text=True).stdout
    expect("Host splits" in text and "time measured per split" in text,
           f"{name}: the report has no host splits timed per split:\n{text}")
    expect("Vulkan_Host" not in text and "CPU -> " not in text and "-> CPU" not in text,
           f"{name}: a place named two ways:\n{text}")
    fell = "FLASH_ATTN_EXT" in text
    expect(("Host-resident ops" in text) == fell,
           f"{name}: downstream work spoken of {'without' if not fell else 'with'} fallbacks:"
           f"\n{text}")
    if fell:
        expect(re.search(r"FLASH_ATTN_EXT\s+\d+\s+\S+ \S+\s+\S+ \S+\s+in split", text),
               f"{name}: a fallback's time is not shown as its split's:\n{text}")
    js = json.loads(subprocess.run([FBCOUNT, "report", "--format", "json", out],
                                   capture_output=True, text=True).stdout)
    expect(js["total"].get("splits") and all("ns" in r for r in js["splits"]) and
           all(r.get("timed") == "split" and "ns" not in r for r in js["fallbacks"]),
           f"{name}: report JSON: splits {js.get('splits')}, fallbacks {js.get('fallbacks')}")
    om = subprocess.run([FBCOUNT, "report", "--format", "openmetrics", out],
                        capture_output=True, text=True).stdout
    expect("fbcount_split_seconds_total{" in om and "fbcount_fallback_seconds_total{" not in om,
           f"{name}: OpenMetrics: ggml's time not per split:\n{om[:3000]}")
    pp = os.path.join(out, "..", name + ".pb.gz")
    subprocess.run([FBCOUNT, "report", "--format", "pprof", "-o", pp, out], capture_output=True)
    raw = gzip.open(pp).read() if os.path.exists(pp) else b""
    expect(b"split_time" in raw and (not fell or b"timed" in raw),
           f"{name}: pprof: no split_time sample type or timed=split label")


def main():
    bins, env = pinned.fetch(GGML_SH, CACHE), pinned.environment()
    if not bins:
        return 1
    line = decode_line()
    with tempfile.TemporaryDirectory() as tmp:
        models = {}
        for m, margs in MODELS.items():
            models[m] = os.path.join(tmp, m + ".gguf")
            subprocess.run([sys.executable, MAKE_GGUF, models[m]] + margs, check=True)
        for case in CASES:
            done = run_case(case, models[case[1]], bins, tmp, env)
            if done:
                check_census(case[0], done[0], line)
                check_views(case[0], done[1])
    print(f"{len(failures)} failure(s)" if failures else "llama: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
