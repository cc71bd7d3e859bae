"""The checks every versioned page-model record (``line_shape``, ``title_nav``, ``own_facts``)
passes before its own fields are read: a version this bloomspan reads, and every key present.
Each error names the record, the kind and what to do."""
from __future__ import annotations

from collections.abc import Iterable, Mapping


def check_model_record(rec: Mapping, kind: str, record_version: int, keys: Iterable[str], where: str) -> None:
    """Raise ValueError unless ``rec["version"]`` is an integer from 1 to ``record_version`` and
    ``rec`` holds every one of ``keys`` (a record without its version is not read as version 1)."""
    version = rec.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"{where}: {kind} version={version!r}: must be an integer >= 1; mine again")
    if version > record_version:
        raise ValueError(f"{where}: {kind} version={version!r} is newer than this bloomspan reads "
                         f"({record_version}); upgrade bloomspan or mine again")
    for name in keys:
        if name not in rec:
            raise ValueError(f"{where}: {kind} record lacks {name!r}; mine again")
