"""Input files a command does not read yet, refused in one line before it starts."""
from __future__ import annotations

import os

import click


def refuse_parquet(path: str | None, flag: str, command: str) -> None:
    """``dedup`` and ``index`` rewrite or send each JSON Lines line as its bytes; a Parquet file
    has no lines, so it is refused with what to run instead."""
    from bloomspan.sidecar.inputs.parquet import is_parquet

    if path and os.path.isfile(path) and is_parquet(path):
        raise click.BadParameter(f"{path} is Parquet, and `bloomspan {command}` reads JSON Lines (plain, .gz or "
                                 ".zst): export the rows as JSON Lines first (mine, templates and clean read Parquet)",
                                 param_hint=flag)
