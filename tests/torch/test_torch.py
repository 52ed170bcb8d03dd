"""PyTorch's CPU fallback counted with no configuration: a toy PrivateUse1 device (toydev.cc)
whose missing ops go through at::native::cpu_fallback, driven from C++ (driver.cc) and from
Python (model.py) under `fbcount run`: exact counts per op, the user's C++ and Python lines,
an exception thrown through the fallback that changes nothing and leaves counting on, the
in-process scopes, the pytest gate, and FBCOUNT_MODE=error raising PyTorch's own error."""
import glob
import gzip
import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def env_path(name):
    p = os.environ.get("FBCOUNT_TEST_" + name)
    if not p:
        pytest.fail(f"FBCOUNT_TEST_{name} is not set: run the suite through meson test")
    return p


FBCOUNT = env_path("FBCOUNT")
DRIVER = env_path("TORCH_DRIVER")
DRIVER_STATIC = env_path("TORCH_DRIVER_STATIC")  # the same, -static-libstdc++
TOYDEV = env_path("TOYDEV")
MODEL = os.path.join(HERE, "model.py")
# What the drivers do, per op: the lines that call it (by marker) and the calls from each.
EXPECTED = {"gelu": {"GELU": 3}, "mul": {"MUL": 3}, "index_select": {"SELECT": 1, "THROW": 1},
            "relu": {"RELU": 2}}
# The dispatcher's names of those calls (the adapter reads them), and the stack's (without it).
ATEN = {"gelu": "aten::gelu.out", "mul": "aten::mul.out", "index_select": "aten::index_select",
        "relu": "aten::relu"}
STACK = {"gelu": "gelu_out", "mul": "mul_out", "index_select": "index_select", "relu": "relu"}


# Python is not built with the sanitizers: in a sanitized build the toy device, instrumented,
# would share its process with an uninstrumented libtorch's allocations and frees.
python_hosted = pytest.mark.skipif(os.environ.get("FBCOUNT_TEST_SANITIZED") == "1",
                                   reason="a sanitized build: python3 is not instrumented")


def marker_line(path, marker):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if re.search(r"(#|//) \w+-" + marker + r"\b", line):
                return n
    raise AssertionError(f"{path}: no line marked {marker}")


def run(argv, tmp_path, extra_env=None, check=True):
    env = dict(os.environ, **(extra_env or {}))
    env.pop("FBCOUNT_OUTPUT", None)
    p = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"{argv} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def census(tmp_path, program, extra_env=None):
    """Runs program under `fbcount run -o DIR` and returns (its output, the dump)."""
    out = tmp_path / "dumps"
    p = run([FBCOUNT, "run", "-o", str(out), "--"] + program, tmp_path, extra_env)
    dumps = glob.glob(str(out / "*.json"))
    assert len(dumps) == 1, f"one process, one dump: {dumps}\n{p.stderr}"
    with open(dumps[0], encoding="utf-8") as f:
        return p, json.load(f)


def check_census(dump, source, names, sizes):
    ops = {o["op"]: o for o in dump["ops"]}
    assert set(ops) == {names[k] for k in EXPECTED}, f"ops: {sorted(ops)}"
    for key, lines in EXPECTED.items():
        o = ops[names[key]]
        assert o["backend"] == "torch"
        assert o["count"] == sum(lines.values()), f"{key}: {o['count']} calls"
        want = {(os.path.basename(source), marker_line(source, m), n) for m, n in lines.items()}
        sites = {(os.path.basename(s.get("file", "")), s.get("line"), s["count"]) for s in o["sites"]}
        assert sites == want, f"{key}: sites {sites}, not {want}"
        if sizes:
            assert o["bytes"] > 0 and "bytes_known" not in o, o
        else:
            assert o["bytes_known"] is False and o["bytes"] == 0, o
    assert dump["total"]["fallbacks"] == sum(sum(v.values()) for v in EXPECTED.values())
    (b,) = dump["backends"]
    assert b["name"] == "torch" and any("libtorch_cpu" in m for m in b["modules"]), b


