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
carrying libvkt's message and status (vkt.EINVAL ... vkt.EGRAPH). The wrappers
are thin on purpose: fbcount attributes a fallback to the first Python frame
outside this package, i.e. to the caller's line.
"""
from ._lib import (  # noqa: F401 - the API
    EAXIS, ECTX, EDEVICE, EDTYPE, EGRAPH, EINVAL, ENODEV, ENOMEM, ESHAPE, OK, STATUSES, Error, library_path)
from ._ops import *  # noqa: F401,F403 - the op functions are the package's API
from ._ops import __all__ as _ops_all
from ._tensor import Context, Graph, ProfileEntry, Tensor, dtype_name, numpy_dtype  # noqa: F401 - the API

__all__ = ["Error", "Context", "Tensor", "Graph", "ProfileEntry", "library_path", "dtype_name", "numpy_dtype"] + [
    n for n in _ops_all if n not in ("Context", "Tensor")] + [
    name[4:] for name, _ in STATUSES]
