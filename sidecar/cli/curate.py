"""``bloomspan curate deny|allow|list|remove|mode``: the operator's lists beside the template index.

Each subcommand is a few lines around :mod:`bloomspan.sidecar.curation.store`. A phrase is
given as text and tokenized like the documents (so ``"Share this article!"`` is the entry
``share this article``); ``--id`` names one record of the run instead (a template record).
``--site`` scopes an entry to a site or a site section (``shop.example.com/help``).
"""
from __future__ import annotations

import json

import click

from .connection_flags import cluster_client, connection_options


def _template_option(f):
    return click.option("--template-index", default="bloomspan-templates", show_default=True,
                        help="Template alias whose curation this is (stored in <template-index>-curation).")(f)


def _fail(exc) -> click.ClickException:
    return click.ClickException(str(exc))


def _entry(action: str, phrase: str | None, phrase_id: str | None, site: str | None, who: str | None,
           why: str | None):
    from bloomspan.engine.text.tokenizer import tokenize
    from bloomspan.ingest.records.curation import CurationEntry, CurationError
    from bloomspan.sidecar.curation.store import default_who

    tokens = tuple(tokenize(phrase)) if phrase else ()
    if phrase and not tokens:
        raise click.BadParameter(f"{phrase!r} has no tokens (letters or digits)", param_hint="PHRASE")
    if not phrase and not phrase_id:
        raise click.UsageError(f"give the PHRASE to {action}" + (" or --id PHRASE_ID" if action == "deny" else ""))
    try:
        return CurationEntry(action=action, tokens=tokens, phrase_id=phrase_id, scope=site.strip("/") if site else None,
                             who=who or default_who(), why=why)
    except CurationError as exc:
        hint = {"scope": "--site", "phrase_id": "--id"}.get(exc.field, "PHRASE")
        raise click.BadParameter(str(exc), param_hint=hint) from None


def _affected(client, template_index: str, entry) -> tuple[str | None, list[str]]:
    """``(run id, texts)``: the phrases of the run behind the alias the entry touches."""
    from bloomspan.ingest.records.curation import denying_entry
    from bloomspan.sidecar.publish.template_reader import current_run, load_phrase_set

    physical = current_run(client, template_index)
    if physical is None:
        return None, []
    phrases = load_phrase_set(client, physical, curated=False)
    hits = [p.text for p in phrases if denying_entry({"tokens": p.tokens, "id": p.id, "scope": p.scope}, [entry],
                                                     frozenset([entry.scope]) if entry.scope else frozenset())]
    return physical, hits


def _store(action: str, phrase, phrase_id, site, who, why, template_index, conn) -> None:
    from bloomspan.sidecar.curation.store import add_entry
    from bloomspan.sidecar.errors import BloomspanSidecarError

    entry = _entry(action, phrase, phrase_id, site, who, why)
    client = cluster_client(**conn)
    try:
        add_entry(client, template_index, entry)
    except BloomspanSidecarError as exc:
        raise _fail(exc) from None
    where = f" on {entry.scope}" if entry.scope else ""
    click.echo(f"{action} {entry.text or entry.phrase_id!r}{where}: entry {entry.id}")
    if action == "deny":
        physical, hits = _affected(client, template_index, entry)
        if physical is not None:
            click.echo(f"{len(hits):,} phrase(s) of {physical} contain it or lie inside it and are no longer applied"
                       f"{where}" + (f", e.g. {hits[0]!r}" if hits else ""))
    click.echo("serve picks it up at its next reload; clean, pipeline and mine read it when they start", err=True)


def _change_options(f):
    for option in reversed([
        click.argument("phrase", required=False),
        click.option("--site", default=None, help="Only on this site (host) or site section (host/folder)."),
        click.option("--why", default=None, help="Why: shown by list, explain and the report."),
        click.option("--who", default=None, help="Who (default: the login name)."),
        _template_option,
    ]):
        f = option(f)
    return connection_options(f)


@click.group("curate")
def curate() -> None:
    """Allow and deny lists the cleaner, the proxy, the pipeline export and mining follow."""


@curate.command("deny")
@_change_options
@click.option("--id", "phrase_id", default=None, help="Deny one record of the run by its phrase id instead.")
def deny(phrase, site, why, who, template_index, phrase_id, **conn):
    """Never apply PHRASE (nor any phrase containing it or contained in it), also after re-mining."""
    _store("deny", phrase, phrase_id, site, who, why, template_index, conn)


@curate.command("allow")
@_change_options
def allow(phrase, site, why, who, template_index, **conn):
    """Apply PHRASE as boilerplate even though it is not (yet) frequent enough to be mined."""
    _store("allow", phrase, None, site, who, why, template_index, conn)


@curate.command("remove")
@click.argument("entry_id")
@click.option("--why", default=None)
@click.option("--who", default=None, help="Who (default: the login name).")
@_template_option
@connection_options
def remove(entry_id, why, who, template_index, **conn):
    """Remove entry ENTRY_ID (it stays in the history, `list --all`)."""
    from bloomspan.sidecar.curation.store import default_who, remove_entry
    from bloomspan.sidecar.errors import BloomspanSidecarError

    try:
        remove_entry(cluster_client(**conn), template_index, entry_id, who or default_who(), why)
    except BloomspanSidecarError as exc:
        raise _fail(exc) from None
    click.echo(f"removed {entry_id}")


@curate.command("mode")
@click.argument("pattern")
@click.argument("mode", type=click.Choice(["strip", "mark", "downweight", "shadow"]))
@click.option("--why", default=None)
@click.option("--who", default=None, help="Who (default: the login name).")
@_template_option
@connection_options
def mode(pattern, mode, why, who, template_index, **conn):
    """Clean writes to serve's --clean-index PATTERN in MODE from its next reload (no restart)."""
    from bloomspan.sidecar.curation.store import default_who, set_mode
    from bloomspan.sidecar.errors import BloomspanSidecarError

    try:
        set_mode(cluster_client(**conn), template_index, pattern, mode, who or default_who(), why)
    except BloomspanSidecarError as exc:
        raise _fail(exc) from None
    click.echo(f"{pattern}: {mode} (serve applies it at its next reload, --reload-every)")


@curate.command("list")
@click.option("--all", "show_all", is_flag=True, default=False, help="Also removed entries.")
@click.option("--json", "as_json", is_flag=True, default=False)
@_template_option
@connection_options
def list_entries(show_all, as_json, template_index, **conn):
    """The entries and pattern modes, newest change first."""
    from bloomspan.sidecar.curation.store import read_documents
    from bloomspan.sidecar.errors import BloomspanSidecarError

    try:
        docs = read_documents(cluster_client(**conn), template_index)
    except BloomspanSidecarError as exc:
        raise _fail(exc) from None
    docs = [d for d in docs if show_all or d.get("status", "active") == "active"]
    if as_json:
        click.echo(json.dumps(docs, indent=1, sort_keys=True))
        return
    if not docs:
        click.echo(f"no curation entries for {template_index}", err=True)
    for d in docs:
        removed = " [removed]" if d.get("status") == "removed" else ""
        if d.get("kind") == "mode":
            click.echo(f"mode   {d['pattern']} -> {d['mode']}  by {d.get('who')} at {d.get('updated_at')}{removed}")
            continue
        what = repr(d.get("text")) if d.get("text") else f"id {d.get('phrase_id')}"
        click.echo(f"{d['action']:<6} {what}{' on ' + d['scope'] if d.get('scope') else ''}  {d['_id']}  "
                   f"by {d.get('who')} at {d.get('created_at')}{': ' + d['why'] if d.get('why') else ''}{removed}")
