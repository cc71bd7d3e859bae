"""A site or URL field that no document of a JSON Lines file holds is a typo, not a corpus
without sites: ``mine --jsonl --site-field sitex`` and ``templates --site-field sitex`` ran
the detector on one group and wrote no template, without a word. :func:`check_jsonl_fields`
refuses such a flag in one line naming it and the fields the documents have."""
from __future__ import annotations

import json
import os
from itertools import islice

import click

from bloomspan.sidecar.inputs import DamagedInputError, open_lines
from bloomspan.sidecar.inputs.parquet import ParquetInputError, is_parquet, open_parquet

SAMPLE_DOCUMENTS = 1000  # mine --jsonl checks the first documents only: the file may be large
SHOWN_KEYS = 20


def check_jsonl_fields(path: str, flags: dict[str, str | None], limit: int | None = SAMPLE_DOCUMENTS) -> None:
    """Raise click.BadParameter for the first ``flag -> field name`` of ``flags`` that none of
    the first ``limit`` documents (None: all) holds a non-null value for. Lines that are not
    JSON objects, and a file that cannot be read (or decompressed), are left to the command's own
    reader to name."""
    wanted = {flag: name for flag, name in flags.items() if name}
    if not wanted:
        return
    if os.path.isfile(path) and is_parquet(path):
        _check_parquet_columns(path, wanted)
        return
    held = dict.fromkeys(wanted, False)
    keys: list[str] = []
    docs = 0
    try:
        with open_lines(path) as f:
            for line in islice((ln for ln in f if ln.strip()), limit):
                try:
                    doc = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(doc, dict):
                    continue
                docs += 1
                for flag, name in wanted.items():
                    held[flag] = held[flag] or doc.get(name) is not None
                if len(keys) < SHOWN_KEYS:
                    keys.extend(k for k in doc if k not in keys)
    except (OSError, DamagedInputError):
        return
    for flag, name in wanted.items():
        if docs and not held[flag]:
            some = f"the first {docs:,}" if limit is not None and docs >= limit else f"the {docs:,}"
            raise click.BadParameter(f"{name!r}: none of {some} documents of {path} has this field (fields seen: "
                                     f"{', '.join(keys[:SHOWN_KEYS])}); name the field that holds it", param_hint=flag)


def _check_parquet_columns(path: str, wanted: dict[str, str]) -> None:
    """A Parquet file names its columns: a flag naming none of them is refused."""
    try:
        parquet_file = open_parquet(path)
    except ParquetInputError:
        return  # the command's reader names it
    names = parquet_file.schema_arrow.names
    for flag, name in wanted.items():
        if name not in names:
            raise click.BadParameter(f"{name!r}: {path} has no such column (columns: {', '.join(names[:SHOWN_KEYS])}); "
                                     "name the column that holds it", param_hint=flag)
