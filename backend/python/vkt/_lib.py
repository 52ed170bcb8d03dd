"""Loading libvkt into the extension module (vkt._vkt), at the first use, not at import.

The library is found, in order: $VKT_LIBRARY; the path meson recorded in _libpath.py
(absolute in the build tree, relative to this package once installed); the system
loader's libvkt.so.0. It is loaded after libfbcount when the fbcount package has been
imported (in either order): a library binds its calls when it is loaded, so the census
library must be there first to see libvkt's fallbacks. Hence no link to libvkt in the
extension, whose import would load it at once.
"""
import sys
import threading

from . import _vkt
from ._vkt import Error

_lock = threading.Lock()
_path = None


def _load():
    # With the fbcount package imported, libfbcount goes first (see above).
    fb = sys.modules.get("fbcount")
    if fb is not None:
        try:
            fb._lib.lib()
        except Exception:  # noqa: BLE001 - fbcount reports its own failure when it is used
            pass
    from . import _libpath
    try:
        return _libpath.load("VKT_LIBRARY", "libvkt.so.0", opener=_vkt.load)[1]
    except OSError as e:
        raise Error(f"libvkt not found: {e}") from None


def lib():
    """Loads libvkt (at the first call; the ops and types call it themselves when they need
    the library)."""
    global _path
    if _path is None:
        with _lock:
            if _path is None:
                _path = _load()


def library_path():
    """Path of the libvkt this package uses (loads it)."""
    lib()
    return _path
