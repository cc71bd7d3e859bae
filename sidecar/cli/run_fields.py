"""The document fields a published run was mined with, against the ones a command is given.

A run document's ``params`` keep the ``--site-field`` and ``--url-field`` of ``bloomspan mine``;
``clean --template-index`` and ``pipeline --template-index`` read documents by their own
``--site-field``/``--url-field``. A different name is legitimate (another index may name its
site field otherwise) but is most often a typo, after which the site-scoped records apply to
nothing without a word: :func:`field_mismatch_notes` says so, one line per flag.
"""
from __future__ import annotations

import click


def run_fields(client, index: str) -> dict[str, str | None]:
    """``{"site_field": ..., "url_field": ...}`` of the run document of physical ``index``
    (None for a field the run was mined without, or a run document that lacks it)."""
    resp = client.get(index=index, id="run", _source_includes=["params.site_field", "params.url_field"],
                      ignore=[404])
    params = ((resp or {}).get("_source") or {}).get("params") or {}
    return {name: params.get(name) if isinstance(params.get(name), str) else None
            for name in ("site_field", "url_field")}


def field_mismatch_notes(mined: dict[str, str | None], scope_field: str | None, url_field: str | None) -> list[str]:
    """One note per flag whose field differs from the one the run was mined with."""
    notes = []
    for flag, given, run_name, mine_flag, what in (
            ("--site-field", scope_field, mined.get("site_field"), "--site-field", "site-scoped"),
            ("--url-field", url_field, mined.get("url_field"), "--url-field", "section")):
        if given is not None and run_name is not None and given != run_name:
            notes.append(f"note: {flag} {given}: the run was mined with {mine_flag} {run_name}; documents without "
                         f"a field {given!r} get no {what} record: check the name")
    return notes


def published_run_index(client, template_index: str, safe_url: str, scope_field: str | None,
                  url_field: str | None) -> str:
    """The physical index behind alias ``template_index``, after printing :func:`field_mismatch_notes`
    for the fields a command was given; a one-line error naming the flag when no run is published."""
    from bloomspan.sidecar.publish.template_reader import current_run  # local: opensearch-py only here

    physical = current_run(client, template_index)
    if physical is None:
        raise click.ClickException(f"--template-index {template_index}: no such alias on {safe_url}; "
                                   "run `bloomspan mine` first")
    for note in field_mismatch_notes(run_fields(client, physical), scope_field, url_field):
        click.echo(note, err=True)
    return physical
