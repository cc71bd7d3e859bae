"""Writes that finish and last: ``os.pwrite`` may write fewer bytes than asked, and a file
created or renamed in a folder survives a crash only once the folder itself is fsynced.
Shared by the corpus store and the sidecar's checkpoints and snapshots."""
from __future__ import annotations

import os
from pathlib import Path


def pwrite_all(fd: int, data, offset: int) -> None:
    """Write all of ``data`` (bytes or a contiguous array) to ``fd`` at byte ``offset``."""
    view = memoryview(data).cast("B")
    while view.nbytes:
        n = os.pwrite(fd, view, offset)
        view = view[n:]
        offset += n


def fsync_dir(path: str | os.PathLike | Path) -> None:
    """fsync the folder ``path`` (makes the names of files created or renamed in it durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
