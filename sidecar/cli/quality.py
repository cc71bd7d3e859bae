"""Template-quality commands of the ``bloomspan`` CLI: ``templates`` detects short,
site-scoped and slotted templates in a JSON Lines file; ``quality`` scores every method
against a corpus with ground truth; ``real-corpus`` builds such a corpus from the HTML
documentation sites installed on this machine. Heavy imports happen inside the commands."""
from __future__ import annotations

import json
import os

import click


def _read(path: str, field: str, group_field: str | None, url_field: str | None):
    """Texts, and the group and URL values of each (a value that is not a non-empty string is
    None), read in one pass of the file (plain or compressed)."""
    from bloomspan.sidecar.run.jsonl_mining import JsonlInputError, read_documents_with

    extra = tuple(name for name in (group_field, url_field) if name)
    texts, values = [], []
    try:
        for _, text, vals in read_documents_with(path, field, None, extra):
            texts.append(text)
            values.append(vals)
    except JsonlInputError as exc:
        raise click.ClickException(str(exc)) from None
    groups = [v[0] for v in values] if group_field else None
    urls = [v[-1] for v in values] if url_field else None
    return texts, groups, urls


def template_config_options() -> list[tuple[str, str, object, object]]:
    """``(flag, option name, default, kind)`` for every field of TemplateConfig and of its
    nested SkeletonConfig (``--skeleton-line-length``), generated from the dataclasses, whose
    module imports no numba; kind is bool, int, float, str or "int|none" (an optional integer)."""
    import dataclasses

    from bloomspan.engine.templates.config import SkeletonConfig, TemplateConfig

    def kind(f: dataclasses.Field, default):
        return "int|none" if str(f.type).replace(" ", "") == "int|None" else type(default)
    out = []
    for f in TemplateConfig.option_fields():
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        out.append((f.name.replace("_", "-"), f.name, default is not None, bool) if f.name == "skeleton"
                   else (f.name.replace("_", "-"), f.name, default, kind(f, default)))
    for f in dataclasses.fields(SkeletonConfig):
        out.append((f"skeleton-{f.name.replace('_', '-')}", f"skeleton.{f.name}", f.default, kind(f, f.default)))
    return out


def _template_config_options(func):
    """One option per TemplateConfig field (``--skeleton-line-length 6``, ``--no-slots``,
    ``--scoped-min-length none``); options not given keep the field's default."""
    for flag, name, default, kind in reversed(template_config_options()):
        text = f"TemplateConfig.{name} (default: {'none' if default is None else default})"
        dest = "cfg_" + name.replace(".", "__")
        if kind is bool:
            opt = click.option(f"--{flag}/--no-{flag}", dest, default=None, help=text)
        elif kind == "int|none":
            opt = click.option(f"--{flag}", dest, default=None, metavar="INT|none",
                               help=text + "; 'none' switches the pass off")
        else:
            opt = click.option(f"--{flag}", dest, type=kind, default=None, help=text)
        func = opt(func)
    return func


def _template_config(options: dict):
    """TemplateConfig from the ``cfg_*`` options that were given; ConfigError -> usage error."""
    from bloomspan.engine.mining.config import ConfigError
    from bloomspan.engine.templates.config import TemplateConfig

    kinds = {name: kind for _, name, _, kind in template_config_options()}
    flags = {name: flag for flag, name, _, _ in template_config_options()}
    given: dict = {}
    skeleton: dict = {}
    for key, value in options.items():
        if value is None:
            continue
        name = key[len("cfg_"):].replace("__", ".")
        if kinds[name] == "int|none":
            if str(value).lower() == "none":
                value = None
            else:
                try:
                    value = int(value)
                except ValueError:
                    raise click.BadParameter(f"{value!r}: must be an integer or 'none'",
                                             param_hint="--" + flags[name]) from None
        if name.startswith("skeleton."):
            skeleton[name.split(".", 1)[1]] = value
        else:
            given[name] = value
    if skeleton and given.get("skeleton") is not False:
        given["skeleton"] = skeleton
    try:
        return TemplateConfig(**given)
    except ConfigError as e:
        raise click.BadParameter(str(e), param_hint="--" + flags.get(e.field, e.field.replace("_", "-"))) from None


