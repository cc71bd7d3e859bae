"""``--dask local:N`` checked against this machine before Dask starts anything: N worker
processes far beyond its cores (``local:100000``) made Dask spawn processes until the command
hung or died with a traceback. A scheduler address is the way to a larger cluster."""
from __future__ import annotations

import os
import re

import click

WORKERS_PER_CORE = 4  # more local worker processes than this per core only add start-up and memory
_LOCAL = re.compile(r"local:(\d+)")


def most_local_workers() -> int:
    """The largest N ``local:N`` accepts on this machine."""
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def check_dask_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """click callback of ``--dask``: refuse ``local:N`` with more workers than :func:`most_local_workers`."""
    m = _LOCAL.fullmatch(value or "")
    if m and int(m.group(1)) > most_local_workers():
        cores = os.cpu_count() or 1
        raise click.BadParameter(f"local:{m.group(1)} starts {int(m.group(1)):,} worker processes on this machine's "
                                 f"{cores} core(s); give local:N with N <= {most_local_workers()}, or a scheduler "
                                 "address such as tcp://scheduler:8786 for a larger cluster")
    return value
