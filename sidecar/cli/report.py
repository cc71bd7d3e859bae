"""``bloomspan report --html FILE`` and ``bloomspan report --results DIR``: the report as a page
(for the run behind ``--template-index``, or a ``mine --jsonl`` result directory), and the
text report of a result directory. The ``report`` command (:mod:`.cluster`) hands over
here when either flag is given."""
from __future__ import annotations

import json

import click


def report_files_command(*, template_index: str, top: int, as_json: bool, html: str | None, results: str | None,
                         conn: dict) -> None:
    from bloomspan.sidecar.errors import BloomspanSidecarError

    try:
        if results:
            model = _results_model(results, html, top, as_json)
            if model is None:
                return
        else:
            from bloomspan.sidecar.report.model import cluster_report_model

            from .connection_flags import cluster_client

            model = cluster_report_model(cluster_client(**conn), template_index)
        from bloomspan.sidecar.report.html import write_html

        size = write_html(model, html)
    except BloomspanSidecarError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.BadParameter(f"{html}: cannot be written ({exc.strerror})", param_hint="--html") from None
    shown, total = len(model["phrases"]), model["phrases_total"]
    click.echo(f"wrote {html} ({size / 1e3:,.0f} kB: {len(model['runs'])} run(s), {shown:,} of {total:,} phrases, "
               f"{len(model['examples'])} example page(s)); open it in a browser")
    for note in model["notes"]:
        click.echo(f"note: {note}", err=True)


def _results_model(results: str, html: str | None, top: int, as_json: bool) -> dict | None:
    """The model of a result directory when a page is wanted; else print its text report (None)."""
    from bloomspan.sidecar.report.model import read_results_report, results_report_model

    if html:
        return results_report_model(results)
    rep = read_results_report(results)
    if as_json:
        click.echo(json.dumps(rep, indent=1, sort_keys=True))
    else:
        from bloomspan.sidecar.report.text import render_report

        click.echo(render_report(rep, top=top))
    return None