def test_cpp_caller(tmp_path):
    plain = run([DRIVER, "3"], tmp_path)
    p, dump = census(tmp_path, [DRIVER, "3"])
    assert p.stdout == plain.stdout and "caught 1" in p.stdout, "the program's output changed"
    check_census(dump, os.path.join(HERE, "driver.cc"), ATEN, sizes=True)
    gelu = next(o for o in dump["ops"] if o["op"] == ATEN["gelu"])
    # gelu.out(self, out): two 48-byte tensors a call, the largest of them 48 bytes.
    assert gelu["shapes"] == [{"dtype": "f32", "shape": [3, 4], "count": 3, "bytes": 288}], gelu
    assert gelu["bytes"] == 288 and gelu["max_bytes"] == 48, gelu
    # The device's extension library, which PyTorch's dispatcher calls and which calls
    # cpu_fallback, is the backend's: its frames named by the symbol table (no line read from
    # its debug information at exit); the program's own frames have their lines.
    lines = {}
    for f in dump["frame_table"]:
        lines.setdefault(os.path.basename(f.get("module", "")), set()).add("line" in f)
    assert lines["libtoydev.so"] == {False}, lines
    assert True in lines["torch-driver"], lines


def test_without_the_adapter_ops_come_from_the_stack(tmp_path):
    p, dump = census(tmp_path, [DRIVER, "3"], {"FBCOUNT_TORCH_ADAPTER": "/nonexistent.so"})
    assert "caught 1" in p.stdout
    check_census(dump, os.path.join(HERE, "driver.cc"), STACK, sizes=False)
    assert "no adapter" in dump["backends"][0]["reader"]


@python_hosted
def test_python_caller(tmp_path):
    plain = run([sys.executable, MODEL, TOYDEV, "3"], tmp_path)
    p, dump = census(tmp_path, [sys.executable, MODEL, TOYDEV, "3"])
    assert p.stdout == plain.stdout and "caught 1" in p.stdout
    check_census(dump, MODEL, ATEN, sizes=True)
    for o in dump["ops"]:
        assert all(s.get("python") for s in o["sites"]), o["sites"]


def test_cpp_scope(tmp_path):
    """fbcount_scope_begin/end around two calls, in the process itself (libfbcount linked)."""
    p = run([DRIVER, "scope"], tmp_path, {"FBCOUNT_OUTPUT": "none"})
    assert "scope: 2 fallbacks, aten::gelu.out 1, aten::mul.out 1" in p.stdout, p.stdout


@python_hosted
def test_python_scope(tmp_path):
    script = tmp_path / "scope.py"
    script.write_text(f"""\
import sys
import fbcount
import torch
sys.path.insert(0, {HERE!r})
import toy
x = torch.ones(4).to(toy.load({TOYDEV!r}))
with fbcount.count() as c:
    torch.relu(x)
    torch.relu(x)
    x + x
print(c.total, c.ops["aten::relu"].count)
""")
    p = run([sys.executable, str(script)], tmp_path, {"FBCOUNT_OUTPUT": "none"})
    assert p.stdout.split() == ["2", "2"], p.stdout + p.stderr


@python_hosted
def test_error_mode_raises_runtime_error(tmp_path):
    script = tmp_path / "strict.py"
    script.write_text(f"""\
import sys
import torch
sys.path.insert(0, {HERE!r})
import toy
x = torch.ones(4).to(toy.load({TOYDEV!r}))
torch.relu(x)  # allowed
try:
    torch.nn.functional.gelu(x)  # refused
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
print("after:", (x + x).cpu().sum().item())
""")
    allow = tmp_path / "allow.txt"
    allow.write_text("aten::relu  # a test allows it\n")
    out = tmp_path / "dumps"
    p = run([FBCOUNT, "run", "--mode", "error", "--allow", str(allow), "-o", str(out), "--",
             sys.executable, str(script)], tmp_path)
    with open(glob.glob(str(out / "*.json"))[0], encoding="utf-8") as f:
        dump = json.load(f)
    line = next(n for n, t in enumerate(script.read_text().splitlines(), 1) if "refused" in t)
    err = next(t for t in p.stdout.splitlines() if t.startswith("RuntimeError:"))
    assert "aten::gelu.out" in err and f"strict.py:{line}" in err, err
    assert "after: 8.0" in p.stdout, "the program goes on after the refused call"
    ops = {o["op"]: o["count"] for o in dump["ops"]}
    assert ops == {"aten::relu": 1, "aten::gelu.out": 1}, ops


