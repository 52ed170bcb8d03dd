"""Both packages as users get them: `meson install` into a staging folder, then imported from
there in a clean environment (they must find the installed libraries, and pytest the plugin
through its entry point), `meson devenv` running python3 on the build tree's copies, and a
prefix Python does not search: where the packages go, and the setup summary saying what to set
(as the README's install section does)."""
import json
import os
import re
import subprocess
import sys

from conftest import path_of
from test_plugin import PLANTED

CLEAN = {k: v for k, v in os.environ.items()
         if k not in ("PYTHONPATH", "VKT_LIBRARY", "FBCOUNT_LIBRARY", "LD_PRELOAD", "LD_LIBRARY_PATH")}

PROBE = """
import importlib.metadata, numpy as np
import fbcount, vkt
print(vkt.__file__)
print(fbcount.__file__)
print(vkt.library_path())
print(fbcount.library_path())
ctx = vkt.Context()
ctx.set_native_disable("dot")
a = ctx.tensor(np.ones((2, 2), np.float32))
with fbcount.count() as c:
    vkt.dot(a, a)
print(c.total)
print(",".join(f"{ep.name}={ep.value}" for ep in importlib.metadata.entry_points(group="pytest11")))
print(importlib.metadata.metadata("fbcount")["Requires-Python"])
"""


def _run(args, env, cwd=None):
    p = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, f"{args}: {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


def test_installed_packages_find_the_installed_libraries(tmp_path):
    stage = tmp_path / "stage"
    _run([path_of("MESON"), "install", "-C", path_of("BUILD"), "--no-rebuild", "--quiet", "--destdir", str(stage),
          "--tags", "runtime,python-runtime"], CLEAN)
    inits = list(stage.rglob("vkt/__init__.py"))
    assert len(inits) == 1, inits
    root = inits[0].parent.parent
    assert (root / "fbcount" / "pytest_plugin.py").exists()
    # Where the prefix holds a folder of this Python's path, the packages are in it.
    opts = json.load(open(os.path.join(path_of("BUILD"), "meson-info", "intro-buildoptions.json")))
    prefix = next(o["value"] for o in opts if o["name"] == "prefix")
    if any(p.startswith(prefix.rstrip("/") + "/") and p.endswith("-packages") for p in sys.path):
        assert "/" + str(root.relative_to(stage)) in sys.path
    assert list(root.glob("fbcount-*.dist-info/entry_points.txt"))
    env = dict(CLEAN, PYTHONPATH=str(root))
    out = _run([sys.executable, "-c", PROBE], env, cwd=tmp_path).splitlines()
    vkt_py, fb_py, vkt_so, fb_so, total, plugins, requires = out[-7:]
    for p in (vkt_py, fb_py, vkt_so, fb_so):
        assert os.path.realpath(p).startswith(str(stage)), out
    assert os.path.basename(vkt_so) == "libvkt.so.0" and os.path.basename(fb_so) == "libfbcount.so"
    assert total == "1"
    assert "fbcount=fbcount.pytest_plugin" in plugins.split(","), plugins  # -p no:fbcount names it
    assert requires == ">=3.11"
    # pytest finds the installed plugin through the entry point alone
    (tmp_path / "test_planted.py").write_text(PLANTED)
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                        "--fbcount-max", "0", "test_planted.py"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, env=dict(env, VKT_NATIVE_DISABLE="sort"))
    assert p.stdout.strip().splitlines()[-1].count("1 failed, 1 passed") == 1, p.stdout + p.stderr


def test_meson_devenv_runs_python_on_the_build_tree(tmp_path):
    build = os.path.realpath(path_of("BUILD"))
    out = _run([path_of("MESON"), "devenv", "-C", build, "--workdir", str(tmp_path), "python3", "-c",
                "import vkt, fbcount; print(vkt.__file__); print(fbcount.__file__); "
                "print(vkt.library_path()); print(fbcount.library_path())"], CLEAN).splitlines()
    assert len(out) >= 4
    for p in out[-4:]:
        assert os.path.realpath(p).startswith(build + os.sep), out


def test_any_prefix_says_where_the_packages_go(tmp_path):
    """For a prefix python3 does not search, the packages go to P/lib/python3/dist-packages and
    `meson setup` says to set PYTHONPATH there (configured only: nothing is built)."""
    prefix = tmp_path / "opt" / "fbcount"
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = _run([path_of("MESON"), "setup", "--prefix", str(prefix), "-Dtests=false", str(tmp_path / "b"), source],
               CLEAN)
    want = prefix / "lib" / "python3" / "dist-packages"
    assert re.search(rf"packages \(vkt, fbcount\) *: {re.escape(str(want))}$", out, re.M), out
    assert re.search(rf"found by .*: no: export PYTHONPATH={re.escape(str(want))}$", out, re.M), out
    installed = json.loads(_run([path_of("MESON"), "introspect", "--installed", str(tmp_path / "b")], CLEAN))
    for pkg in ("fbcount/__init__.py", "fbcount/pytest_plugin.py", "vkt/__init__.py",
                "fbcount-0.1.0.dist-info/entry_points.txt"):
        assert str(want / pkg) in installed.values(), (pkg, sorted(installed.values()))
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    assert "`P/lib/python3/dist-packages`" in readme and "export PYTHONPATH=" in readme
