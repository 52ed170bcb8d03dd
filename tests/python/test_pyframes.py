"""Python frames in the census under the preloaded shim: Python programs calling a backend
through ctypes, the site named by their own line, two threads at once, and a thread that
holds the GIL while it waits for a lock the falling-back thread holds (the shim must read
frames without the GIL, or this deadlocks)."""
import glob
import json
import os
import subprocess
import sys
import textwrap


SHIM = os.environ["FBCOUNT_TEST_SHIM"]
HELPER = os.environ["FBCOUNT_TEST_GIL_HELPER"]
FAKE = os.environ["FBCOUNT_TEST_FAKEVKT"]


def run_preloaded(tmp_path, source):
    """Runs source in a fresh Python under the shim; returns its exit dump."""
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ, LD_PRELOAD=SHIM, FBCOUNT_OUTPUT=str(tmp_path / "d.%p.json"),
               FBCOUNT_QUIET="1", HELPER=HELPER, FAKE=FAKE)
    proc = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    dumps = glob.glob(str(tmp_path / "d.*.json"))
    assert len(dumps) == 1, dumps
    with open(dumps[0]) as f:
        return json.load(f), script


def lines_of(script, needle):
    return [n for n, text in enumerate(script.read_text().splitlines(), 1) if needle in text]


def sites(dump, op):
    entry = next(o for o in dump["ops"] if o["op"] == op)
    return {(s["site"], os.path.basename(s.get("file", "")), s.get("line"), s.get("python")):
            s["count"] for s in entry["sites"]}


def test_a_gil_holder_waiting_on_the_falling_back_thread(tmp_path):
    dump, script = run_preloaded(tmp_path, """
        import ctypes, os, threading, time
        cdll = ctypes.CDLL(os.environ["HELPER"])
        pydll = ctypes.PyDLL(os.environ["HELPER"])

        def falls_back():
            cdll.hold_and_fall_back()  # the fallback

        t = threading.Thread(target=falls_back)
        t.start()
        while not cdll.is_holding():
            time.sleep(0.001)
        pydll.wait_for_it()  # holds the GIL until the other thread lets go
        t.join()
        """)
    (line,) = lines_of(script, "# the fallback")
    # The C function that called the op is the site (C code, not an FFI layer, called it);
    # the Python line that called that function is in the stack.
    assert [k[0] for k in sites(dump, "vkt_dot")] == ["hold_and_fall_back"]
    stack = next(s for s in dump["stacks"] if s["op"] == "vkt_dot")
    py = [dump["frame_table"][i] for i in stack["frames"] if dump["frame_table"][i].get("python")]
    assert (py[0]["symbol"], os.path.basename(py[0]["file"]), py[0]["line"]) == \
        ("falls_back", "prog.py", line)


def test_two_threads_fall_back_at_once(tmp_path):
    dump, script = run_preloaded(tmp_path, """
        import ctypes, os, threading
        fake = ctypes.CDLL(os.environ["FAKE"])

        class T(ctypes.Structure):
            _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                        ("shape", ctypes.c_int64 * 4)]

        t = T(0, 1, (4, 0, 0, 0))
        go = threading.Barrier(2)

        def first():
            go.wait()
            for _ in range(300):
                fake.vkt_dot(ctypes.byref(t), 8)  # first's line

        def second():
            go.wait()
            for _ in range(200):
                fake.vkt_add(ctypes.byref(t), 8)  # second's line

        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        """)
    (a,) = lines_of(script, "# first's line")
    (b,) = lines_of(script, "# second's line")
    assert dump["total"]["fallbacks"] == 500
    assert sites(dump, "vkt_dot") == {("first", "prog.py", a, True): 300}
    assert sites(dump, "vkt_add") == {("second", "prog.py", b, True): 200}
    # The stack holds the Python frames in place of the interpreter's evaluation loop.
    stack = next(s for s in dump["stacks"] if s["op"] == "vkt_dot")
    frames = [dump["frame_table"][i] for i in stack["frames"]]
    py = [f for f in frames if f.get("python")]
    assert [f["symbol"] for f in py] == ["first", "run", "_bootstrap_inner", "_bootstrap"]
    assert not any(f.get("symbol") == "_PyEval_EvalFrameDefault" for f in frames)