@python_hosted
def test_pytest_gate(tmp_path):
    (tmp_path / "test_model.py").write_text(f"""\
import sys
import torch
sys.path.insert(0, {HERE!r})
import toy
x = torch.ones(4).to(toy.load({TOYDEV!r}))


def test_native():
    assert (x + x).cpu().sum().item() == 8


def test_falls_back():
    torch.relu(x)  # the line
""")
    p = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--fbcount-max", "0",
             "test_model.py"], tmp_path, {"FBCOUNT_OUTPUT": "none"}, check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "1 failed, 1 passed" in p.stdout, p.stdout
    assert "test_falls_back" in p.stdout and "aten::relu" in p.stdout, p.stdout
    line = next(n for n, t in enumerate((tmp_path / "test_model.py").read_text().splitlines(), 1)
                if "# the line" in t)
    assert f"test_model.py:{line}" in p.stdout, p.stdout


@python_hosted
def test_two_backends_one_census(tmp_path):
    """libvkt and the toy PyTorch device in one Python process: one census, each op under its
    backend, each call read by its own backend's rules."""
    script = tmp_path / "both.py"
    script.write_text(f"""\
import sys
import numpy as np
import torch
import vkt
sys.path.insert(0, {HERE!r})
import toy

ctx = vkt.Context()
v = ctx.tensor(np.arange(8, dtype=np.float32)[::-1].copy())
t = torch.ones(4).to(toy.load({TOYDEV!r}))
for _ in range(2):
    vkt.sort(v)  # the vkt line
    torch.relu(t)  # the torch line
""")
    metrics = tmp_path / "census.prom"
    p, dump = census(tmp_path, [sys.executable, str(script)],
                     {"VKT_NATIVE_DISABLE": "sort", "FBCOUNT_METRICS": str(metrics)})
    text = metrics.read_text()
    assert 'fbcount_fallbacks_total{backend="torch",op="aten::relu"' in text, text
    assert 'fbcount_fallbacks_total{backend="vkt",op="vkt_sort"' in text, text
    lines = script.read_text().splitlines()
    where = {b: n for n, t in enumerate(lines, 1) for b in ("vkt", "torch")
             if f"# the {b} line" in t}
    ops = {(o["backend"], o["op"]): o for o in dump["ops"]}
    assert set(ops) == {("vkt", "vkt_sort"), ("torch", "aten::relu")}, sorted(ops)
    for (backend, _), o in ops.items():
        assert o["count"] == 2, o
        assert [(s.get("line"), s.get("python")) for s in o["sites"]] == [(where[backend], True)], o
    assert {b["name"] for b in dump["backends"]} == {"vkt", "torch"}, dump["backends"]
    vkt_ops = ops[("vkt", "vkt_sort")]
    assert vkt_ops["shapes"][0]["dtype"] == "f32" and vkt_ops["shapes"][0]["shape"] == [8]


def test_a_descriptor_file_replaces_a_row(tmp_path):
    """`fbcount run --backend FILE`: a row read from a file (here PyTorch's, renamed and without
    the adapter's reading: op by the stack, bytes unknown) replaces the built-in of its name
    or is added; a file that does not parse stops the run before it starts, naming the line."""
    row = tmp_path / "toy.backend"
    fallback = "_ZN2at6native12cpu_fallbackERKN3c1014OperatorHandleEPSt6vectorINS1_6IValueESaIS6_EE"
    row.write_text(f"""\
name      toy
library   libtorch_cpu.so*
exit      {fallback} fallback
exit      {fallback}b fallback
exit      {fallback}bNS1_11DispatchKeyE fallback
op        scope at::_ops
modules   libtorch*.so* libc10*.so*
""")
    out = tmp_path / "dumps"
    p = run([FBCOUNT, "run", "--backend", str(row), "-o", str(out), "--", DRIVER, "1"], tmp_path)
    assert "caught 1" in p.stdout
    with open(glob.glob(str(out / "*.json"))[0], encoding="utf-8") as f:
        d = json.load(f)
    ops = {(o["backend"], o["op"], o.get("bytes_known", True)) for o in d["ops"]}
    assert ("toy", "gelu_out", False) in ops, ops
    assert {b["name"] for b in d["backends"]} == {"toy"}
    assert "name      toy" in d["backends"][0]["descriptor"].replace("name toy", "name      toy")
    bad = tmp_path / "bad.backend"
    bad.write_text("name toy\nlibrary x\nexit f sideways\n")
    p = run([FBCOUNT, "run", "--backend", str(bad), "--", DRIVER, "1"], tmp_path, check=False)
    assert p.returncode != 0 and "line 3: exit kind 'sideways'" in p.stderr, p.stderr
    assert "caught" not in p.stdout, "the run must not start"


