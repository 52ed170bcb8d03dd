"""The pytest plugin, as a user meets it: pytest runs on test files written here, in a
subprocess that finds the plugin through its pytest11 entry point (the build tree has the
dist-info beside the package), with VKT_NATIVE_DISABLE forcing the planted fallbacks: gates and
markers, the fixture, every thread counted by default and the opt-out, fixtures' setup and
teardown counted to their test, the reason in the short summary line (kept with --tb=no), the
session's table, short op names, and -p no:fbcount."""
import os
import re
import subprocess
import sys

import pytest

HEADER = """\
import numpy as np
import pytest
import vkt

ctx = vkt.Context()
x = ctx.tensor(np.arange(6, dtype=np.float32)[::-1].copy())
"""

PLANTED = HEADER + """
def test_clean():
    assert (x + x).numpy().sum() == 30


def test_planted():
    y = vkt.sort(x)  # site: planted
    assert y.numpy()[0] == 0
"""

MARKERS = HEADER + """
@pytest.mark.fallbacks(max=0)
def test_max0():
    vkt.sort(x)  # site: max0


@pytest.mark.fallbacks(max=0, allow=["vkt_sort"])
def test_allowed():
    vkt.sort(x)


@pytest.mark.fallbacks(max=0, allow=["sort"])
def test_allowed_short():
    vkt.sort(x)


@pytest.mark.fallbacks(max=1)
def test_max1_two():
    vkt.sort(x)
    vkt.sort(x)  # site: max1


@pytest.mark.fallbacks(max=2)
def test_max2_two():
    vkt.sort(x)
    vkt.sort(x)


@pytest.mark.fallbacks(allow=["vkt_dot"])
def test_other_allowed():
    vkt.sort(x)  # site: other


def test_unmarked():
    vkt.sort(x)  # site: unmarked
"""

FIXTURE = HEADER + """
def test_reads_as_it_goes(fallbacks):
    assert fallbacks.total == 0
    vkt.sort(x)  # site: fixture
    assert fallbacks.total == 1
    assert fallbacks.ops["vkt_sort"].count == 1
    assert [s.where for s in fallbacks.sites] == ["test_fixture.py:LINE"]
    vkt.add(x, x)
    assert fallbacks.total == 1


def test_fails_on_its_own(fallbacks):
    vkt.sort(x)
    assert fallbacks.total == 0, str(fallbacks)
"""

BOTH = HEADER + """
@pytest.mark.fallbacks(max=0)
def test_fails_twice():
    vkt.sort(x)  # site: both
    assert False, "the test's own failure"
"""

BAD_MARKER = HEADER + """
@pytest.mark.fallbacks(3)
def test_bad():
    pass
"""


THREADS = HEADER + """
import threading


def on_a_worker():
    t = threading.Thread(target=lambda: vkt.sort(x))  # site: worker
    t.start()
    t.join()


def test_worker():
    on_a_worker()


@pytest.mark.fallbacks(max=0, threads="test")
def test_worker_not_mine():
    on_a_worker()
"""

FIXTURES = HEADER + """
@pytest.fixture
def sorted_first():
    return vkt.sort(x)  # site: setup


@pytest.fixture
def sorts_after():
    yield
    vkt.sort(x)  # site: teardown


def test_setup_counts(sorted_first):
    assert sorted_first.numpy()[0] == 0


def test_teardown_counts(sorts_after):
    pass


@pytest.mark.fallbacks(max=1)
def test_teardown_within(sorts_after):
    pass


def test_reads_its_setup(sorted_first, fallbacks):
    assert fallbacks.total == 1
"""

TYPO = HEADER + """
@pytest.mark.fallbacks(allow=["srot"])
def test_typo():
    vkt.sort(x)  # site: typo
"""


def line(source, tag):
    for n, text in enumerate(source.splitlines(), 1):
        if text.rstrip().endswith(f"# site: {tag}"):
            return n
    raise AssertionError(tag)


def run(tmp_path, name, source, *args, disable="sort", columns=250):
    (tmp_path / name).write_text(source.replace("LINE", str(line(source, "fixture")) if "LINE" in source else ""))
    # Wide enough that pytest does not cut the short summary's lines (it fits them to the terminal).
    env = dict(os.environ, VKT_NATIVE_DISABLE=disable, COLUMNS=str(columns))
    p = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                        *args, name], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def outcomes(out):
    return dict(re.findall(r"::(\w+) (PASSED|FAILED|ERROR)", out))


def summary(out):
    return out.strip().splitlines()[-1]


def test_max_fails_the_planted_test_only(tmp_path):
    rc, out = run(tmp_path, "test_planted.py", PLANTED, "--fbcount-max", "0")
    assert rc == 1, out
    assert re.search(r"\b1 failed, 1 passed\b", summary(out)), out
    assert outcomes(out) == {"test_clean": "PASSED", "test_planted": "FAILED"}
    assert "1 fallback, more than the maximum of 0" in out
    assert re.search(rf"vkt_sort: 1 call, 24 B left the GPU; at test_planted \(test_planted.py:"
                     rf"{line(PLANTED, 'planted')}\) x1", out), out


