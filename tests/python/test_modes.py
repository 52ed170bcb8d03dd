"""FBCOUNT_MODE from Python on libvkt, as a user sees it: abort mode's message names the user's
Python lines (not the extension's or the interpreter's frames) and its census agrees with
itself; error mode makes the op raise vkt.Error with VKT_EREFUSED, naming the op, while the
program goes on and an allowed op still falls back."""
import json
import os
import subprocess
import sys

from conftest import path_of

PROGRAM = """\
import numpy as np
import vkt
ctx = vkt.Context()
x = ctx.tensor(np.arange(6, dtype=np.float32)[::-1].copy())


def model():
    vkt.sort(x)  # the sort line
    try:
        vkt.argsort(x)  # the argsort line
        print("argsort ran")
    except vkt.Error as e:
        print("error", e.status == vkt.EREFUSED, str(e))
    print("after", float((x + x).numpy().sum()))


model()
"""


def line(tag):
    return next(n for n, t in enumerate(PROGRAM.splitlines(), 1) if f"# the {tag} line" in t)


def run(tmp_path, **env):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    e = dict(os.environ, LD_PRELOAD=path_of("SHIM"), VKT_NATIVE_DISABLE="sort,argsort",
             FBCOUNT_OUTPUT=str(tmp_path / "d.%p.%n.json"), **env)
    e.pop("FBCOUNT_QUIET", None)
    p = subprocess.run([sys.executable, str(prog)], cwd=tmp_path, env=e, capture_output=True,
                       text=True, timeout=120)
    dumps = sorted(tmp_path.glob("d.*.json"))
    return p, [json.loads(d.read_text()) for d in dumps]


def test_abort_names_the_python_lines_and_agrees_with_itself(tmp_path):
    p, dumps = run(tmp_path, FBCOUNT_MODE="abort")
    assert p.returncode < 0 or p.returncode == 134, (p.returncode, p.stderr)
    err = p.stderr
    assert f"fallback: vkt_sort at model (prog.py:{line('sort')})" in err, err
    assert f"model (" in err and f"prog.py:{line('sort')})" in err
    assert "libffi" not in err and "_vkt." not in err, "backend frames in the message:\n" + err
    assert "not allowed (FBCOUNT_ALLOW); aborting" in err
    (d,) = dumps
    assert d["abort"]["op"] == "vkt_sort" and d["abort"]["line"] == line("sort"), d["abort"]
    assert d["abort"]["file"].endswith("prog.py") and d["abort"]["backend"] == "vkt"
    assert d["total"]["fallbacks"] == 1


def test_error_mode_raises_in_the_program(tmp_path):
    allow = tmp_path / "allow.txt"
    allow.write_text("sort  # allowed: its short name\n")
    p, dumps = run(tmp_path, FBCOUNT_MODE="error", FBCOUNT_ALLOW=str(allow))
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert out[0].startswith("error True ") and "vkt_argsort" in out[0] and "refused" in out[0], out
    assert out[1] == "after 30.0", out
    (d,) = dumps
    ops = {o["op"]: o["count"] for o in d["ops"]}
    assert ops == {"vkt_sort": 1, "vkt_argsort": 1}, ops
    assert f"prog.py:{line('argsort')}" in p.stderr, p.stderr
