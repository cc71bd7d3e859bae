"""Template-quality commands of the ``bloomspan`` CLI: ``templates`` detects short,
site-scoped and slotted templates in a JSON Lines file; ``quality`` scores every method
against a corpus with ground truth; ``real-corpus`` builds such a corpus from the HTML
documentation sites installed on this machine. Heavy imports happen inside the commands."""
from __future__ import annotations

import json
import os

import click


def _read(path: str, field: str, group_field: str | None, url_field: str | None):
    from bloomspan.sidecar.run.jsonl_mining import JsonlInputError, read_documents

    texts, groups, urls = [], [], []
    try:
        for _, text in read_documents(path, field, None):
            texts.append(text)
    except JsonlInputError as exc:
        raise click.ClickException(str(exc)) from None
    if group_field or url_field:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    obj = json.loads(line)
                    groups.append(obj.get(group_field) if group_field else None)
                    urls.append(obj.get(url_field) if url_field else None)
    return texts, (groups if group_field else None), (urls if url_field else None)


# TemplateConfig's fields and option types, written out so that `bloomspan --help` does not
# import the engine (numba); tests/unit/sidecar/cli/test_quality.py checks it against the dataclass.
TEMPLATE_CONFIG_OPTIONS: tuple[tuple[str, type | None], ...] = (
    ("sigma_fraction", float), ("sigma_floor", int), ("block_min_length", int), ("run_min_length", int),
    ("edge_anchors", bool), ("section_depth", int), ("global_sigma", int), ("global_min_sites", int),
    ("global_min_length", None), ("global_blocks", bool), ("scoped_min_length", None), ("slots", bool),
    ("skeleton", bool), ("skeleton_anchor_fraction", float), ("skeleton_line_length", int),
    ("skeleton_echo_length", int), ("skeleton_site_echo_length", int), ("skeleton_toc_lines", int),
    ("skeleton_toc_line_length", int), ("skeleton_box_fraction", float), ("skeleton_box_lines", int),
    ("middle_content_tokens", int), ("exact_phrases_on_sites", bool), ("engine", str),
)


def _template_config_options(func):
    """One option per TemplateConfig field (``--skeleton-line-length 6``, ``--no-slots``,
    ``--scoped-min-length none``); options not given keep the field's default."""
    for name, typ in reversed(TEMPLATE_CONFIG_OPTIONS):
        flag = name.replace("_", "-")
        text = f"TemplateConfig.{name} (default: see bloomspan.engine.templates.detector)"
        if typ is bool:
            opt = click.option(f"--{flag}/--no-{flag}", f"cfg_{name}", default=None, help=text)
        elif typ is None:
            opt = click.option(f"--{flag}", f"cfg_{name}", default=None, metavar="INT|none",
                               help=text + "; 'none' switches the pass off")
        else:
            opt = click.option(f"--{flag}", f"cfg_{name}", type=typ, default=None, help=text)
        func = opt(func)
    return func


def _template_config(options: dict):
    """TemplateConfig from the ``cfg_*`` options that were given; ConfigError -> usage error."""
    from bloomspan.engine.mining.config import ConfigError
    from bloomspan.engine.templates.detector import TemplateConfig

    given = {}
    for key, value in options.items():
        if value is None:
            continue
        name = key[len("cfg_"):]
        if name in ("global_min_length", "scoped_min_length"):
            if str(value).lower() == "none":
                value = None
            else:
                try:
                    value = int(value)
                except ValueError:
                    raise click.BadParameter(f"{value!r}: must be an integer or 'none'",
                                             param_hint="--" + name.replace("_", "-")) from None
        given[name] = value
    try:
        return TemplateConfig(**given)
    except ConfigError as e:
        raise click.BadParameter(str(e), param_hint="--" + e.field.replace("_", "-")) from None


@click.command("templates")
@click.option("--jsonl", "jsonl", type=click.Path(dir_okay=False, exists=True), required=True)
@click.option("--field", default="text", show_default=True)
@click.option("--group-field", default="site", show_default=True, help="Field naming the site (scope); '' for none.")
@click.option("--url-field", default="url", show_default=True, help="Field with the page URL (site sections); '' for none.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True, help="Template records (JSON Lines).")
@_template_config_options
def templates(jsonl, field, group_field, url_field, out_path, **cfg_options):
    """Detect templates, short ones included: whole repeated lines, site-scoped phrases, digit
    slots, and page skeletons (navigation that differs per page between repeated lines).

    Defaults are the configuration that scored best on real documentation sites
    (bench/RESULTS.md); every TemplateConfig field has its option. The records are read by
    bloomspan.ingest.template_matcher.TemplateMatcher.
    """
    from bloomspan.engine.templates.detector import detect_templates_in_texts
    from bloomspan.sidecar.cli.progress import command_progress

    config = _template_config(cfg_options)
    texts, groups, urls = _read(jsonl, field, group_field or None, url_field or None)
    if not texts:
        raise click.ClickException(f"{jsonl}: no documents")
    with command_progress():
        result = detect_templates_in_texts(texts, groups, urls, config)
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
    from bloomspan.sidecar.cli.progress import command_progress
    from bloomspan.sidecar.corpora import read_jsonl
    from bloomspan.sidecar.corpora.quality_eval import (
        evaluate_methods,
        per_site_table,
        prepare_corpus,
        standard_methods,
        summary_table,
    )

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
    from bloomspan.sidecar.corpora.real_corpus import build_real_corpus

    try:
        summary = build_real_corpus(out_path, max_pages_per_site=max_pages)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {summary.documents:,} pages to {summary.path}: " +
               ", ".join(f"{name} {info.get('written', info)}" for name, info in summary.sites.items()))


COMMANDS = (templates, quality, real_corpus)