def test_without_a_gate_nothing_fails(tmp_path):
    rc, out = run(tmp_path, "test_planted.py", PLANTED)
    assert rc == 0 and re.search(r"\b2 passed\b", summary(out)), out


def test_with_no_fallback_nothing_fails(tmp_path):
    rc, out = run(tmp_path, "test_planted.py", PLANTED, "--fbcount-max", "0", disable="")
    assert rc == 0 and re.search(r"\b2 passed\b", summary(out)), out


def test_explicit_plugin_and_entry_point_together(tmp_path):
    rc, out = run(tmp_path, "test_planted.py", PLANTED, "-p", "fbcount.pytest_plugin", "--fbcount-max", "0")
    assert re.search(r"\b1 failed, 1 passed\b", summary(out)), out


def test_marker_and_allow_list(tmp_path):
    rc, out = run(tmp_path, "test_markers.py", MARKERS)
    assert outcomes(out) == {"test_max0": "FAILED", "test_allowed": "PASSED", "test_allowed_short": "PASSED",
                             "test_max1_two": "FAILED", "test_max2_two": "PASSED", "test_other_allowed": "FAILED",
                             "test_unmarked": "PASSED"}, out
    assert re.search(r"\b3 failed, 4 passed\b", summary(out)), out
    assert "2 fallbacks, more than the maximum of 1" in out
    assert f"test_markers.py:{line(MARKERS, 'max1')}" in out
    assert "1 fallback not allowed (vkt_dot allowed), more than the maximum of 0" in out
    assert f"test_other_allowed (test_markers.py:{line(MARKERS, 'other')})" in out


def test_marker_overrides_the_option(tmp_path):
    rc, out = run(tmp_path, "test_markers.py", MARKERS, "--fbcount-max", "5")
    o = outcomes(out)
    # max=5 lets the unmarked test pass; the markers keep their own limits
    assert o["test_unmarked"] == "PASSED" and o["test_max0"] == "FAILED" and o["test_max2_two"] == "PASSED", out
    rc, out = run(tmp_path, "test_markers.py", MARKERS, "--fbcount-max", "0")
    assert outcomes(out)["test_unmarked"] == "FAILED", out
    assert f"test_unmarked (test_markers.py:{line(MARKERS, 'unmarked')})" in out


def test_fixture(tmp_path):
    rc, out = run(tmp_path, "test_fixture.py", FIXTURE)
    assert outcomes(out) == {"test_reads_as_it_goes": "PASSED", "test_fails_on_its_own": "FAILED"}, out
    assert "1 fallback (24 B left the GPU)" in out  # str(fallbacks) in the assertion message


def test_a_test_failing_on_its_own_keeps_its_failure_and_the_census(tmp_path):
    rc, out = run(tmp_path, "test_both.py", BOTH)
    assert outcomes(out) == {"test_fails_twice": "FAILED"}, out
    assert "the test's own failure" in out
    assert "fbcount: 1 fallback, more than the maximum of 0" in out


def test_bad_marker_is_a_usage_error(tmp_path):
    rc, out = run(tmp_path, "test_bad.py", BAD_MARKER)
    assert rc == 4 and "fallbacks(max=N" in out, out


@pytest.mark.parametrize("value", ["-1", "x"])
def test_bad_option_is_a_usage_error(tmp_path, value):
    rc, out = run(tmp_path, "test_planted.py", PLANTED, "--fbcount-max", value)
    assert rc == 4, out


def short_summary(out):
    """The short test summary's lines: 'FAILED file::test - reason'."""
    part = out.split("short test summary info", 1)[-1]
    return [ln for ln in part.splitlines() if ln.startswith(("FAILED", "ERROR"))]


def test_every_thread_counts_unless_asked_not_to(tmp_path):
    rc, out = run(tmp_path, "test_threads.py", THREADS, "--fbcount-max", "0")
    assert outcomes(out) == {"test_worker": "FAILED", "test_worker_not_mine": "PASSED"}, out
    assert f"vkt_sort line {line(THREADS, 'worker')} x1" in out, out
    rc, out = run(tmp_path, "test_threads.py", THREADS, "--fbcount-max", "0", "--fbcount-threads", "test")
    assert outcomes(out) == {"test_worker": "PASSED", "test_worker_not_mine": "PASSED"}, out
    rc, out = run(tmp_path, "test_threads.py", THREADS, "--fbcount-max", "0", "--fbcount-all-threads")
    assert outcomes(out) == {"test_worker": "FAILED", "test_worker_not_mine": "PASSED"}, out