BACKWARD = os.path.join(HERE, "backward.py")


def op_sites(dump, op):
    """{(file's base name, line, origin, count)} of op's sites in a dump."""
    (o,) = [o for o in dump["ops"] if o["op"] == op]
    return {(os.path.basename(s.get("file", "")), s.get("line"), s.get("origin"), s["count"])
            for s in o["sites"]}


def views(tmp_path, out):
    """The text of `report --by site`, `--by stack` and `check --max 0` over the dumps in out."""
    site = run([FBCOUNT, "report", "--by", "site", str(out)], tmp_path).stdout
    stack = run([FBCOUNT, "report", "--by", "stack", str(out)], tmp_path).stdout
    check = run([FBCOUNT, "check", "--max", "0", str(out)], tmp_path, check=False)
    return site, stack, check.stdout + check.stderr


def node_sites(dump, op):
    """{(line, node, forward)} of op's sites in a dump."""
    (o,) = [o for o in dump["ops"] if o["op"] == op]
    return {(s.get("line"), s.get("node"), s.get("forward")) for s in o["sites"]}


@python_hosted
@pytest.mark.parametrize("anomaly", [False, True], ids=["plain", "anomaly"])
def test_backward_sited_at_its_caller_python(tmp_path, anomaly):
    """A backward runs on autograd's device thread, no frame of the user's on it: its
    fallbacks are sited at the line that called backward() (or torch.autograd.grad), marked
    as such in the dump, the summary and every view, with the node autograd ran; in anomaly
    mode also the line of the forward op that made the node. The forward's stay at their own
    lines."""
    args = [sys.executable, BACKWARD, TOYDEV, "2"] + (["anomaly"] if anomaly else [])
    plain = run(args, tmp_path)
    p, dump = census(tmp_path, args)
    assert p.stdout == plain.stdout, "the program's output changed"
    fwd, mul, call, grad = (marker_line(BACKWARD, m) for m in ("FORWARD", "MUL", "CALL", "GRAD"))
    assert op_sites(dump, "aten::elu_backward.grad_input") == {
        ("backward.py", call, "backward", 2), ("backward.py", grad, "backward", 1)}
    assert op_sites(dump, "aten::elu.out") == {("backward.py", fwd, None, 2),
                                               ("backward.py", grad, None, 1)}

    def made(line):
        return f"<module> (backward.py:{line})" if anomaly else None
    assert node_sites(dump, "aten::elu_backward.grad_input") == {
        (call, "EluBackward0", made(fwd)), (grad, "EluBackward0", made(grad))}
    assert node_sites(dump, "aten::mul.out") == {
        (mul, None, None), (grad, None, None),
        (call, "MulBackward0", made(mul)), (grad, "MulBackward0", made(grad))}
    # The second step adds to w's gradient: a node named by its class (Node::name() says
    # "torch::autograd::AccumulateGrad"), made by no forward op.
    assert node_sites(dump, "aten::add.out") == {(call, "AccumulateGrad", None)}
    for st in dump["stacks"]:
        if st["op"] == "aten::elu_backward.grad_input":
            assert st["origin"] == "backward" and st["line"] in (call, grad), st
            assert st["python"] is True and st["file"] == BACKWARD, st
            assert st["node"] == "EluBackward0", st
    of = f" of <module> (backward.py:{fwd})" if anomaly else ""
    want = f"EluBackward0{of}, from backward() at <module> (backward.py:{call})"
    assert want in p.stderr, p.stderr
    site, stack, check = views(tmp_path, tmp_path / "dumps")
    assert want in site and want in check, site + check
    assert f"aten::elu_backward.grad_input @ {want}" in stack, stack
    assert "libstdc++" not in site + stack + check
    pb = tmp_path / "p.pb"
    run([FBCOUNT, "report", "--format", "pprof", "-o", str(pb), str(tmp_path / "dumps")], tmp_path)
    assert want.encode() in gzip.decompress(pb.read_bytes()), "pprof: no backward site label"


