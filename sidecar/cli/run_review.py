"""``bloomspan diff [RUN_A] [RUN_B]`` and ``bloomspan promote RUN``: look at a run before the
alias moves to it (a ``mine --dry-run`` or ``serve --review`` run), then move it."""
from __future__ import annotations

import json

import click

from .connection_flags import cluster_client, connection_options


@click.command("diff")
@click.argument("run_a", required=False)
@click.argument("run_b", required=False)
@click.option("--template-index", default="bloomspan-templates", show_default=True)
@click.option("--examples", type=int, default=5, show_default=True,
              help="Documents whose cleaned text would change most (0: none, faster).")
@click.option("--top", type=int, default=10, show_default=True, help="Phrases and sites listed per section.")
@click.option("--json", "as_json", is_flag=True, default=False)
@connection_options
def diff(run_a, run_b, template_index, examples, top, as_json, **conn):
    """Phrases added, removed and changed in df from RUN_A to RUN_B, covered share per site,
    and the documents whose cleaned text changes most. Default: the run behind the alias
    against the newest run (or, when that is the one behind the alias, the run before it)."""
    from bloomspan.sidecar.errors import BloomspanSidecarError
    from bloomspan.sidecar.report.run_diff import diff_runs, render_diff

    if examples < 0:
        raise click.BadParameter(f"{examples}: must be >= 0", param_hint="--examples")
    try:
        result = diff_runs(cluster_client(**conn), template_index, run_a, run_b, examples=examples)
    except BloomspanSidecarError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) if as_json
               else render_diff(result, top=top))


@click.command("promote")
@click.argument("run")
@click.option("--template-index", default="bloomspan-templates", show_default=True)
@connection_options
def promote(run, template_index, **conn):
    """Move the template alias to RUN (a complete run, e.g. one published with --dry-run)."""
    from bloomspan.sidecar.errors import BloomspanSidecarError
    from bloomspan.sidecar.publish.template_index import rollback

    try:
        res = rollback(cluster_client(**conn), template_index, run)
    except BloomspanSidecarError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{template_index} -> {res['to']} (was {', '.join(res['from']) or 'unset'}); serve picks it up at its "
               "next reload")
