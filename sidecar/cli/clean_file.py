"""`bloomspan clean`: a file's documents cleaned with a run's phrases, end to end.

:func:`clean_file` is the whole command after its flags are parsed: load the run (a
``phrases.jsonl`` with the records beside it, or a template index with its curation), clean
the JSON Lines or Parquet file (:mod:`.clean_jsonl`, :mod:`.clean_parquet`) and tell the
operator what happened: the summary line on stdout, notes and the first errors on stderr. A
user error is a one-line :class:`click.ClickException` naming the flag.
"""
from __future__ import annotations

import gc
from dataclasses import dataclass

import click

from bloomspan.ingest.base.errors import IngestError
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.match.loading import load_run_phrases
from bloomspan.sidecar.cli.clean_jsonl import CleanSummary, clean_jsonl
from bloomspan.sidecar.cli.connection_flags import checked_client
from bloomspan.sidecar.cli.progress import command_progress
from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.inputs.parquet import ParquetInputError, is_parquet

TEMPLATES_WITHOUT_SITE_NOTE = "note: template records are scoped per site; without --site-field only global ones apply"


@dataclass(frozen=True)
class CleanFileConfig:
    """What `bloomspan clean` cleans and how: ``cleaner`` (fields, mode, chunks, the scope and
    URL fields), exactly one run (``phrases_path``, or ``template_index`` on ``cluster``), the
    input and the outputs (``errors_path`` defaults to ``OUT.errors.jsonl``)."""

    cleaner: CleanerConfig
    in_path: str
    out_path: str
    phrases_path: str | None = None
    template_index: str | None = None
    cluster: ClusterConfig | None = None
    errors_path: str | None = None
    over_ratio_out: str | None = None

    def __post_init__(self) -> None:
        if bool(self.phrases_path) == bool(self.template_index):
            raise ValueError(f"phrases_path={self.phrases_path!r}, template_index={self.template_index!r}: "
                             "give exactly one of them")
        if self.template_index and self.cluster is None:
            raise ValueError(f"template_index={self.template_index!r} without cluster: give the cluster it is on")


def clean_file(config: CleanFileConfig) -> CleanSummary:
    """Clean ``config.in_path`` into its outputs and report it; the summary of what was written."""
    cleaner = _run_cleaner(config)
    fields = config.cleaner
    if cleaner.templates is not None and fields.scope_field is None:
        click.echo(TEMPLATES_WITHOUT_SITE_NOTE, err=True)
    parquet = is_parquet(config.in_path)
    if parquet:
        for flag, path in (("--out", config.out_path), ("--over-ratio-out", config.over_ratio_out)):
            if path and not path.lower().endswith(".parquet"):
                raise click.BadParameter(f"{path}: {config.in_path} is Parquet and is cleaned into Parquet (its "
                                         "schema plus bloomspan's columns): name the output .parquet", param_hint=flag)
    watched = tuple(f for f in (fields.scope_field, fields.url_field) if f is not None)
    errors_path = config.errors_path or config.out_path + ".errors.jsonl"
    # The records' sets and tuples live as long as the command: out of the collector's reach,
    # every full collection the documents' allocations trigger stops walking them again.
    gc.freeze()
    try:
        with command_progress() as progress:
            if parquet:
                from bloomspan.sidecar.cli.clean_parquet import clean_parquet  # pyarrow only for Parquet

                summary = clean_parquet(cleaner, config.in_path, config.out_path, errors_path,
                                        config.over_ratio_out, progress=progress, watched_fields=watched)
            else:
                summary = clean_jsonl(cleaner, config.in_path, config.out_path, errors_path,
                                      config.over_ratio_out, progress=progress, watched_fields=watched)
    except ParquetInputError as exc:
        raise click.ClickException(str(exc)) from None
    _report(config, summary)
    return summary


def _run_cleaner(config: CleanFileConfig) -> Cleaner:
    """The cleaner of the run ``config`` names, its notes on stderr; an ingest error is one line."""
    fields = config.cleaner
    try:
        if config.phrases_path:
            loaded = load_run_phrases(config.phrases_path)
            for note in loaded.notes:
                click.echo(f"note: {note}", err=True)
            if (fields.match == "windows" and fields.min_length is None and loaded.min_length is None
                    and len(loaded.phrase_set)):
                click.echo(f"note: {config.phrases_path} records no min_length: its phrases are matched whole; "
                           "give --min-length L (the run's --min-length) to match their windows", err=True)
            return Cleaner(loaded.phrase_set, fields, templates=loaded.templates)
        from bloomspan.sidecar.cli.run_fields import published_run_index
        from bloomspan.sidecar.publish.template_reader import load_cleaner  # opensearch-py only here

        client = checked_client(config.cluster)
        physical = published_run_index(client, config.template_index, config.cluster.safe_url, fields.scope_field,
                                 fields.url_field)
        # The template index's allow and deny lists apply (bloomspan curate).
        cleaner, curation, _ = load_cleaner(client, physical, fields)
        if curation.entries:
            click.echo(f"curation: {curation.denied} deny and {curation.allowed} allow entries applied", err=True)
        return cleaner
    except IngestError as exc:
        raise click.ClickException(str(exc)) from None


def _report(config: CleanFileConfig, summary: CleanSummary) -> None:
    """The summary line on stdout; notes, the first errors and a damaged input on stderr."""
    mb = summary.bytes_in / 1e6
    # one count: every line read (not blank) is cleaned, unchanged or an error, unreadable lines included
    read = summary.cleaned + summary.unchanged + summary.errors
    # "cleaned" is every document the cleaner wrote (a page without boilerplate gets its ratio too),
    # so how many had any boilerplate is said beside it
    click.echo(f"{read:,} documents: {summary.cleaned:,} cleaned ({summary.with_boilerplate:,} with boilerplate), "
               f"{summary.unchanged:,} unchanged, "
               f"{summary.errors:,} errors, {summary.over_ratio:,} over ratio; boilerplate {summary.boilerplate_share:.2%} "
               f"of tokens; {mb:.1f} MB in {summary.seconds:.2f}s ({mb / max(summary.seconds, 1e-9):.1f} MB/s)")
    in_path, fields = config.in_path, config.cleaner
    if summary.documents and not summary.tokens and not summary.errors:
        click.echo(f"note: no document of {in_path} has a token in --field {', '.join(fields.fields)}; check the "
                   "field name", err=True)
    for flag, name, what in (("--site-field", fields.scope_field, "site-scoped records"),
                             ("--url-field", fields.url_field, "section records")):
        if name is not None and summary.documents and not summary.with_field[name]:
            click.echo(f"note: {flag} {name}: no document of {in_path} has this field, so no {what} applied "
                       f"(fields seen: {', '.join(summary.keys_seen)}); name the field that holds it", err=True)
    for line in summary.first_errors:
        click.echo(line, err=True)
    if summary.errors:
        more = summary.errors - len(summary.first_errors) - bool(summary.damaged)  # the damage: said below
        click.echo(f"{'... ' + format(more, ',') + ' more; ' if more else ''}"
                   f"errors described in {summary.outputs['errors']}", err=True)
    if summary.damaged:
        raise click.ClickException(f"{summary.damaged}; {config.out_path} holds every document before it")