@pytest.mark.parametrize("driver", ["shared", "static"])
@pytest.mark.parametrize("anomaly", [False, True], ids=["plain", "anomaly"])
def test_backward_sited_at_its_caller_cpp(tmp_path, anomaly, driver):
    """torch::autograd::backward from C++: the same (the forward's line from anomaly mode's
    C++ metadata); and a std::thread that runs an op with no frame of this program's is sited
    at the line that started it, also where the program links its C++ runtime statically
    (std::thread's own frames then lie in the program's file: never its site)."""
    program = DRIVER if driver == "shared" else DRIVER_STATIC
    p, dump = census(tmp_path, [program, "backward"] + (["anomaly"] if anomaly else []))
    assert p.stdout.startswith("grad "), p.stdout
    driver = os.path.join(HERE, "driver.cc")
    call, worker, lam, fwd, mul = (marker_line(driver, m) for m in (
        "BACKWARD", "WORKER", "LAMBDA", "FORWARD", "PRODUCT"))
    assert op_sites(dump, "aten::elu_backward.grad_input") == {
        ("driver.cc", call, "backward", 2)}
    ((line, node, forward),) = node_sites(dump, "aten::elu_backward.grad_input")
    assert node == "EluBackward0", node
    if anomaly:
        assert re.fullmatch(rf"\w+ \(driver\.cc:{fwd}\)( inlined in .*)?", forward), forward
    else:
        assert forward is None, forward
    muls = {f for _, n, f in node_sites(dump, "aten::mul.out") if n == "MulBackward0"}
    assert len(muls) == 1 and (f"(driver.cc:{mul})" in muls.pop() if anomaly else True), muls
    # A sanitized build leaves pthread_create to its sanitizer: no thread has a creator's stack.
    threads = os.environ.get("FBCOUNT_TEST_SANITIZED") != "1"
    if threads:
        assert op_sites(dump, "aten::relu") == {("driver.cc", worker, "thread", 1),
                                                ("driver.cc", lam, None, 1)}
    site, stack, check = views(tmp_path, tmp_path / "dumps")
    of = rf" of \w+ \(driver\.cc:{fwd}\)[^,]*" if anomaly else ""
    for text in (p.stderr, site, stack, check):
        assert re.search(rf"EluBackward0{of}, from backward\(\) at \w+ \(driver\.cc:{call}\)",
                         text), text
        if threads:
            assert re.search(rf"thread started at \w+ \(driver\.cc:{worker}\)", text), text


