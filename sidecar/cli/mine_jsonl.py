"""The JSON Lines form of ``bloomspan mine`` (``--jsonl FILE --out DIR``): the MiningConfig
and template options from the flags, the file mined on this process or on Dask, the report
printed. The command (:func:`bloomspan.sidecar.cli.main.mine`) parses; this owns the work and
the one-line errors."""
from __future__ import annotations

import click


def _mining_config(sigma: int, min_length: int, engine: str, filter_bytes: int | None):
    from bloomspan.engine.mining.config import ConfigError, MiningConfig

    try:
        return MiningConfig(sigma=sigma, min_length=min_length, engine=engine, filter_bytes=filter_bytes)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint=f"--{exc.field.replace('_', '-')}") from None


def mine_jsonl_command(jsonl: str, id_field: str | None, out_dir: str | None, kwargs: dict) -> None:
    """Body of ``bloomspan mine --jsonl FILE``: ``kwargs`` are click's parameters of ``mine``."""
    if not out_dir:
        raise click.UsageError("--out DIR is required with --jsonl")
    config = _mining_config(kwargs["sigma"], kwargs["min_length"], kwargs["engine"], kwargs["filter_bytes"])
    from bloomspan.sidecar.cli.cluster import read_template_config
    from bloomspan.sidecar.cli.progress import command_progress
    from bloomspan.sidecar.report.text import render_report, template_counts
    from bloomspan.sidecar.run.jsonl_mining import JsonlInputError, mine_jsonl
    from bloomspan.sidecar.run.run_templates import TemplateOptions, TemplateOptionsError

    top = kwargs["top"]
    site_field, url_field = kwargs.get("site_field"), kwargs.get("url_field")
    try:  # the detector runs whenever a site or URL field is given (--no-templates skips it)
        templates = TemplateOptions(site_field, url_field, kwargs.get("templates"),
                                    read_template_config(kwargs.get("template_config_path")))
    except TemplateOptionsError as exc:
        raise click.BadParameter(str(exc).split(": ", 1)[-1], param_hint=exc.flag) from None
    if templates.enabled:
        from bloomspan.sidecar.cli.field_presence import check_jsonl_fields

        check_jsonl_fields(jsonl, {"--site-field": site_field, "--url-field": url_field})
    try:
        with command_progress(kwargs.get("progress_mode") or "auto") as progress:
            if kwargs.get("dask"):
                from bloomspan.sidecar.cli.dask_runs import mine_jsonl_on_dask

                summary = mine_jsonl_on_dask(jsonl, kwargs["field"], config, out_dir, id_field, kwargs["dask"],
                                             kwargs.get("dask_memory_limit"), progress, top,
                                             templates if templates.enabled else None)
            else:
                summary = mine_jsonl(jsonl, kwargs["field"], config, out_dir, id_field=id_field,
                                     work_dir=kwargs["work_dir"], progress=progress, top=top,
                                     templates=templates if templates.enabled else None)
    except (JsonlInputError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    if config.sigma > summary.documents and not kwargs.get("allow_empty"):  # as the cluster form refuses it
        from bloomspan.sidecar.run.run_guards import sigma_above_documents

        raise click.ClickException(sigma_above_documents(
            config.sigma, summary.documents, jsonl, kwargs["field"],
            f"{summary.out_dir}/phrases.jsonl holds no phrase; --allow-empty accepts such a run"))
    click.echo(render_report(summary.report, top=top))
    found = summary.report.get("templates")
    if found:
        click.echo(f"templates: {template_counts(found)}; covered with the phrases {found['covered_share']:.2%} of tokens")
    click.echo(f"wrote {summary.out_dir}/phrases.jsonl ({summary.phrases} phrases)"
               + (f", {summary.out_dir}/{found['file']}" if found else "") + f" and {summary.out_dir}/report.json")
