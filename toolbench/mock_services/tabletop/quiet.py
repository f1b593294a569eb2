"""Import PyBullet without its start-up banner ("pybullet build time: ..."), which its C code
prints straight to a file descriptor; it would land in front of a user's output or JSON."""

from __future__ import annotations

import os
import sys
from types import ModuleType


def import_pybullet() -> ModuleType:
    if "pybullet" in sys.modules:
        return sys.modules["pybullet"]
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        import pybullet
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)
    return pybullet
