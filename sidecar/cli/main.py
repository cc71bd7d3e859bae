"""The `bloomspan` command line.

Each command is a few lines calling one library function; heavy imports (numba,
opensearch-py) happen inside commands so that `bloomspan --help` and `--version` are
instant. Every flag is also read from ``BLOOMSPAN_<COMMAND>_<FLAG>`` (click's
auto_envvar_prefix, plus explicit names where the parameter name differs from the flag),
which is how compose, Kubernetes and systemd configure it.
"""
from __future__ import annotations

import click

from bloomspan.sidecar.cli.cluster import (
    COMMANDS as _CLUSTER_COMMANDS,
    cluster_mine_options,
    mine_cluster_command,
    shared_mine_options,
)
from bloomspan.sidecar.cli.config_flags import CLEAN_FLAGS, CONNECTION_FLAGS, PIPELINE_FLAGS, section_options
from bloomspan.sidecar.cli.connection_flags import checked_client, cluster_config, connection_options
from bloomspan.sidecar.cli.failures import BloomspanGroup, configure_logging
from bloomspan.sidecar.cli.ingest_pipeline import PipelineConfig
from bloomspan.sidecar.cli.mine_jsonl import mine_jsonl_command


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bloomspan")
    except PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    """--version, looked up only when asked: reading the installed metadata costs every
    other command ~0.05 CPU s (click's version_option needs the string when the group is built)."""
    if value and not ctx.resilient_parsing:
        click.echo(f"bloomspan, version {_version()}")
        ctx.exit()