def test_inlined_parallel_and_launched_sites(tmp_path):
    """Calls whose frames the compiler and PyTorch rearrange keep the user's line and function:
    a worker std::thread with no frame of the program's, started before any fallback of its
    starter's, is sited at the line that started it; an op in a helper inlined into its caller
    is sited at the helper's line, inlined in the caller's; an at::parallel_for body, also on
    OpenMP's worker thread (before: GOMP_parallel, libgomp.so.1+0x...), and an at::launch
    lambda on torch's pool (before: std::function's _M_invoke) at the lambda's line, named by
    the function that encloses it. The dump, the exit summary, `report --by site`, `--by stack`
    and check's message say it alike."""
    p, dump = census(tmp_path, [DRIVER, "threads"])
    assert p.stdout.startswith("threads "), p.stdout
    driver = os.path.join(HERE, "driver.cc")
    inlined, inliner, body, launch, early = (
        marker_line(driver, m) for m in ("INLINED", "INLINER", "BODY", "LAUNCH", "EARLY"))
    caller = f"threads(c10::Device const&) (driver.cc:{inliner})"
    (gelu,) = [s for o in dump["ops"] if o["op"] == "aten::gelu.out" for s in o["sites"]]
    assert (gelu["site"], gelu["line"], gelu.get("inlined_in")) == ("inlined_gelu", inlined,
                                                                    caller), gelu
    # A sanitized build leaves pthread_create to its sanitizer: no thread has a creator's stack.
    threads = os.environ.get("FBCOUNT_TEST_SANITIZED") != "1"
    relu = {("driver.cc", body, None, 2)} | ({("driver.cc", early, "thread", 1)} if threads else set())
    # (Without its creator's stack the bare thread's call is sited at what its frames hold.)
    assert op_sites(dump, "aten::relu") == relu if threads else relu < op_sites(dump, "aten::relu")
    assert op_sites(dump, "aten::mul.out") == {("driver.cc", launch, None, 1)}
    for st in dump["stacks"]:
        if st["op"] == "aten::gelu.out":
            assert st.get("inlined_in") == caller, st
    want = [f"inlined_gelu (driver.cc:{inlined}) inlined in {caller}",
            f"lambda in threads (driver.cc:{body})", f"lambda in threads (driver.cc:{launch})"]
    if threads:
        want.append(f"thread started at {caller.replace(str(inliner), str(early))}")
    site, stack, check = views(tmp_path, tmp_path / "dumps")
    for name, text in (("summary", p.stderr), ("--by site", site), ("check", check)):
        for w in want:
            assert w in text, f"{name}: no {w!r} in\n{text}"
        assert "libgomp" not in text and "GOMP_" not in text and "_M_invoke" not in text, text
    rows = [t.split("  ")[1] for t in stack.splitlines() if " @ " in t and "OP @ SITE" not in t]
    # The body's two calls (the calling thread's and OpenMP's worker's) are one row or two,
    # as their stacks are alike or not (torch 2.x runs both on workers); their count is above.
    expected = {"aten::gelu.out @ " + want[0], "aten::relu @ " + want[1],
                "aten::mul.out @ " + want[2]} | {"aten::relu @ " + w for w in want[3:]}
    assert set(rows) == expected if threads else expected < set(rows), rows
    pb = tmp_path / "p.pb"
    run([FBCOUNT, "report", "--format", "pprof", "-o", str(pb), str(tmp_path / "dumps")], tmp_path)
    raw = gzip.decompress(pb.read_bytes())
    for w in want:
        assert w.encode() in raw, f"pprof: no site label {w!r}"


@python_hosted
def test_backward_in_error_mode_and_pytest(tmp_path):
    """A refused fallback in a backward: the RuntimeError that loss.backward() raises, and the
    pytest gate's message, name the node autograd ran and the backward() line."""
    (tmp_path / "test_train.py").write_text(f"""\
import sys
import torch
sys.path.insert(0, {HERE!r})
import toy
x = torch.ones(3, 4).to(toy.load({TOYDEV!r}))


def test_step():
    w = torch.ones(3, 4).to(x.device).requires_grad_()
    loss = torch.nn.functional.elu(x * w).sum()
    try:
        loss.backward()  # the backward
    except RuntimeError as e:
        print("RuntimeError:", str(e).splitlines()[0])
""")
    line = next(n for n, t in enumerate((tmp_path / "test_train.py").read_text().splitlines(), 1)
                if "# the backward" in t)
    allow = tmp_path / "allow.txt"
    allow.write_text("".join(f"{op}  # the forward\n" for op in (
        "aten::mul.out", "aten::elu.out", "aten::sum.IntList_out", "aten::fill_.Scalar")))
    p = run([FBCOUNT, "run", "--mode", "error", "--allow", str(allow), "-o", str(tmp_path / "d"),
             "--", sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider",
             "test_train.py"], tmp_path, check=False)
    err = next((t for t in p.stdout.splitlines() if t.startswith("RuntimeError:")), p.stdout)
    want = f"EluBackward0, from backward() at test_step (test_train.py:{line})"
    assert want in err, err + p.stderr
    p = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--fbcount-max", "0",
             "test_train.py"], tmp_path, {"FBCOUNT_OUTPUT": "none"}, check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    assert want in p.stdout, p.stdout


