"""pytest plugin: gate tests on GPU->host fallbacks.

    pytest --fbcount-max 0                  # every test: at most 0 fallbacks
    @pytest.mark.fallbacks(max=0, allow=["vkt_sort"])   # this test: vkt_sort may fall back
    def test_step(fallbacks): ...           # the fixture: what this test counted so far

A gated test, and one that uses the fixture, runs in a count of the test's thread (with
--fbcount-all-threads, of every thread) around the test function's call; it fails when more
fallbacks than its maximum come from ops not in its allow list, and the failure names each
op, its count, its bytes and the lines that called it. The marker overrides --fbcount-max. Loaded with
`-p fbcount.pytest_plugin`, or through the pytest11 entry point once installed.
"""
import pytest

import fbcount

_LIMITS = pytest.StashKey()
_RESULT = pytest.StashKey()


def pytest_addoption(parser):
    group = parser.getgroup("fbcount", "GPU->host fallbacks (libfbcount)")
    group.addoption("--fbcount-max", type=int, default=None, metavar="N",
                    help="fail every test with more than N fallbacks (a fallbacks marker overrides it)")
    group.addoption("--fbcount-all-threads", action="store_true", default=False,
                    help="count the fallbacks of every thread during a gated test, not only the test's")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "fallbacks(max=0, allow=()): fail the test when more than max of its fallbacks come from ops "
        "not in allow (op names as the census gives them, e.g. 'vkt_sort')")
    n = config.getoption("--fbcount-max")
    if n is not None and n < 0:
        raise pytest.UsageError(f"--fbcount-max expects a count >= 0, got {n}")


def _limits(item):
    """(max, allow) for a gated test, or None."""
    mark = item.get_closest_marker("fallbacks")
    if mark is not None:
        if mark.args:
            raise pytest.UsageError(f"{item.nodeid}: use fallbacks(max=N, allow=[...]), keywords only")
        unknown = set(mark.kwargs) - {"max", "allow"}
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: fallbacks() takes max and allow, not {sorted(unknown)}")
        mx = mark.kwargs.get("max", 0)
        allow = mark.kwargs.get("allow", ())
        if isinstance(allow, str) or not all(isinstance(a, str) for a in allow):
            raise pytest.UsageError(f"{item.nodeid}: fallbacks(allow=...) takes a list of op names")
        if not isinstance(mx, int) or mx < 0:
            raise pytest.UsageError(f"{item.nodeid}: fallbacks(max=...) takes a count >= 0, got {mx!r}")
        return mx, frozenset(allow)
    mx = item.config.getoption("--fbcount-max")
    return None if mx is None else (mx, frozenset())


def pytest_collection_modifyitems(config, items):
    # A malformed marker is a usage error of the whole run, found before anything runs.
    for item in items:
        item.stash[_LIMITS] = _limits(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    limits = item.stash.get(_LIMITS, None)
    fixture = getattr(item, "funcargs", {}).get("fallbacks")
    c = fixture if isinstance(fixture, Fallbacks) else None
    if limits is None and c is None:
        yield
        return
    if c is None:
        c = fbcount.count(all_threads=item.config.getoption("--fbcount-all-threads"))
    elif item.config.getoption("--fbcount-all-threads"):
        c.all_threads = True
    try:
        c.__enter__()
    except fbcount.Error as e:
        if limits is not None:
            item.stash[_RESULT] = (limits, None, str(e))
        if isinstance(c, Fallbacks):
            c.problem = str(e)
        yield
        return
    try:
        yield
    finally:
        c.__exit__(None, None, None)
        if limits is not None:
            item.stash[_RESULT] = (limits, c, None)


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def _violation(limits, census):
    """The failure text for a census over its limits, or None."""
    mx, allow = limits
    if census.total <= mx:
        return None
    try:
        ops = census.ops
    except fbcount.Error as e:
        # A library without per-op censuses: its own report still names the ops and sites.
        if allow:
            return f"cannot apply the allow list: {e}\n{census}"
        return f"{_plural(census.total, 'fallback')}, more than the maximum of {mx}:\n{census}"
    counted = {op: oc for op, oc in ops.items() if op not in allow}
    n = sum(oc.count for oc in counted.values())
    if n <= mx:
        return None
    allowed = f" not allowed ({', '.join(sorted(allow))} allowed)" if allow else ""
    lines = [f"{_plural(n, 'fallback')}{allowed}, more than the maximum of {mx}:"]
    for op, oc in counted.items():
        sites = ", ".join(f"{s} x{s.count}" for s in census.sites_of(op)) or "(unknown)"
        lines.append(f"  {op}: {_plural(oc.count, 'call')}, {fbcount._fmt_bytes(oc.bytes)} left the GPU; "
                     f"at {sites}")
    return "\n".join(lines)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when != "call" or _RESULT not in item.stash:
        return
    rep = outcome.get_result()
    limits, census, problem = item.stash[_RESULT]
    del item.stash[_RESULT]
    text = f"fbcount: cannot count this test's fallbacks: {problem}" if problem else None
    if census is not None:
        v = _violation(limits, census)
        text = f"fbcount: {v}" if v else None
    if text is None:
        return
    if rep.passed:
        rep.outcome = "failed"
        rep.longrepr = text
    else:
        rep.sections.append(("fbcount", text))


class Fallbacks(fbcount.count):
    """The fallbacks fixture: the count of the test function's call (the same count as the
    gate's), readable during the test and after it (c.total, c.ops, c.sites, str(c))."""

    problem = None

    def _sync(self):
        if self.problem:
            raise fbcount.Error(f"this test's fallbacks cannot be counted: {self.problem}")
        super()._sync()


@pytest.fixture
def fallbacks():
    """The fallbacks counted in this test's call so far: total, bytes, ops, sites, str()."""
    return Fallbacks()
