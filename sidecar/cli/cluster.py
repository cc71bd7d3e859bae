"""Cluster commands of the ``bloomspan`` CLI: ``mine`` (cluster form), ``setup``, ``rollback``,
``runs``, ``report`` and ``explain``.

Each command is a few lines around one library function. The main group
(:mod:`bloomspan.sidecar.cli.main`) registers them with ``cli.add_command(...)``; ``mine`` is
merged there with the JSON Lines form, so its cluster part is the decorator
:func:`cluster_mine_options` plus the function :func:`mine_cluster_command`. This module
also runs on its own: ``python -m bloomspan.sidecar.cli.cluster mine --index ...`` (used by
the kill -9 tests).

Flags are read from ``BLOOMSPAN_<COMMAND>_<FLAG>`` too when the group sets
``auto_envvar_prefix``. Heavy imports happen inside the commands; progress goes to stderr
(a bar on a terminal, one line per event otherwise), results to stdout.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import time

import click

from bloomspan.sidecar.run.mine_config import MineConfig, MiningSection, PublishSection, ScanSection, TemplatesSection

from .config_flags import MINE_FLAGS, knob_option, section_options
from .connection_flags import checked_client, cluster_client as _cluster, connection_options
from .dask_flags import check_dask_address
from .failures import BloomspanGroup, configure_logging

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------- shared pieces
def _fail(exc):
    """Map library errors onto click errors that name the option."""
    from bloomspan.sidecar.errors import ClusterConfigError

    if isinstance(exc, ClusterConfigError):
        hint = MINE_FLAGS.flag_for(exc.field) if "." in (exc.field or "") else f"--{(exc.field or '').replace('_', '-')}"
        return click.BadParameter(str(exc), param_hint=hint)
    return click.ClickException(str(exc))


# ---------------------------------------------------------------------- mine
def shared_mine_options(f):
    """Options ``mine`` has in both forms (JSON Lines and cluster): the lead's merged command
    keeps ONE copy of these; the standalone ``mine`` below uses them as they are. The knobs
    are MineConfig's (:mod:`bloomspan.sidecar.run.mine_config`), declared there once."""
    options = [
        section_options(ScanSection, only=("field",)),
        section_options(MiningSection),
        knob_option(_field(MineConfig, "work_dir")),
        section_options(PublishSection, only=("top",)),
        click.option("--dask", "dask", default=None, metavar="ADDRESS", callback=check_dask_address,
                     help="Mine on Dask: local:N (N worker processes here) or a scheduler, tcp://HOST:8786."),
        click.option("--dask-memory-limit", default=None,
                     help="Memory limit of each local:N worker (default 2GiB; Dask sizes such as 4GiB)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def cluster_mine_options(f):
    """Options only the cluster form of ``mine`` has: the knobs of its scan, templates and
    publish sections and its connection (:class:`ClusterConfig`), and how it prints."""
    options = [
        section_options(ScanSection, skip=("field",)),
        section_options(TemplatesSection),
        section_options(PublishSection, skip=("top",)),
        click.option("--progress", "progress_mode", type=click.Choice(["auto", "bar", "lines", "none"]),
                     default="auto", show_default=True, help="Progress on stderr."),
        click.option("--json", "as_json", is_flag=True, default=False, help="Print the run summary as JSON."),
        click.option("--report/--no-report", "show_report", default=True, show_default=True,
                     help="Print the operator report after publishing."),
    ]
    for option in reversed(options):
        f = option(f)
    return connection_options(f)


def _field(cls: type, name: str) -> dataclasses.Field:
    return next(f for f in dataclasses.fields(cls) if f.name == name)


def read_template_config(path: str | None) -> dict | None:
    """The JSON object of ``--template-config PATH``, or of the flag's value itself when it
    starts with ``{`` (None without the flag)."""
    if not path:
        return None
    if path.lstrip().startswith("{"):
        try:
            return json.loads(path)
        except ValueError as exc:
            raise click.BadParameter(f"not a JSON object ({exc})", param_hint="--template-config") from None
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise click.BadParameter(f"{path}: no such file; give a knobs file or the JSON object itself",
                                 param_hint="--template-config") from None
    except (OSError, ValueError) as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint="--template-config") from None


def mine_cluster_command(params: dict) -> None:
    """Body of ``bloomspan mine --index ...``: ``params`` are click's (see ``MINE_FLAGS``);
    build the config, run, print the summary."""
    from bloomspan.sidecar.errors import BloomspanSidecarError
    from bloomspan.sidecar.run.mining_run import run_mining

    index, dask = params["index"], params["dask"]
    if not index:
        raise click.UsageError("give --index NAME (the source index to mine) or --jsonl PATH")
    config = MINE_FLAGS.build(params, template_config_path=read_template_config(params["template_config_path"]))
    progress_mode, as_json, show_report = params["progress_mode"], params["as_json"], params["show_report"]
    from .progress import command_progress

    t0 = time.perf_counter()
    from bloomspan.sidecar.cluster.source_checks import check_fields_present, check_source

    client = checked_client(config.cluster)
    try:
        check_source(client, index, config.scan.field, cluster=config.cluster.safe_url)
        check_fields_present(client, index, {"--site-field": config.templates.site_field,
                                             "--url-field": config.templates.url_field})
        with command_progress(progress_mode) as progress:
            if dask:
                from bloomspan.sidecar.cli.dask_runs import run_on_dask

                summary = run_on_dask(config, dask, params["dask_memory_limit"], progress, client)
            else:
                summary = run_mining(config, progress=progress, client=client)
    except BloomspanSidecarError as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(json.dumps(summary.as_dict(), indent=1, sort_keys=True))
        return
    inc = summary.incremental
    behind = (f"without moving {summary.template_index} (dry run: `bloomspan diff` compares it, `bloomspan promote "
              f"{summary.run_id}` moves the alias)") if summary.dry_run else f"behind {summary.template_index}"
    click.echo(f"run {summary.run_id} ({summary.kind}{', resumed' if summary.resumed else ''}) published "
               f"{summary.physical_index} {behind} in {time.perf_counter() - t0:.1f}s")
    click.echo(f"documents {summary.docs_seen:,} seen, {summary.docs_mined:,} mined, {summary.docs_skipped:,} skipped "
               f"{summary.skipped_by_reason}; tokens {summary.tokens_mined:,}; phrases {summary.phrases:,}; "
               f"covered {summary.covered_share:.2%}")
    if summary.templates:
        from bloomspan.sidecar.report.text import template_counts

        t = summary.templates
        click.echo(f"templates: {template_counts(t)}; covered with the phrases {t['covered_share']:.2%} of tokens")
    if inc:
        click.echo(f"incremental: {inc.get('reused', 0):,} reused, {inc.get('new', 0):,} new, "
                   f"{inc.get('changed', 0):,} changed, {inc.get('deleted', 0):,} deleted")
    if summary.annotate:
        click.echo(f"annotated: {summary.annotate}")
    if summary.curation and (summary.curation.get("filtered") or summary.curation.get("filtered_templates")):
        click.echo(f"curation: {summary.curation['filtered']:,} mined phrase(s) filtered by deny entries"
                   + (f", {summary.curation['filtered_templates']:,} template record(s)"
                      if summary.curation.get("filtered_templates") else ""))
    if show_report and not summary.dry_run:
        from bloomspan.sidecar.report.operator_report import report
        from bloomspan.sidecar.report.text import render_report

        click.echo(render_report(report(client, config.publish.template_index, top=config.publish.top), top=config.publish.top))


@click.command("mine")
@shared_mine_options
@cluster_mine_options
def mine(**params):
    """Mine a live index through the cluster and publish the template index."""
    mine_cluster_command(params)


# ---------------------------------------------------------------------- the other commands
def setup_command(*, template_index, lease_index, index, clean_indices=(), fields=("text",), **conn) -> None:
    from opensearchpy.exceptions import TransportError

    from bloomspan.sidecar.errors import BloomspanSidecarError
    from bloomspan.sidecar.publish.clean_index_template import InstallReport
    from bloomspan.sidecar.publish.template_index import setup as do_setup

    client = _cluster(**conn)
    report = InstallReport()
    try:
        for line in do_setup(client, template_index, lease_index, index, tuple(clean_indices), tuple(fields),
                             report=report):
            click.echo(f"installed {line}")
    except BloomspanSidecarError as exc:
        raise _fail(exc) from None
    except TransportError as exc:
        raise click.ClickException(f"setup failed: {exc.error} (status {exc.status_code}); the user needs rights "
                                   "to index and component templates and to the indices' mappings") from None
    for problem in report.problems:
        click.echo(f"not installed: {problem}", err=True)
    if report.problems:
        raise click.ClickException(f"{len(report.problems)} item(s) not installed (above)")


@click.command("setup")
@connection_options
@click.option("--template-index", default="bloomspan-templates", show_default=True)
@click.option("--lease-index", default="bloomspan-lease", show_default=True)
@click.option("--index", default=None, help="Also map the bloomspan.* fields on this source index (pattern).")
@click.option("--clean-index", "clean_indices", multiple=True,
              help="Index pattern the proxy writes cleaned documents into (repeatable): a composable index template "
                   "maps the bloomspan fields on new indices, existing ones get them added.")
@click.option("--field", "fields", multiple=True, default=("text",), show_default=True,
              help="Cleaned text field (repeatable): <field>_clean and <field>_chunks are mapped as text.")
def setup(**kwargs):
    """Install the index templates from mappings/ (and the document fields for --index and --clean-index)."""
    setup_command(**kwargs)


def rollback_command(*, template_index, to_run, **conn) -> None:
    from bloomspan.sidecar.errors import BloomspanSidecarError
    from bloomspan.sidecar.publish.template_index import rollback as do_rollback

    client = _cluster(**conn)
    try:
        res = do_rollback(client, template_index, to_run)
    except BloomspanSidecarError as exc:
        raise _fail(exc) from None
    click.echo(f"{template_index} -> {res['to']} (was {', '.join(res['from']) or 'unset'})")


@click.command("rollback")
@connection_options
@click.option("--template-index", default="bloomspan-templates", show_default=True)
@click.option("--to", "to_run", default=None, help="Run id (default: the run before the current one).")
def rollback(**kwargs):
    """Move the template alias back to an earlier run."""
    rollback_command(**kwargs)


def runs_command(*, template_index, as_json, **conn) -> None:
    from bloomspan.sidecar.publish.template_index import list_runs

    rows = list_runs(_cluster(**conn), template_index)
    if as_json:
        click.echo(json.dumps(rows, indent=1, sort_keys=True))
        return
    if not rows:
        click.echo(f"no published run behind {template_index}; run `bloomspan mine --index ... "
                   f"--template-index {template_index}`", err=True)
    for r in rows:
        mark = "*" if r["current"] else " "
        click.echo(f"{mark} {r['run_id']} {r.get('status'):<10} docs={r.get('docs_seen', '-')} "
                   f"phrases={r.get('phrases', '-')} covered={r.get('covered_share', 0) or 0:.2%} "
                   f"finished={r.get('finished_at', '-')}")


@click.command("runs")
@connection_options
@click.option("--template-index", default="bloomspan-templates", show_default=True)
@click.option("--json", "as_json", is_flag=True, default=False)
def runs(**kwargs):
    """List the published runs (* = current)."""
    runs_command(**kwargs)


def report_command(*, template_index, top, as_json, html=None, results=None, **conn) -> None:
    if html or results:  # the page, or a `mine --jsonl` result directory: sidecar/cli/report.py
        from .report import report_files_command

        return report_files_command(template_index=template_index, top=top, as_json=as_json, html=html,
                                    results=results, conn=conn)
    from bloomspan.sidecar.errors import BloomspanSidecarError
    from bloomspan.sidecar.report.operator_report import report as do_report
    from bloomspan.sidecar.report.text import render_report

    try:
        rep = do_report(_cluster(**conn), template_index, top=top)
    except BloomspanSidecarError as exc:
        raise _fail(exc) from None
    click.echo(json.dumps(rep, indent=1, sort_keys=True) if as_json else render_report(rep, top=top))


@click.command("report")
@connection_options
@click.option("--template-index", default="bloomspan-templates", show_default=True)
@click.option("--top", type=int, default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, default=False)
@click.option("--html", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the report as one self-contained HTML page (figures, phrase table, example pages).")
@click.option("--results", type=click.Path(file_okay=False, exists=True), default=None,
              help="Report a `mine --jsonl` result directory (report.json + phrases.jsonl) instead of the cluster.")
def report(**kwargs):
    """Covered share, clutter distribution, index hogs, most cluttered documents and sites."""
    report_command(**kwargs)


def explain_command(*, template_index, doc_id, top, as_json, **conn) -> None:
    from bloomspan.sidecar.errors import BloomspanSidecarError
    from bloomspan.sidecar.report.operator_report import explain as do_explain, render_explain

    try:
        exp = do_explain(_cluster(**conn), template_index, doc_id)
    except BloomspanSidecarError as exc:
        raise _fail(exc) from None
    if as_json:
        exp = {k: v for k, v in exp.items() if k != "text"}
        click.echo(json.dumps(exp, indent=1, sort_keys=True))
    else:
        click.echo(render_explain(exp, top=top))


@click.command("explain")
@connection_options
@click.option("--template-index", default="bloomspan-templates", show_default=True)
@click.option("--id", "doc_id", required=True, help="Document _id (or INDEX:_id for multi-index sources).")
@click.option("--top", type=int, default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, default=False)
def explain(**kwargs):
    """Which phrases cover a document, and where."""
    explain_command(**kwargs)


COMMANDS = (mine, setup, rollback, runs, report, explain)


@click.group(cls=BloomspanGroup,
             context_settings={"auto_envvar_prefix": "BLOOMSPAN", "help_option_names": ["-h", "--help"]})
@click.option("--log-level", default="WARNING", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False))
def cluster_cli(log_level: str) -> None:
    """bloomspan cluster commands (standalone entry point; `bloomspan` registers the same)."""
    configure_logging(log_level)


for _command in COMMANDS:
    cluster_cli.add_command(_command)

if __name__ == "__main__":
    cluster_cli()
