#!/usr/bin/env python3
"""A C++ caller under the census (issue 11): model.cc, built at -O2, falls back through
libvkt (VKT_NATIVE_DISABLE=dot,add) from a method of a class template in a namespace, from a
member inlined into it, under a lambda called through std::function.

- `fbcount run`, then `report` as text (by op, by site, by stack), folded, SVG and JSON:
  names read as written (model::Dense<float>::forward(vkt_tensor const*) const, the lambda
  in std::function's invoker), JSON keeps the raw symbol beside "demangled", nothing is cut
  when the output is not a terminal, and --frames line gives each frame its line, the
  inlined member as a frame of its own;
- a crash: the program asks the shim for a live dump, then faults; `fbcount symbolize`
  names the crash dump's raw frames exactly as the live dump names the same addresses
  (inlined frames, absolute source paths, op and site, the ops and their sites);
- the same for a Python caller (ctypes on libvkt): the symbolized crash dump's sites are the
  lines of Python the live dump names (the shim's attribution rule, rules/attrib.h).

usage: cpp_test.py FBCOUNT SHIM MODEL MODEL_SOURCE LIBVKT
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from verdict import done, expect  # noqa: E402

FB, SHIM, MODEL, SRC, LIBVKT = (os.path.abspath(a) for a in sys.argv[1:6])
STEPS = 3

# The lines model.cc marks "line:NAME".
LINE = {}
for n, text in enumerate(open(SRC), 1):
    m = re.search(r"line:(\w+)", text)
    if m:
        LINE[m.group(1)] = n
expect(set(LINE) >= {"dot", "bias", "add", "lambda", "call"}, f"markers in model.cc: {LINE}")

FORWARD = "model::Dense<float>::forward(vkt_tensor const*) const"
FORWARD_RAW = "_ZNK5model5DenseIfE7forwardEPK10vkt_tensor"
ADD_BIAS = "model::Dense<float>::add_bias(vkt_tensor*) const"
LAMBDA = "main::{lambda(vkt_tensor const*)#1}"
INVOKER = "std::_Function_handler<vkt_tensor* (vkt_tensor const*), " + LAMBDA + ">::_M_invoke("
FUNCTION = "std::function<vkt_tensor* (vkt_tensor const*)>::operator()(vkt_tensor const*) const"
# A lambda inlined into its invoker, named where the debug information has no linkage name for it.
LAMBDA_FRAME = "main::{lambda}::operator()"
# add_bias inlined into forward: the site is add_bias's line, followed by the caller's.
ADD_BIAS_SITE = f"{ADD_BIAS} (model.cc:{LINE['add']}) inlined in {FORWARD} (model.cc:{LINE['bias']})"


# A Python caller: ctypes on libvkt, dot falling back from step(); then a live dump through
# the preloaded shim's API, and a fault.
PY_TRAIN = """import ctypes, os, signal, sys
vkt = ctypes.CDLL(sys.argv[1])
P = ctypes.c_void_p
vkt.vkt_ctx_create.argtypes = [ctypes.c_char_p, P]
vkt.vkt_full.argtypes = [P, ctypes.c_int, P, ctypes.c_int, ctypes.c_double, P]
vkt.vkt_dot.argtypes = [P, P, P, P, P, P, ctypes.c_int, ctypes.c_int, P]
ctx, a = P(), P()
assert vkt.vkt_ctx_create(None, ctypes.byref(ctx)) == 0
assert vkt.vkt_full(ctx, 0, (ctypes.c_int64 * 2)(4, 4), 2, 1.0, ctypes.byref(a)) == 0
ca, cb = (ctypes.c_int * 1)(1), (ctypes.c_int * 1)(0)


def step():
    c = P()
    assert vkt.vkt_dot(a, ca, None, a, cb, None, 1, 0, ctypes.byref(c)) == 0  # line:py


for _ in range(3):
    step()