def test_warn_stacks_demangled_from_the_users_frame(tmp_path):
    """Warn mode's printed stacks: names as written (no mangled _ZN name) and the first frame
    the user's own line, not the fallback's machinery inside PyTorch."""
    p = run([FBCOUNT, "run", "--mode", "warn", "-o", str(tmp_path / "d"), "--", DRIVER, "1"],
            tmp_path)
    lines = [t for t in p.stderr.splitlines() if t.startswith("fbcount: ")]
    assert not [t for t in lines if "_ZN" in t], p.stderr
    driver = os.path.join(HERE, "driver.cc")
    gelu = marker_line(driver, "GELU")
    i = next(i for i, t in enumerate(lines) if t.startswith("fbcount: fallback: aten::gelu.out"))
    assert lines[i + 1] == f"fbcount:   #0 main ({driver}:{gelu})", lines[i:i + 3]


def test_warn_mode_does_not_hold_the_call(tmp_path):
    """Warn mode forms its message on the shim's own thread: the calls that fell back are not
    held while their stacks are named, and their time in the census is the calls' own (naming
    libtorch's frames for four new (op, site) pairs held them some 90 ms here before)."""
    ns = {}
    for mode in ("count", "warn"):
        out = tmp_path / mode
        p = run([FBCOUNT, "run", "--mode", mode, "-o", str(out), "--", DRIVER, "3"], tmp_path)
        with open(glob.glob(str(out / "*.json"))[0], encoding="utf-8") as f:
            ns[mode] = json.load(f)["total"]["ns"]
    assert "fbcount: fallback: aten::gelu.out at main (driver.cc:" in p.stderr, p.stderr
    assert ns["warn"] < 5 * ns["count"] + 5_000_000, ns


@python_hosted
def test_crash_dump_keeps_the_readers_ops(tmp_path):
    """A process killed by a fatal signal after its fallbacks: the crash dump, written raw with
    the reader's op names in its stacks and its counts in an "(unknown)" row, reads once
    symbolized as a live dump of the same calls would: each op counted once, at its line."""
    script = tmp_path / "crash.py"
    script.write_text(f"""\
import os
import signal
import sys
import torch
sys.path.insert(0, {HERE!r})
import toy
dev = toy.load({TOYDEV!r})
x = torch.ones(3, 4).to(dev)
for _ in range(2):
    x * x
x.relu()
os.kill(os.getpid(), signal.SIGSEGV)
""")
    out = tmp_path / "dumps"
    p = run([FBCOUNT, "run", "-o", str(out), "--", sys.executable, str(script)], tmp_path,
            check=False)
    assert p.returncode != 0, p.stderr
    (path,) = glob.glob(str(out / "*.json"))
    with open(path, encoding="utf-8") as f:
        dump = json.load(f)
    assert dump["reason"] == "crash" and dump["symbolized"] is True, dump["reason"]
    assert dump["total"]["fallbacks"] == 3, dump["total"]
    assert {o["op"]: (o["count"], sum(s["count"] for s in o["sites"])) for o in dump["ops"]} == {
        "aten::mul.out": (2, 2), "aten::relu": (1, 1)}, dump["ops"]
    assert op_sites(dump, "aten::mul.out") == {("crash.py", 10, None, 2)}


@python_hosted
def test_bytes_by_one_rule(tmp_path):
    """A call's bytes are all its tensor arguments' (mul.out: self, other and out); "largest"
    is the largest single tensor; --by shape, --by op and the summary add bytes alike."""
    script = tmp_path / "two.py"
    script.write_text(f"""\
import sys
import torch
sys.path.insert(0, {HERE!r})
import toy
dev = toy.load({TOYDEV!r})
x = torch.ones(3, 4).to(dev)
a = torch.ones(2, 2).to(dev)
for _ in range(2):
    x * x
a * a
""")
    p, dump = census(tmp_path, [sys.executable, str(script)])
    (mul,) = dump["ops"]
    assert mul["bytes"] == 2 * 3 * 48 + 3 * 16 and mul["max_bytes"] == 48, mul
    assert {(tuple(s["shape"]), s["count"], s["bytes"]) for s in mul["shapes"]} == {
        ((3, 4), 2, 288), ((2, 2), 1, 48)}, mul["shapes"]
    assert dump["total"]["max_bytes"] == 48 and "largest tensor 48 B" in p.stderr, p.stderr
    rows = {}
    for by in ("op", "shape"):
        out = run([FBCOUNT, "report", "--by", by, "--format", "json", str(tmp_path / "dumps")],
                  tmp_path).stdout
        rows[by] = json.loads(out)["fallbacks"]
    assert sum(r["bytes"] for r in rows["shape"]) == rows["op"][0]["bytes"] == 336, rows
    assert [r["max_bytes"] for r in rows["op"]] == [48], rows