@click.command("templates")
@click.option("--jsonl", "jsonl", type=click.Path(dir_okay=False, exists=True), required=True)
@click.option("--field", default="text", show_default=True)
@click.option("--site-field", "group_field", default="site", show_default=True, help="Field naming the site (scope); '' for none.")
@click.option("--url-field", default="url", show_default=True, help="Field with the page URL (site sections); '' for none.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True, help="Template records (JSON Lines).")
@_template_config_options
def templates(jsonl, field, group_field, url_field, out_path, **cfg_options):
    """Detect templates, short ones included: whole repeated lines, site-scoped phrases, digit
    slots, and page skeletons (navigation that differs per page between repeated lines).

    Defaults are the configuration that scored best on real documentation sites
    (bench/RESULTS.md); every TemplateConfig field has its option. The records are read by
    bloomspan.ingest.match.template_matcher.TemplateMatcher.
    """
    from bloomspan.engine.templates.detector import detect_templates_in_texts
    from bloomspan.sidecar.cli.progress import command_progress

    config = _template_config(cfg_options)
    texts, groups, urls = _read(jsonl, field, group_field or None, url_field or None)
    if not texts:
        raise click.ClickException(f"{jsonl}: no documents")
    from bloomspan.sidecar.cli.field_presence import check_jsonl_fields

    given = click.get_current_context().get_parameter_source  # a default the file lacks is a corpus without it
    unheld = {flag: name for flag, param, name, values in (("--site-field", "group_field", group_field, groups),
                                                           ("--url-field", "url_field", url_field, urls))
              if values is not None and all(v is None for v in values)
              and given(param) is not click.core.ParameterSource.DEFAULT}
    check_jsonl_fields(jsonl, unheld, limit=None)
    with command_progress() as progress:
        result = detect_templates_in_texts(texts, groups, urls, config, progress=progress)
    tmp = out_path + ".partial"
    with open(tmp, "w", encoding="utf-8") as f:
        for record in result.records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(tmp, out_path)
    cov = result.detection.coverage
    click.echo(f"{len(result.records):,} templates in {len(texts):,} documents; {int(cov.sum()):,} of {cov.size:,} "
               f"tokens covered ({cov.mean() if cov.size else 0:.2%}); wrote {out_path}")


@click.command("quality")
@click.option("--jsonl", "jsonl", type=click.Path(dir_okay=False, exists=True), required=True,
              help="Corpus with truth.template_spans (from `bloomspan corpus web` or `bloomspan real-corpus`).")
@click.option("--per-site", is_flag=True, default=False, help="Also print the per-site table.")
def quality(jsonl, per_site):
    """Score exact MCFP, the whole-line baseline and the template detector against ground truth."""
    from bloomspan.corpora import read_jsonl
    from bloomspan.corpora.quality_eval import (
        evaluate_methods,
        per_site_table,
        prepare_corpus,
        standard_methods,
        summary_table,
    )
    from bloomspan.sidecar.cli.progress import command_progress

    with command_progress():
        corpus = prepare_corpus(read_jsonl(jsonl))
        results = evaluate_methods(corpus, standard_methods())
    click.echo(summary_table(results))
    if per_site:
        click.echo("")
        click.echo(per_site_table(results))


@click.command("real-corpus")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True)
@click.option("--max-pages", type=int, default=1000, show_default=True, help="Pages per site, spread over the site.")
def real_corpus(out_path, max_pages):
    """Build a corpus with ground truth from installed HTML documentation (apache2-doc, python-*-doc, ...)."""
    from bloomspan.corpora.real_corpus import build_real_corpus

    try:
        summary = build_real_corpus(out_path, max_pages_per_site=max_pages)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {summary.documents:,} pages to {summary.path}: " +
               ", ".join(f"{name} {info.get('written', info)}" for name, info in summary.sites.items()))


COMMANDS = (templates, quality, real_corpus)
