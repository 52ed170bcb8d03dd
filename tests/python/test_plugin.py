"""The pytest plugin, as a user meets it: pytest runs on test files written here, in a
subprocess that finds the plugin through its pytest11 entry point (the build tree has the
dist-info beside the package), with VKT_NATIVE_DISABLE forcing the planted fallbacks."""
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


def line(source, tag):
    for n, text in enumerate(source.splitlines(), 1):
        if text.rstrip().endswith(f"# site: {tag}"):
            return n
    raise AssertionError(tag)


def run(tmp_path, name, source, *args, disable="sort"):
    (tmp_path / name).write_text(source.replace("LINE", str(line(source, "fixture")) if "fixture" in source else ""))
    env = dict(os.environ, VKT_NATIVE_DISABLE=disable)
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
    assert outcomes(out) == {"test_max0": "FAILED", "test_allowed": "PASSED", "test_max1_two": "FAILED",
                             "test_max2_two": "PASSED", "test_other_allowed": "FAILED", "test_unmarked": "PASSED"}, out
    assert re.search(r"\b3 failed, 3 passed\b", summary(out)), out
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
