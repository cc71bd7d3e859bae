"""JSON Lines files of corpus documents: one ``json.dumps`` object per line, UTF-8, plain or
gzip / Zstandard compressed as the name says (``web.jsonl.gz``; :mod:`bloomspan.sidecar.inputs`),
a Parquet file for a ``.parquet`` name, a WET file for ``.wet`` / ``.wet.gz`` (:func:`write_jsonl` only)."""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from bloomspan.sidecar.inputs import compression_of_name, open_lines, open_output
from bloomspan.sidecar.inputs.parquet import write_parquet
from bloomspan.sidecar.inputs.warc import WET_NAMES, write_wet


def write_jsonl(docs: Iterable[dict], path: str | os.PathLike) -> int:
    """Write ``docs`` to ``path`` (streaming; non-ASCII kept as is); return the count.

    The file is written to ``<path>.tmp`` and renamed on success, so an interrupted run
    never leaves a truncated corpus under the final name.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    try:
        if path.name.lower().endswith(".parquet"):
            n = write_parquet(docs, str(tmp))
            os.replace(tmp, path)
            return n
        if path.name.lower().endswith(WET_NAMES):
            n = write_wet(docs, str(tmp), path.name)
            os.replace(tmp, path)
            return n
        with open_output(str(tmp), compression_of_name(path.name)) as f:
            for doc in docs:
                f.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
                n += 1
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return n


def read_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    """Documents of a JSON Lines file, in order (blank lines skipped)."""
    with open_lines(str(path)) as f:
        for lineno, line in enumerate(f, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{lineno}: not a JSON object ({e.msg})") from e
                except UnicodeDecodeError as e:
                    raise ValueError(f"{path}:{lineno}: not valid UTF-8 ({e.reason} at byte {e.start})") from e
