"""`bloomspan pipeline`: a run exported as a native ingest pipeline, printed or put on the cluster.

:class:`PipelineConfig`'s fields are the command's flags (one declaration per knob, with its
help); the command builds it from them (``PIPELINE_FLAGS.build``) and calls
:func:`export_run_pipeline`.

:func:`export_run_pipeline` is the whole command after its flags are parsed: read the run (a
``phrases.jsonl`` with the records beside it, or a template index with its curation applied
strictly), build the pipeline for the target engine (:mod:`bloomspan.ingest.pipeline_export`),
then print its JSON or install it after checking the cluster has the processors it needs. A
user error is a one-line :class:`click.ClickException` naming the flag.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from bloomspan.ingest.base.errors import IngestConfigError, IngestError
from bloomspan.sidecar.cli.connection_flags import checked_client
from bloomspan.sidecar.cli.run_fields import published_run_index
from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.knobs import knob, section

if TYPE_CHECKING:
    from bloomspan.ingest.pipeline_export.export import PipelineExport
    from bloomspan.ingest.records.phrase_set import PhraseSet

# The flag of each field an IngestConfigError of the export may name.
EXPORT_FLAGS = {"field": "--field", "scope_field": "--site-field", "url_field": "--url-field", "top": "--top"}


@dataclass(frozen=True)
class PipelineConfig:
    """What `bloomspan pipeline` exports and where: exactly one run (``phrases_path``, or
    ``template_index`` on ``cluster``), the pipeline's id, field, scope and URL fields, mode,
    ``top`` phrases, the ``target_engine`` (auto: the cluster's) and ``print_only``."""

    cluster: ClusterConfig = section(ClusterConfig)
    phrases_path: str | None = knob(None, "phrases.jsonl from `bloomspan mine --jsonl`.", decls=("--phrases",),
                                    kind="existing_file", envvar="BLOOMSPAN_PIPELINE_PHRASES")
    template_index: str | None = knob(None, "Template index alias to read phrases from.")
    pipeline_id: str = knob("bloomspan-clean", "Name of the ingest pipeline to put.", show_default=True)
    field: str = knob("text", None, show_default=True)
    scope_field: str | None = knob(None, "Document field naming its site, for site-scoped records.",
                                   decls=("--site-field",))
    url_field: str | None = knob(None, "Document field with its URL: site sections of template records.")
    mode: str = knob("strip", None, choices=("strip", "downweight"), show_default=True)
    top: int = knob(500, "Phrases (by length x df) the pipeline removes, and records per site or section.",
                    show_default=True)
    target_engine: str = knob("auto", "Processors of which engine; auto: the cluster's (OpenSearch with --print "
                              "alone).", decls=("--engine",), choices=("auto", "opensearch", "elasticsearch"),
                              show_default=True)
    print_only: bool = knob(False, "Print the pipeline JSON instead of installing it.", decls=("--print",),
                            is_flag=True)

    def __post_init__(self) -> None:
        if bool(self.phrases_path) == bool(self.template_index):
            raise ValueError(f"phrases_path={self.phrases_path!r}, template_index={self.template_index!r}: "
                             "give exactly one of them")


def export_run_pipeline(config: PipelineConfig) -> PipelineExport:
    """Export the run ``config`` names; print it (``print_only``) or put it on the cluster."""
    # PipelineConfig's fields are the command's flags: `--help` imports this module, not these
    from bloomspan.ingest.pipeline_export.export import export_pipeline
    from bloomspan.sidecar.cluster.engine import engine_of

    client = checked_client(config.cluster) if config.template_index or not config.print_only else None
    engine = engine_of(client) if client is not None else None
    flavour = (config.target_engine if config.target_engine != "auto"
               else (engine.product if engine is not None else "opensearch"))
    try:
        phrase_set, templates = _run_records(config, client)
        export = export_pipeline(phrase_set, field=config.field, mode=config.mode, top=config.top,
                                 templates=templates, scope_field=config.scope_field, url_field=config.url_field,
                                 engine=flavour)
    except IngestConfigError as exc:
        if exc.field in EXPORT_FLAGS:
            raise click.BadParameter(str(exc), param_hint=EXPORT_FLAGS[exc.field]) from None
        raise click.ClickException(str(exc)) from None
    except IngestError as exc:
        raise click.ClickException(str(exc)) from None
    body = export.body
    if templates:
        _say_applied(export, config.scope_field)
    if config.print_only:
        click.echo(json.dumps(body, indent=1, ensure_ascii=False))
        return export
    safe_url = config.cluster.safe_url
    if engine.product != flavour:
        raise click.BadParameter(f"{safe_url} runs {engine.name}, not {flavour}: drop --engine to install "
                                 f"it there, or add --print to write the {flavour} form", param_hint="--engine")
    missing = engine.missing_processors(sorted({kind for processor in body["processors"] for kind in processor}))
    if missing:  # Elasticsearch's integ-test zip has neither ingest-common nor lang-painless
        raise click.ClickException(f"--url {safe_url}: {engine.name} lacks the ingest processor(s) "
                                   f"{', '.join(missing)} the pipeline needs (modules ingest-common and "
                                   "lang-painless); clean through `bloomspan serve` instead")
    client.ingest.put_pipeline(id=config.pipeline_id, body=body)
    click.echo(f"put ingest pipeline {config.pipeline_id} on {engine.name}: {body['description']}; index with "
               f"?pipeline={config.pipeline_id} or set index.default_pipeline")
    return export


def _run_records(config: PipelineConfig, client) -> tuple[PhraseSet, object]:
    """The run's phrase set and its template records (None when it has none), curated."""
    from bloomspan.ingest.match.loading import run_template_records
    from bloomspan.ingest.records.phrase_set import PhraseSet

    if config.phrases_path:
        return PhraseSet.from_jsonl(config.phrases_path), run_template_records(config.phrases_path)
    from bloomspan.ingest.records.curation import curate_records
    from bloomspan.sidecar.publish.template_reader import (  # opensearch-py only for a template index
        cleaning_records,
        load_phrase_set,
        run_curation,
    )

    physical = published_run_index(client, config.template_index, config.cluster.safe_url, config.scope_field,
                             config.url_field)
    phrase_set = load_phrase_set(client, physical)
    records, with_templates = cleaning_records(client, physical)
    curation = run_curation(client, physical)  # strictly: denied on any site, out everywhere
    if with_templates and curation.entries:
        records = curate_records(records, curation.entries, strict=True).records
    return phrase_set, records if with_templates else None


def _say_applied(export: PipelineExport, scope_field: str | None) -> None:
    """What of the template records the pipeline applies, and what it left out, on stderr."""
    a = export.applied
    click.echo(f"pipeline: {a['exact_phrases']:,} exact phrases, {a['site_records']:,} site records on "
               f"{a['sites']:,} sites, {a['section_records']:,} section records on {a['sections']:,} sections, "
               f"{a['global_records']:,} global records, {len(export.body['processors']):,} processors", err=True)
    for note in export.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(export.left_out_line(), err=True)
    if scope_field is None:
        click.echo("note: template records are scoped per site; without --site-field only global ones apply",
                   err=True)
