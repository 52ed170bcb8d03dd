"""The pinned build of llama.cpp and ggml the ggml and llama tests run: fetched by
tools/deps/ggml.sh into the build folder (once), on lavapipe's first Vulkan device; and the
tests' record of what failed."""
import os
import subprocess

failures = []


def expect(ok, what):
    """Records what failed (and says it) when ok is false; returns ok."""
    if not ok:
        failures.append(what)
        print("FAIL:", what)
    return ok


def fetch(ggml_sh, cache):
    """The folder of the libraries; None, said on stdout, when they cannot be fetched."""
    got = subprocess.run(["bash", ggml_sh, cache], capture_output=True, text=True, timeout=600)
    if got.returncode != 0:
        print(f"cannot fetch the libraries:\n{got.stderr}")
        return None
    return got.stdout.strip().splitlines()[-1]


def environment():
    """The tests' environment: ggml on the first Vulkan device, the census where a test
    says (fbcount run -o), never where the caller's FBCOUNT_OUTPUT points."""
    env = dict(os.environ, GGML_VK_VISIBLE_DEVICES="0")
    env.pop("FBCOUNT_OUTPUT", None)
    return env
