"""JSON Lines files of corpus documents: one ``json.dumps`` object per line, UTF-8."""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path


def write_jsonl(docs: Iterable[dict], path: str | os.PathLike) -> int:
    """Write ``docs`` to ``path`` (streaming; non-ASCII kept as is); return the count.

    The file is written to ``<path>.tmp`` and renamed on success, so an interrupted run
    never leaves a truncated corpus under the final name.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            for doc in docs:
                f.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
                f.write("\n")
                n += 1
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return n


def read_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    """Documents of a JSON Lines file, in order (blank lines skipped)."""
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{lineno}: not a JSON object ({e.msg})") from e