def test_bytes_of_tensor_lists(tmp_path):
    """Tensors inside list arguments count like any other: cat's Tensor[] (two 48-byte inputs
    and its 96-byte out) and index's Tensor?[] (48-byte self, a 16-byte index, 32-byte out).
    (Before the adapter read lists of optional tensors, index's indices were left out.)"""
    script = tmp_path / "lists.py"
    script.write_text(f"""\
import sys
import torch
sys.path.insert(0, {HERE!r})
import toy
dev = toy.load({TOYDEV!r})
x = torch.ones(3, 4).to(dev)
torch.cat([x, x])
x[torch.tensor([0, 2])]  # indices on the CPU: 1.13's cpu_fallback moves no Tensor?[]
""")
    _, dump = census(tmp_path, [sys.executable, str(script)])
    got = {o["op"]: (o["bytes"], o["max_bytes"]) for o in dump["ops"]}
    assert got == {"aten::cat.out": (48 + 48 + 96, 96),
                   "aten::index.Tensor_out": (48 + 16 + 32, 48)}, got


@python_hosted
def test_one_site_per_call_in_every_view(tmp_path):
    """A model of torch.nn modules: torch's own Python files (nn/modules/linear.py's forward)
    are the backend's, and every view (the dump's ops and stacks, --by site, --by stack, pprof)
    names the model's line for each call; the accelerator's frames are the backend's on every
    thread (the backward's too)."""
    script = tmp_path / "nnmodel.py"
    script.write_text(f"""\
import sys
import torch
sys.path.insert(0, {HERE!r})
import toy
dev = toy.load({TOYDEV!r})


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.tanh(self.fc(x))  # the model's line


net = Net().to(dev)
x = torch.ones(2, 4).to(dev)
for _ in range(2):
    net(x).sum().backward()  # the backward
""")
    lines = script.read_text().splitlines()
    model = next(n for n, t in enumerate(lines, 1) if "# the model's line" in t)
    back = next(n for n, t in enumerate(lines, 1) if "# the backward" in t)
    _, dump = census(tmp_path, [sys.executable, str(script)])
    want = {"aten::addmm.out": f"forward (nnmodel.py:{model})",
            "aten::tanh.out": f"forward (nnmodel.py:{model})"}
    for op, site in want.items():
        assert op_sites(dump, op) == {("nnmodel.py", model, None, 2)}, op_sites(dump, op)
    for st in dump["stacks"]:
        if st["op"] in want:
            assert (st["site"], st["line"]) == ("forward", model), st
    out = tmp_path / "dumps"
    site, stack, _ = views(tmp_path, out)
    for op, s in want.items():
        assert re.search(rf"^  {re.escape(s)} +4 ", site, re.M), site
        assert f"{op} @ {s}" in stack, stack
    assert "linear.py" not in site + stack, site + stack
    backward_rows = [t for t in stack.splitlines() if "from backward() at" in t]
    assert backward_rows and all(f"(nnmodel.py:{back})" in t for t in backward_rows), stack
    assert "toy_fallback" not in stack, stack
    pb = tmp_path / "p.pb"
    run([FBCOUNT, "report", "--format", "pprof", "-o", str(pb), str(out)], tmp_path)
    raw = gzip.decompress(pb.read_bytes())
    assert f"forward (nnmodel.py:{model})".encode() in raw
    assert f"from backward() at <module> (nnmodel.py:{back})".encode() in raw
    assert b"forward (linear.py" not in raw
