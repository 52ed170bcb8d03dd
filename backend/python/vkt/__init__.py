"""vkt: tensors on libvkt from Python (Vulkan compute, a host reference behind every op).

    import numpy as np, vkt
    with vkt.Context() as ctx:
        a = ctx.tensor(np.random.rand(4, 3).astype(np.float32))
        b = ctx.tensor(np.random.rand(3).astype(np.float32))
        c = vkt.dot(a, b) + 1           # Nx.dot/2, then a broadcast add
        print(c.numpy(), c.shape, c.dtype)

Every op of vkt.h is a function here, named without the vkt_ prefix and with Nx's
defaults; tensors have the usual operators. A step can be recorded once and
replayed (`with ctx.record() as g: ...`, then `g.launch()`), and every dispatch
timed (`ctx.set_profiling(True)`, `ctx.profile()`). Failures raise vkt.Error
carrying libvkt's message and status (vkt.EINVAL ... vkt.EREFUSED). The ops and
types are C (the extension module vkt._vkt), called without ctypes; fbcount
attributes a fallback to the first Python frame outside this package, i.e. to
the caller's line.
"""
import sys

try:
    import numpy  # noqa: F401 - checked here, to say what is missing
except ImportError as e:
    raise ImportError(f"vkt needs numpy (the package's Requires-Dist), which {sys.executable} cannot import: "
                      f"{e}; install it for this interpreter (Debian: python3-numpy; pip install numpy)") from e
try:
    from . import _vkt
except ImportError as e:
    import glob
    import os
    built = sorted(os.path.basename(p) for p in glob.glob(os.path.join(os.path.dirname(__file__), "_vkt.*")))
    raise ImportError(f"vkt's extension module does not load in {sys.executable} ({sys.implementation.cache_tag}): "
                      f"{e}; the package holds {', '.join(built) or 'none'}: build fbcount for this interpreter "
                      "(meson run by it, with its development headers)") from e

from ._lib import library_path  # noqa: E402,F401 - the API
from ._ops import *  # noqa: E402,F401,F403 - the op functions are the package's API
from ._ops import __all__ as _ops_all  # noqa: E402
from ._tensor import Context, ProfileEntry, Tensor, dtype_name, numpy_dtype  # noqa: E402,F401 - the API
from ._vkt import (  # noqa: E402,F401 - the API
    EAXIS, ECTX, EDEVICE, EDTYPE, EGRAPH, EINVAL, ENODEV, ENOMEM, EREFUSED, ESHAPE, OK, STATUSES, Error, Graph)

__all__ = ["Error", "Context", "Tensor", "Graph", "ProfileEntry", "library_path", "dtype_name", "numpy_dtype"] + [
    n for n in _ops_all if n not in ("Context", "Tensor")] + [
    name[4:] for name, _ in STATUSES]
