"""Prints the folder of this Python's import path that lies under the prefix argv[1],
relative to it (nothing when none does): where installed packages are importable."""
import os
import sys

prefix = os.path.realpath(sys.argv[1])
for d in sys.path:
    real = os.path.realpath(d)
    if d.endswith(("dist-packages", "site-packages")) and real.startswith(prefix + os.sep):
        print(os.path.relpath(real, prefix))
        break