def test_fixture_setup_and_teardown_count_to_their_test(tmp_path):
    rc, out = run(tmp_path, "test_fixtures.py", FIXTURES, "--fbcount-max", "0", "-rA")
    o = outcomes(out)
    assert o["test_setup_counts"] == "FAILED", out
    assert f"vkt_sort line {line(FIXTURES, 'setup')} x1" in out, out
    # The test body passed; its fixture's teardown took it over the maximum: the teardown fails.
    assert "ERROR at teardown of test_teardown_counts" in out, out
    assert any(ln.startswith("ERROR test_fixtures.py::test_teardown_counts - fbcount: vkt_sort line "
                             f"{line(FIXTURES, 'teardown')} x1") for ln in short_summary(out)), out
    assert "test_teardown_within" not in "\n".join(short_summary(out)), out
    assert o["test_reads_its_setup"] == "FAILED", out  # it read 1 (its setup's), then the gate failed it


def test_the_reason_is_the_short_summary_line_and_stays_with_tb_no(tmp_path):
    for tb in ("--tb=auto", "--tb=no"):
        rc, out = run(tmp_path, "test_planted.py", PLANTED, "--fbcount-max", "0", tb)
        want = (f"FAILED test_planted.py::test_planted - fbcount: vkt_sort line "
                f"{line(PLANTED, 'planted')} x1")
        assert any(ln.startswith(want) for ln in short_summary(out)), (tb, out)
    # A test that fails on its own keeps its failure first; the fallbacks follow it.
    rc, out = run(tmp_path, "test_both.py", BOTH, "--tb=no")
    (ln,) = short_summary(out)
    assert "the test's own failure" in ln and f"[fbcount: vkt_sort line {line(BOTH, 'both')} x1" in ln, out


def test_the_session_ends_with_the_tests_that_fell_back(tmp_path):
    # --fbcount counts every test and gates none.
    rc, out = run(tmp_path, "test_planted.py", PLANTED, "--fbcount")
    assert rc == 0 and re.search(r"\b2 passed\b", summary(out)), out
    table = out.split("fbcount: tests with fallbacks", 1)[1]
    assert re.search(rf"^ +1 +24 B  test_planted.py::test_planted +vkt_sort at test_planted.py:"
                     rf"{line(PLANTED, 'planted')}$", table, re.M), out
    assert "test_clean" not in table and "1 test of 2 counted fell back (1 fallback)" in table, out
    rc, out = run(tmp_path, "test_planted.py", PLANTED, "--fbcount", disable="")
    assert "no fallbacks in 2 counted tests" in out, out
    # Gated tests are in it, with their verdict.
    rc, out = run(tmp_path, "test_planted.py", PLANTED, "--fbcount-max", "0")
    assert re.search(r"test_planted.py::test_planted +vkt_sort at test_planted.py:\d+  FAILED$", out, re.M), out
    # Without a gate, a marker or the fixture, nothing is counted and nothing is said.
    rc, out = run(tmp_path, "test_planted.py", PLANTED)
    assert "fbcount:" not in out, out


def test_an_allow_name_of_no_op_is_pointed_out_with_the_closest(tmp_path):
    rc, out = run(tmp_path, "test_typo.py", TYPO)
    assert outcomes(out) == {"test_typo": "FAILED"}, out
    assert "allow names 'srot', which names no op that fell back here (closest: sort)" in out, out
    assert "fbcount: allow name 'srot' names no op that fell back in this session; closest: sort" in out, out


def test_p_no_fbcount_turns_the_plugin_off(tmp_path):
    rc, out = run(tmp_path, "test_planted.py", PLANTED, "-p", "no:fbcount")
    assert rc == 0 and re.search(r"\b2 passed\b", summary(out)), out
    assert "fbcount-" not in out.split("plugins:")[1].splitlines()[0] and "fbcount:" not in out, out
    rc, out = run(tmp_path, "test_planted.py", PLANTED, "-p", "no:fbcount", "--fbcount-max", "0")
    assert rc == 4 and "unrecognized arguments: --fbcount-max" in out, out
    rc, out = run(tmp_path, "test_fixture.py", FIXTURE, "-p", "no:fbcount")
    assert "fixture 'fallbacks' not found" in out, out


def test_the_first_site_and_an_80_column_summary(tmp_path):
    """The session table's first site is the first fallback's (not the one with most bytes);
    at 80 columns the short summary still shows the op and its line."""
    source = """\
import numpy as np
import vkt

ctx = vkt.Context()


def test_two_ops():
    vkt.sort(ctx.tensor(np.arange(2, dtype=np.float32)))  # site: first
    vkt.sort(ctx.tensor(np.arange(64, dtype=np.float32)))  # site: bigger
"""
    first = line(source, "first")
    rc, out = run(tmp_path, "test_order.py", source, "--fbcount-max", "0", columns=80)
    table = out.split("fbcount: tests with fallbacks", 1)[1]
    assert re.search(rf"test_order.py::test_two_ops +vkt_sort at test_order.py:{first}  FAILED",
                     table), out
    (ln,) = short_summary(out)
    assert len(ln) <= 80 and f"fbcount: vkt_sort line {line(source, 'bigger')} +1 x2" in ln, out
