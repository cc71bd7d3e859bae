"""The `bloomspan` command line. Heavy imports (numba, opensearch-py) live inside commands
so that `bloomspan --help` and `--version` are instant."""
from __future__ import annotations

import click


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bloomspan")
    except PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


@click.group(context_settings={"auto_envvar_prefix": "BLOOMSPAN", "help_option_names": ["-h", "--help"]})
@click.version_option(version=_version(), prog_name="bloomspan")
def cli() -> None:
    """bloomspan: find, measure and strip boilerplate in search indices."""


def main() -> None:
    cli()