@click.group(cls=BloomspanGroup,
             context_settings={"auto_envvar_prefix": "BLOOMSPAN", "help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
@click.option("--log-level", default="WARNING", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False))
def cli(log_level: str) -> None:
    """bloomspan: find, measure and strip boilerplate in search indices."""
    configure_logging(log_level)


@cli.command()
@click.option("--jsonl", "jsonl", type=click.Path(dir_okay=False),
              help="Mine a JSON Lines file (one document per line) instead of a live index.")
@click.option("--id-field", default=None, help="With --jsonl: field holding the document id (default: line number).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="With --jsonl: output directory for phrases.jsonl and report.json.")
@shared_mine_options
@cluster_mine_options
def mine(jsonl, id_field, out_dir, **kwargs):
    """Mine maximal frequent phrases: from a live index (--index, publishes the template index)
    or from a JSON Lines file (--jsonl, writes phrases.jsonl and report.json)."""
    if not jsonl:
        if out_dir or id_field:
            raise click.UsageError("--out and --id-field go with --jsonl; a cluster run publishes to --template-index")
        mine_cluster_command(kwargs)
        return
    mine_jsonl_command(jsonl, id_field, out_dir, kwargs)


@cli.command()
@click.argument("kind", type=click.Choice(["web", "synthetic1", "synthetic2"]))
@click.option("--docs", type=int, required=True, help="Number of documents.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True,
              help="Output file: .jsonl, .jsonl.gz, .jsonl.zst, .parquet or .warc.wet.gz (the name decides).")
def corpus(kind, docs, seed, out_path):
    """Write a generated corpus (web crawl with ground truth, or the article's synthetic sets, Part 5)."""
    if docs < 1:
        raise click.BadParameter(f"--docs={docs}: must be >= 1", param_hint="--docs")
    from bloomspan.corpora import corpus_by_name, write_jsonl
    from bloomspan.sidecar.cli.progress import command_progress

    try:
        with command_progress():
            n = write_jsonl(corpus_by_name(kind, docs, seed), out_path)
    except ValueError as exc:  # e.g. synthetic1 needs at least 5 documents
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {n} documents to {out_path}", err=True)


@cli.command()
@click.option("--phrases", "phrases_path", envvar="BLOOMSPAN_CLEAN_PHRASES", type=click.Path(dir_okay=False, exists=True), help="phrases.jsonl from `bloomspan mine`.")
@click.option("--template-index", default=None, help="Template index alias to read phrases from (with --url).")
@connection_options
@click.option("--in", "in_path", envvar="BLOOMSPAN_CLEAN_IN", type=click.Path(dir_okay=False, exists=True), required=True)
@click.option("--out", "out_path", envvar="BLOOMSPAN_CLEAN_OUT", type=click.Path(dir_okay=False), required=True)
@click.option("--errors", "errors_path", envvar="BLOOMSPAN_CLEAN_ERRORS", type=click.Path(dir_okay=False), default=None, help="Per-document errors (default OUT.errors.jsonl).")
@click.option("--field", "fields", multiple=True, default=("text",), show_default=True, envvar="BLOOMSPAN_CLEAN_FIELD", help="Text field(s) to clean; repeatable.")
@click.option("--mode", type=click.Choice(["strip", "mark", "downweight"]), default="strip", show_default=True)
@click.option("--max-ratio", type=float, default=None, help="Documents with a higher boilerplate ratio go to --over-ratio-out.")
@click.option("--over-ratio-out", type=click.Path(dir_okay=False), default=None)
@click.option("--chunk-size", type=int, default=None, help="Also emit <field>_chunks of this many characters (RAG).")
@click.option("--chunk-overlap", type=int, default=0, show_default=True)
@click.option("--site-field", "scope_field", default=None, help="Document field naming its site, for site-scoped phrases.")
@click.option("--url-field", default=None, help="Document field with its URL: site sections of template records.")
@click.option("--fingerprint", is_flag=True, default=False, help="Add bloomspan.fingerprint of the cleaned text.")
@click.option("--match", "match", type=click.Choice(["windows", "phrases"]), default="windows", show_default=True,
              help="windows: every run of --min-length tokens of a known phrase is boilerplate; phrases: whole "
                   "phrases only.")
@click.option("--min-length", "min_length", type=click.IntRange(min=1), default=None,
              help="Window length for --match windows (default: the min_length the phrases were mined with).")
def clean(phrases_path, template_index, in_path, out_path, errors_path, over_ratio_out, **params):
    """Strip, mark or down-weight known boilerplate in a JSON Lines file.

    --phrases takes `bloomspan mine` phrases (with the templates.jsonl that run wrote next to
    them, if any) or `bloomspan templates` records; with template records (or a template
    index mined with a site field) whole-line, slotted, site-scoped templates and page
    skeletons apply (give --site-field, and --url-field for sections).
    A line the cleaner cannot handle stays in --out unchanged and is described in --errors.
    """
    if bool(phrases_path) == bool(template_index):
        raise click.UsageError("give exactly one of --phrases PATH or --template-index NAME")
    from bloomspan.ingest.base.errors import IngestError
    from bloomspan.ingest.clean.cleaner import CleanerConfig
    from bloomspan.sidecar.cli.clean_file import CleanFileConfig, clean_file

    try:
        cleaner = CleanerConfig(**CLEAN_FLAGS.config_kwargs(params), skip_missing=True, id_field=None)
    except IngestError as exc:
        raise click.ClickException(str(exc)) from None
    cluster = cluster_config(**CONNECTION_FLAGS.config_kwargs(params)) if template_index else None
    clean_file(CleanFileConfig(cleaner=cleaner, in_path=in_path, out_path=out_path, phrases_path=phrases_path,
                               template_index=template_index, cluster=cluster,
                               errors_path=errors_path, over_ratio_out=over_ratio_out))


@cli.command()
@connection_options
@click.option("--docs", type=int, default=3000, show_default=True, help="Generated pages to index.")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--sigma", type=int, default=20, show_default=True)
@click.option("--min-length", type=int, default=10, show_default=True)
@click.option("--work-dir", default="./bloomspan-work/demo", show_default=True)
@click.option("--index", default="bloomspan-demo-crawl", show_default=True, help="Index the generated crawl goes to.")
@click.option("--template-index", default="bloomspan-demo-templates", show_default=True)
@click.option("--lease-index", default="bloomspan-demo-lease", show_default=True)
def demo(docs, seed, sigma, min_length, work_dir, index, template_index, lease_index, **conn):
    """Index a generated web crawl, mine it through the cluster, publish and report."""
    from bloomspan.sidecar.cli.demo import DemoConfig, run_demo
    from bloomspan.sidecar.cli.progress import command_progress

    cluster = cluster_config(**conn)
    try:
        config = DemoConfig(cluster=cluster, docs=docs, seed=seed, sigma=sigma, min_length=min_length,
                            work_dir=work_dir, index=index, template_index=template_index, lease_index=lease_index)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--docs") from None
    client = checked_client(cluster)
    with command_progress() as progress:
        def say(text: str) -> None:
            progress.close()  # a bar line still open on the terminal ends before the text
            click.echo(text)

        run_demo(config, say=say, client=client, progress=progress)


@cli.command()
@section_options(PipelineConfig, only=("phrases_path", "template_index"))
@connection_options
@section_options(PipelineConfig, skip=("phrases_path", "template_index"))
def pipeline(**params):
    """Export the run as a native ingest pipeline (gsub + painless), for writes that cannot go through the proxy."""
    if bool(params["phrases_path"]) == bool(params["template_index"]):
        raise click.UsageError("give exactly one of --phrases PATH or --template-index NAME")
    from bloomspan.sidecar.cli.ingest_pipeline import export_run_pipeline

    export_run_pipeline(PIPELINE_FLAGS.build(params))


from bloomspan.sidecar.cli.companion import COMMANDS as _COMPANION_COMMANDS  # noqa: E402
from bloomspan.sidecar.cli.curate import curate as _curate_command  # noqa: E402
from bloomspan.sidecar.cli.index import index as _index_command  # noqa: E402
from bloomspan.sidecar.cli.quality import COMMANDS as _QUALITY_COMMANDS  # noqa: E402
from bloomspan.sidecar.cli.run_review import diff as _diff_command, promote as _promote_command  # noqa: E402
from bloomspan.sidecar.cli.serve import serve as _serve_command  # noqa: E402
from bloomspan.sidecar.cli.warmup import warmup as _warmup_command  # noqa: E402

for _command in (*_COMPANION_COMMANDS, *_QUALITY_COMMANDS, _serve_command, _index_command, _curate_command,
                 _diff_command, _promote_command, _warmup_command):
    cli.add_command(_command)

for _command in _CLUSTER_COMMANDS:
    if _command.name != "mine":  # merged into `mine` above
        cli.add_command(_command)


def main() -> None:
    try:
        cli()
    except SystemExit as done:  # click ends every run so, with the command's exit status
        exit_without_teardown(done.code)
        raise


def exit_without_teardown(code) -> None:
    """End the process now, once a command has returned, without the interpreter's teardown.

    Tearing down a process that loaded the numba kernels costs ~0.65 CPU s (a Dask driver that
    warmed all of them for its workers; the single process less), more than mining a small
    file: freeing each kernel's LLVM objects and then every module, when the process is about
    to hand all of its memory back anyway. Every command closes its files, clients and
    clusters before it returns, so this runs the ``atexit`` handlers (``logging.shutdown``, which
    flushes the logging handlers, is one), flushes stdout/stderr and leaves with ``os._exit``.
    Where a thread that is not a daemon still runs (it may hold work the normal exit would wait
    for) it returns, and the caller exits the usual way."""
    import atexit
    import os
    import sys
    import threading

    if any(t is not threading.main_thread() and t.is_alive() and not t.daemon for t in threading.enumerate()):
        return
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if not isinstance(code, int) and code is not None:
        print(code, file=sys.stderr)  # what sys.exit does with a message
    atexit._run_exitfuncs()  # logging.shutdown and the libraries' own clean-up, as a normal exit runs them
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    os._exit(status)


if __name__ == "__main__":
    main()
