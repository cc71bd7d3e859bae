"""Positional writes that finish: ``os.pwrite`` may write fewer bytes than asked."""
from __future__ import annotations

import os


def pwrite_all(fd: int, data, offset: int) -> None:
    """Write all of ``data`` (bytes or a contiguous array) to ``fd`` at byte ``offset``."""
    view = memoryview(data).cast("B")
    while view.nbytes:
        n = os.pwrite(fd, view, offset)
        view = view[n:]
        offset += n
