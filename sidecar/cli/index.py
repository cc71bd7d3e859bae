"""``bloomspan index --jsonl FILE --index NAME``: load a JSON Lines export into an index, so a
user can try the whole loop (index, mine, report, serve) on their own data.

Per-line errors go to stderr as ``FILE:LINE: reason`` while the other lines are indexed;
progress goes to stderr (a line that rewrites itself on a terminal, one line per bulk
request otherwise); the summary goes to stdout. The exit status is 1 when any line failed.
"""
from __future__ import annotations

import sys
import time

import click

from .connection_flags import cluster_client, connection_options


def _progress_printer():
    """``(progress(lines, bytes_read, file_bytes), done())`` writing to stderr (``file_bytes`` 0:
    a compressed file, whose progress is the bytes decompressed)."""
    t0 = time.perf_counter()
    tty = sys.stderr.isatty()

    def progress(lines: int, read: int, total: int) -> None:
        rate = read / 1e6 / max(time.perf_counter() - t0, 1e-9)
        # total is 0 for a compressed file, whose size does not measure the documents read
        done_part = f"{read / total:.0%} of the file" if total else f"{read / 1e6:,.1f} MB decompressed"
        text = f"bloomspan: index {lines:,} lines, {done_part}, {rate:.1f} MB/s"
        if tty:
            click.echo("\r" + text, nl=False, err=True)
        else:
            click.echo(text, err=True)

    def done() -> None:
        if tty:
            click.echo("", err=True)
    return progress, done


@click.command("index")
@connection_options
@click.option("--jsonl", "path", required=True, type=click.Path(dir_okay=False, exists=True),
              help="JSON Lines file, one document (a JSON object) per line.")
@click.option("--index", "index", required=True,
              help="Target index (created with the bloomspan document mappings when it does not exist) or alias.")
@click.option("--id-field", default=None, help="Field holding each document's _id (dots for nested); "
                                               "default: ids assigned by the cluster.")
@click.option("--batch-size", type=int, default=500, show_default=True, help="Documents per bulk request.")
def index(path, index, id_field, batch_size, **conn):
    """Load a JSON Lines file into an index, with progress and per-line errors."""
    from bloomspan.sidecar.errors import BloomspanSidecarError

    from .index_jsonl import IndexJsonlConfig, IndexLoadError, index_jsonl
    from .input_flags import refuse_parquet

    refuse_parquet(path, "--jsonl", "index")
    try:
        config = IndexJsonlConfig(path=path, index=index, id_field=id_field, batch_size=batch_size)
    except IndexLoadError as exc:
        raise click.BadParameter(str(exc), param_hint=f"--{(exc.field or 'index').replace('_', '-')}") from None
    client = cluster_client(**conn)
    progress, done = _progress_printer()

    def on_error(line: int, reason: str) -> None:
        done()
        click.echo(f"{path}:{line}: {reason}", err=True)

    try:
        summary = index_jsonl(client, config, on_error=on_error, progress=progress)
    except BloomspanSidecarError as exc:
        done()
        raise click.ClickException(str(exc)) from None
    done()
    how = "created with the bloomspan document mappings" if summary.created_index else "existing index"
    click.echo(f"indexed {summary.indexed:,} of {summary.lines - summary.blank:,} documents from {path} into "
               f"{index} ({how}): {summary.created:,} created, {summary.updated:,} updated, {summary.failed:,} failed, "
               f"{summary.blank:,} blank lines skipped, in {summary.seconds:.1f}s")
    if summary.failed:
        raise click.ClickException(f"{summary.failed:,} line(s) of {path} were not indexed (listed above as "
                                   f"{path}:LINE: reason)")
