"""What a mined run keeps on disk and reads back a piece at a time: records (one JSON value
per line, :class:`RecordFile`) and coverage bitmaps (one file per chunk, :class:`CoverageFiles`).

The mined run's phrase documents and template records grow with the corpus (a phrase's
document bitmap with its documents, the template records with the sites and their pages).
A run that held them whole would need a driver as large as its output; as a
:class:`RecordFile` they cost one record at a time in memory, wherever they are read
(the report's top phrases, the bulk requests of publication). The coverage bitmap grows with
the covered spans; as :class:`CoverageFiles` it costs one chunk at a time.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from .output_files import json_value


class RecordFile:
    """The records of one JSON Lines file, in file order: ``len()`` is their count, and each
    iteration reads the file again (nothing is kept)."""

    def __init__(self, path: str | os.PathLike, count: int | None = None):
        self.path = Path(path)
        if count is None:
            with open(self.path, "rb") as f:
                count = sum(1 for _ in f)
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator:
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                yield json.loads(line)

    def __repr__(self) -> str:
        return f"RecordFile({str(self.path)!r}, count={self.count})"


class RecordFileWriter:
    """Writes records to ``path`` as they come (``write``); ``close()`` returns the
    :class:`RecordFile`. Used as a context manager, a failed block leaves no file."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "w", encoding="utf-8")
        self.count = 0

    def write(self, record) -> None:
        self._f.write(json.dumps(record, ensure_ascii=False, default=json_value) + "\n")
        self.count += 1

    def write_all(self, records) -> RecordFileWriter:
        for record in records:
            self.write(record)
        return self

    def close(self) -> RecordFile:
        if not self._f.closed:
            self._f.close()
        return RecordFile(self.path, self.count)

    def __enter__(self) -> RecordFileWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._f.close()
        if exc_type is not None:
            self.path.unlink(missing_ok=True)


class CoverageFiles:
    """Coverage bitmaps kept one chunk per file (serialized roaring bitmaps), in chunk order:
    ``len()`` is the number of chunks, and each iteration reads them one at a time."""

    def __init__(self, paths: list):
        self.paths = [Path(p) for p in paths]

    def __len__(self) -> int:
        return len(self.paths)

    def __iter__(self) -> Iterator:
        from pyroaring import BitMap

        for path in self.paths:
            yield BitMap.deserialize(path.read_bytes())

    def __repr__(self) -> str:
        return f"CoverageFiles({len(self.paths)} chunk(s))"
