"""The `bloomspan` command line.

Each command is a few lines calling one library function; heavy imports (numba,
opensearch-py) happen inside commands so that `bloomspan --help` and `--version` are
instant. Every flag is also read from ``BLOOMSPAN_<COMMAND>_<FLAG>`` (click's
auto_envvar_prefix), which is how compose, Kubernetes and systemd configure it.
"""
from __future__ import annotations

import json
import logging
import sys

import click


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bloomspan")
    except PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


def _progress(stage: str, count: int) -> None:
    click.echo(f"[{stage}] {count:,}", err=True)


@click.group(context_settings={"auto_envvar_prefix": "BLOOMSPAN", "help_option_names": ["-h", "--help"]})
@click.version_option(version=_version(), prog_name="bloomspan")
@click.option("--log-level", default="WARNING", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False))
def cli(log_level: str) -> None:
    """bloomspan: find, measure and strip boilerplate in search indices."""
    logging.basicConfig(level=log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")


def _mining_config(sigma: int, min_length: int, engine: str, filter_bytes: int | None):
    from bloomspan.engine.config import ConfigError, MiningConfig

    try:
        return MiningConfig(sigma=sigma, min_length=min_length, engine=engine, filter_bytes=filter_bytes)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint=f"--{exc.field.replace('_', '-')}") from None


@cli.command()
@click.option("--jsonl", "jsonl", type=click.Path(dir_okay=False), help="Mine a JSON Lines file (one document per line).")
@click.option("--field", default="text", show_default=True, help="Document field holding the text.")
@click.option("--id-field", default=None, help="Field holding the document id (default: line number).")
@click.option("--sigma", type=int, default=20, show_default=True, help="Minimum number of distinct documents.")
@click.option("--min-length", type=int, default=10, show_default=True, help="Minimum phrase length in tokens.")
@click.option("--engine", type=click.Choice(["bloomspan", "fhk"]), default="bloomspan", show_default=True)
@click.option("--filter-bytes", type=int, default=None, help="Counting-filter size (default 8 bytes/token, max 512 MiB).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Output directory for phrases.jsonl and report.json.")
@click.option("--work-dir", type=click.Path(file_okay=False), default=None, help="Where the mmap'd corpus store lives (default: a temp dir).")
@click.option("--top", type=int, default=10, show_default=True, help="Index hogs to print.")
def mine(jsonl, field, id_field, sigma, min_length, engine, filter_bytes, out_dir, work_dir, top):
    """Mine maximal frequent phrases from a JSON Lines file (--jsonl)."""
    if not jsonl:
        raise click.UsageError("give --jsonl PATH")
    if not out_dir:
        raise click.UsageError("--out DIR is required with --jsonl")
    config = _mining_config(sigma, min_length, engine, filter_bytes)
    from bloomspan.sidecar.jsonl_mining import JsonlInputError, mine_jsonl
    from bloomspan.sidecar.report_text import render_report

    try:
        summary = mine_jsonl(jsonl, field, config, out_dir, id_field=id_field, work_dir=work_dir,
                             progress=_progress, top=top)
    except (JsonlInputError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(render_report(summary.report, top=top))
    click.echo(f"wrote {summary.out_dir}/phrases.jsonl ({summary.phrases} phrases) and {summary.out_dir}/report.json")


@cli.command()
@click.argument("kind", type=click.Choice(["web", "synthetic1", "synthetic2"]))
@click.option("--docs", type=int, required=True, help="Number of documents.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True, help="Output .jsonl file.")
def corpus(kind, docs, seed, out_path):
    """Write a generated corpus (web crawl with ground truth, or the article's synthetic sets)."""
    if docs < 1:
        raise click.BadParameter(f"--docs={docs}: must be >= 1", param_hint="--docs")
    from bloomspan.sidecar.corpora import corpus_by_name, write_jsonl

    n = write_jsonl(corpus_by_name(kind, docs, seed), out_path)
    click.echo(f"wrote {n} documents to {out_path}", err=True)


def main() -> None:
    cli()