assert ctypes.CDLL(None).fbcount_dump(None) == 0
os.kill(os.getpid(), signal.SIGSEGV)
"""


def clean_env(**kw):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("FBCOUNT_", "VKT_", "DEBUGINFOD_")) or k == "LD_PRELOAD":
            del env[k]
    env.update(kw)
    return env


def fb(*args, code=0):
    p = subprocess.run([FB, *args], capture_output=True, text=True, timeout=120,
                       env=clean_env(COLUMNS="40"))
    expect(p.returncode == code, f"fbcount {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def frames_of(dump, stack):
    table = dump.get("frame_table", [])
    return [table[f] if isinstance(f, int) else f for f in stack["frames"]]


def by_ip(frames):
    """A stack's native frames grouped by address, each address's inline chain in order."""
    out = {}
    for f in frames:
        if not f.get("python"):
            out.setdefault(f.get("ip"), []).append(f)
    return out


def same_naming(live, sym):
    """The live dump names the program's own frames in full (the chain, each at its line),
    exactly as symbolize does; the backend's and the system's by their symbol tables only (one
    frame, no line), where symbolize, reading their debug information, may say more: the
    function its symbol table names there (the chain's last) is the live dump's, when it has
    one."""
    if sym is None:
        return False
    if len(live) > 1 or any("file" in f for f in live):
        return live == sym
    name = live[0].get("symbol")
    return name is None or name == sym[-1].get("symbol", "").split("@")[0]


tmp = tempfile.mkdtemp(prefix="fbcount-cpp.")
try:
    # ---- run, then every view of the census --------------------------------------------
    run_dir = os.path.join(tmp, "run")
    p = subprocess.run([FB, "run", "-o", run_dir, "--", MODEL, str(STEPS)], capture_output=True,
                       text=True, timeout=120,
                       env=clean_env(FBCOUNT_SHIM=SHIM, VKT_NATIVE_DISABLE="dot,add"))
    expect(p.returncode == 0, f"fbcount run model: exit {p.returncode}\n{p.stderr}")

    text = fb("report", run_dir)
    expect(re.search(rf"vkt_dot\s+{STEPS}\s.*{re.escape(FORWARD)} \(model\.cc:\d+\) {STEPS}$", text, re.M),
           "report: vkt_dot's site is the template's method, demangled:\n" + text)
    expect(re.search(rf"vkt_add\s+{STEPS}\s.*{re.escape(ADD_BIAS_SITE)} {STEPS}$", text, re.M),
           "report: vkt_add's site is the inlined member, inlined in its caller:\n" + text)
    expect("_Z" not in text, "report: a mangled name in text:\n" + text)

    # COLUMNS=40 and a pipe: the table is not a terminal's, so no name is cut.
    by_site = fb("report", "--by", "site", run_dir)
    for name, op in ((f"{FORWARD} (model.cc:{LINE['dot']})", "vkt_dot"), (ADD_BIAS_SITE, "vkt_add")):
        expect(re.search(rf"^  {re.escape(name)}\s+{STEPS}\s.*{op} {STEPS}$", by_site, re.M),
               f"report --by site: '{name}' whole, with {op}:\n" + by_site)
    expect("..." not in by_site, "report --by site: a cut name:\n" + by_site)

    by_stack = fb("report", "--by", "stack", run_dir)
    for op, name in (("vkt_dot", f"{FORWARD} (model.cc:{LINE['dot']})"), ("vkt_add", ADD_BIAS_SITE)):
        expect(re.search(rf"^  {op} @ {re.escape(name)}\s+{STEPS}\s", by_stack, re.M),
               f"report --by stack: '{op} @ {name}' whole:\n" + by_stack)

    folded = fb("report", "--format", "folded", run_dir)
    lines = folded.splitlines()
    expect(len(lines) == 2 and all(line.endswith(f" {STEPS}") for line in lines),
           "folded: two stacks, each counted per step:\n" + folded)
    for line in lines:
        frames = line.rsplit(" ", 1)[0].split(";")
        order = ["main", "model::train(", FUNCTION, INVOKER, LAMBDA_FRAME, FORWARD]
        at = [next((i for i, f in enumerate(frames) if f.startswith(o)), -1) for o in order]
        expect(-1 not in at and at == sorted(at),
               f"folded: main > train > std::function > invoker of the lambda > forward, "
               f"outermost first: {at}\n{line}")
    expect(any(f";{FORWARD};{ADD_BIAS};vkt_add;" in line for line in lines),
           "folded: the inlined member is a frame between forward and vkt_add:\n" + folded)
    expect("_Z" not in folded, "folded: a mangled name:\n" + folded)

    folded_lines = fb("report", "--format", "folded", "--frames", "line", run_dir)
    for want in (f";{FORWARD} (model.cc:{LINE['dot']});vkt_dot",
                 f";{FORWARD} (model.cc:{LINE['bias']});{ADD_BIAS} (model.cc:{LINE['add']});",
                 f";{LAMBDA_FRAME} (model.cc:{LINE['lambda']});",
                 f"(model.cc:{LINE['call']});{FUNCTION} ("):
        expect(want in folded_lines, f"folded --frames line: '{want}' missing:\n" + folded_lines)

    svg = os.path.join(tmp, "flame.svg")
    fb("report", "--format", "svg", "-o", svg, run_dir)
    try:
        names = {g.get("data-n") for g in ET.parse(svg).iter() if g.get("data-n")}
    except ET.ParseError as e:
        names = set()
        expect(False, f"svg: not well-formed: {e}")
    for want in (FORWARD, ADD_BIAS, FUNCTION):
        expect(want in names, f"svg: no frame named {want}: {sorted(names)}")
    expect(any(n.startswith(INVOKER) for n in names), f"svg: no lambda invoker: {sorted(names)}")
    expect(not any(n.startswith("_Z") for n in names), f"svg: mangled names: {sorted(names)}")

    rep = json.loads(fb("report", "--format", "json", "--by", "stack", run_dir))
    fr = [f for row in rep["fallbacks"] for f in row["frames"]]
    fwd = [f for f in fr if f.get("symbol") == FORWARD_RAW]
    expect(fwd and all(f.get("demangled") == FORWARD for f in fwd),
           f"json: forward with its raw symbol and demangled: {fwd}")
    inl = [f for f in fr if f.get("inlined")]
    expect(any(f.get("demangled") == ADD_BIAS and f.get("line") == LINE["add"] for f in inl),
           f"json: the inlined member with its line: {inl}")
    sites = json.loads(fb("report", "--format", "json", "--by", "site", run_dir))["fallbacks"]
    expect(any(s.get("site") == FORWARD_RAW and s.get("demangled") == FORWARD
               and s.get("line") == LINE["dot"] for s in sites),
           f"json --by site: raw site and demangled: {sites}")

    # ---- a crash dump, symbolized afterwards, against a live dump of the same stacks -----
    crash_dir = os.path.join(tmp, "crash")
    os.mkdir(crash_dir)
    p = subprocess.run([MODEL, str(STEPS), "crash"], capture_output=True, text=True, timeout=120,
                       env=clean_env(LD_PRELOAD=SHIM, FBCOUNT_QUIET="1",
                                     VKT_NATIVE_DISABLE="dot,add",
                                     FBCOUNT_OUTPUT=os.path.join(crash_dir,
                                                                 "fbcount.%e.%p.%n.json")))
    expect(p.returncode == -signal.SIGSEGV, f"crash: died by {p.returncode}\n{p.stderr}")
    dumps = {}
    for path in glob.glob(os.path.join(crash_dir, "*.json")):
        d = json.load(open(path))
        dumps[d["reason"]] = (path, d)
    expect(set(dumps) == {"api", "crash"}, f"crash: a live and a crash dump: {sorted(dumps)}")
    if set(dumps) == {"api", "crash"}:
        live = dumps["api"][1]
        raw = dumps["crash"][1]
        expect(raw["symbolized"] is False and not any(
            "symbol" in f or f.get("inlined") for s in raw["stacks"] for f in frames_of(raw, s)),
               "crash: the shim wrote raw frames only")
        sym_path = os.path.join(tmp, "sym.json")
        fb("symbolize", "-q", "-o", sym_path, dumps["crash"][0])
        sym = json.load(open(sym_path))

        def native_ips(d, s):
            return tuple(f.get("ip") for f in frames_of(d, s)
                         if not f.get("inlined") and not f.get("python"))

        live_stacks = {native_ips(live, s): s for s in live["stacks"]}
        expect(len(sym["stacks"]) == len(live["stacks"]) == 2,
               f"symbolize: two stacks, as live: {len(sym['stacks'])}, {len(live['stacks'])}")
        for s in sym["stacks"]:
            ls = live_stacks.get(native_ips(sym, s))
            expect(ls is not None, f"symbolize: no live stack with these addresses: {s}")
            if ls is None:
                continue
            a, b = by_ip(frames_of(live, ls)), by_ip(frames_of(sym, s))
            differ = [(ip, a[ip], b.get(ip)) for ip in a if not same_naming(a[ip], b.get(ip))]
            expect(not differ, "symbolize: frames differ from the live dump's:\n" + "\n".join(
                f"  live {x}\n  sym  {y}" for _, x, y in differ))
            expect((s["op"], s["site"]) == (ls["op"], ls["site"]),
                   f"symbolize: op and site {s['op']} @ {s['site']}, live "
                   f"{ls['op']} @ {ls['site']}")
        inl = [f for s in sym["stacks"] for f in frames_of(sym, s) if f.get("inlined")]
        expect(any(f.get("symbol", "").startswith("_ZNK5model5DenseIfE8add_bias")
                   and f.get("line") == LINE["add"] and f.get("file") == SRC for f in inl),
               f"symbolize: the inlined member at {SRC}:{LINE['add']}: {inl}")

        def ops(d):
            return [{k: v for k, v in o.items() if k != "shapes"} for o in d["ops"]]

        expect(ops(sym) == ops(live), f"symbolize: ops and sites differ from the live dump's:\n"
               f"  live {ops(live)}\n  sym  {ops(sym)}")
        text = fb("report", "--by", "site", sym_path)
        expect(f"{ADD_BIAS} (model.cc:{LINE['add']})" in text,
               "report of the symbolized crash dump, by site:\n" + text)

        # One core names frames in both, by a debug-information policy each dump records:
        # the shim's (build-id), symbolize's default (standard), or the shim's on request.
        expect((live.get("debuginfo"), "debuginfo" in raw, sym.get("debuginfo"))
               == ("build-id", False, "standard"),
               f"debuginfo: live {live.get('debuginfo')}, raw {raw.get('debuginfo')}, "
               f"symbolized {sym.get('debuginfo')}")
        shim_path = os.path.join(tmp, "sym-build-id.json")
        p = subprocess.run([FB, "symbolize", "-q", "--debuginfo", "build-id", "-o", shim_path,
                            dumps["crash"][0]], capture_output=True, text=True, timeout=120)
        expect(p.returncode == 0 and "(debug information: build-id)" in p.stderr,
               f"symbolize --debuginfo build-id: exit {p.returncode}\n{p.stderr}")
        if p.returncode == 0:
            as_shim = json.load(open(shim_path))
            expect(as_shim.get("debuginfo") == "build-id" and ops(as_shim) == ops(live),
                   f"symbolize --debuginfo build-id: {as_shim.get('debuginfo')}, ops "
                   f"{ops(as_shim)}, live {ops(live)}")
        p = subprocess.run([FB, "symbolize", "--debuginfo", "network", dumps["crash"][0]],
                           capture_output=True, text=True, timeout=120)
        expect(p.returncode == 2 and "(standard|build-id)" in p.stderr,
               f"symbolize --debuginfo network: exit {p.returncode}\n{p.stderr}")

    # ---- a Python caller's crash dump ----------------------------------------------------
    py_dir = os.path.join(tmp, "python")
    os.mkdir(py_dir)
    script = os.path.join(py_dir, "train.py")
    with open(script, "w") as f:
        f.write(PY_TRAIN)
    py_line = next(n for n, t in enumerate(PY_TRAIN.splitlines(), 1) if "line:py" in t)
    p = subprocess.run([sys.executable, script, LIBVKT], capture_output=True, text=True,
                       timeout=120,
                       env=clean_env(LD_PRELOAD=SHIM, FBCOUNT_QUIET="1", VKT_NATIVE_DISABLE="dot",
                                     FBCOUNT_OUTPUT=os.path.join(py_dir, "fbcount.%e.%p.%n.json")))
    expect(p.returncode == -signal.SIGSEGV, f"python crash: died by {p.returncode}\n{p.stderr}")
    dumps = {}
    for path in glob.glob(os.path.join(py_dir, "*.json")):
        d = json.load(open(path))
        dumps[d["reason"]] = (path, d)
    expect(set(dumps) == {"api", "crash"}, f"python crash: a live and a crash dump: "
           f"{sorted(dumps)}\n{p.stderr}")
    if set(dumps) == {"api", "crash"}:
        sym_path = os.path.join(tmp, "pysym.json")
        fb("symbolize", "-q", "-o", sym_path, dumps["crash"][0])
        sym, live = json.load(open(sym_path)), dumps["api"][1]

        def sites(d):
            return sorted((o["op"], s["site"], s.get("file"), s.get("line"), s.get("python"),
                           s["count"]) for o in d["ops"] for s in o["sites"])

        expect(sites(live) == [("vkt_dot", "step", script, py_line, True, 3)],
               f"python live dump: the site is the line of train.py: {sites(live)}")
        expect(sites(sym) == sites(live),
               f"python symbolize: sites {sites(sym)}, live {sites(live)}")
        expect(sorted((s["op"], s["site"]) for s in sym["stacks"]) ==
               sorted((s["op"], s["site"]) for s in live["stacks"]),
               "python symbolize: stacks' op and site differ from the live dump's")

    # ---- a module replaced on disk while the process runs ----------------------------------
    # A rebuild under a running program: the file at the module's path is another build (here
    # the shim's own file), whose tables would name the module's frames wrongly. The shim
    # checks the build id it recorded at load (rules/symbolizer.h) and names that module by
    # the loader's tables only (its exported functions), as the system's runtime.
    re_dir = os.path.join(tmp, "replaced")
    os.mkdir(re_dir)
    lib = os.path.join(re_dir, os.path.basename(LIBVKT))
    shutil.copy(LIBVKT, lib)
    other = os.path.join(re_dir, "other.so")
    shutil.copy(SHIM, other)
    script = os.path.join(re_dir, "replace.py")
    with open(script, "w") as f:
        f.write(PY_TRAIN.replace("assert ctypes.CDLL(None).fbcount_dump(None) == 0\n"
                                 "os.kill(os.getpid(), signal.SIGSEGV)\n",
                                 "os.replace(sys.argv[2], sys.argv[1])\n"))
    p = subprocess.run([sys.executable, script, lib, other], capture_output=True, text=True,
                       timeout=120,
                       env=clean_env(LD_PRELOAD=SHIM, FBCOUNT_QUIET="1", VKT_NATIVE_DISABLE="dot",
                                     FBCOUNT_OUTPUT=os.path.join(re_dir, "fbcount.%e.%p.json")))
    expect(p.returncode == 0, f"replaced: exit {p.returncode}\n{p.stderr}")
    found = glob.glob(os.path.join(re_dir, "fbcount.*.json"))
    expect(len(found) == 1, f"replaced: one dump: {found}\n{p.stderr}")
    if len(found) == 1:
        d = json.load(open(found[0]))
        named = [f.get("symbol") for s in d["stacks"] for f in frames_of(d, s)
                 if f.get("module") == lib and f.get("symbol")]
        expect([o["op"] for o in d["ops"]] == ["vkt_dot"] and "vkt_dot" in named and not any(
            n.startswith(("fbc", "fbr", "fbcount")) for n in named),
               f"replaced: libvkt's frames named by its exported functions only, none by the "
               f"file now at its path: ops {[o['op'] for o in d['ops']]}, names {named}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
done("cpp-names")
