"""The HTML report's curation part: the allow/deny entries and pattern modes, and the diff of
the last two runs (:mod:`bloomspan.sidecar.report.run_diff`) with its example documents."""
from __future__ import annotations

import logging

from bloomspan.sidecar.curation.store import load_curation
from bloomspan.sidecar.errors import BloomspanSidecarError
from bloomspan.sidecar.report.run_diff import diff_runs

log = logging.getLogger(__name__)

DIFF_EXAMPLES = 3
DIFF_ROWS = 20


def curation_model(client, template_index: str) -> dict:
    """``{"entries", "diff", "diff_note"}`` for the report of ``template_index``."""
    curation = load_curation(client, template_index)
    diff, note = None, None
    try:
        diff = diff_runs(client, template_index, examples=DIFF_EXAMPLES)
    except BloomspanSidecarError as exc:  # one run only: nothing to compare
        note = str(exc)
    return {"entries": [dict(d) for d in curation.documents], "diff": diff, "diff_note": note}


def _entries_html(entries: list[dict], e) -> str:
    if not entries:
        return '<p class="empty">no allow or deny entry (bloomspan curate deny|allow)</p>'
    rows = []
    for d in entries:
        what = d.get("text") or d.get("phrase_id") or ""
        if d.get("kind") == "mode":
            what, action = f"{d.get('pattern')} → {d.get('mode')}", "mode"
        else:
            action = d.get("action")
        rows.append(f"<tr><td>{e(action)}</td><td>{e(what)}</td><td>{e(d.get('scope') or 'every site')}</td>"
                    f"<td>{e(d.get('who'))}</td><td>{e(d.get('created_at'))}</td><td>{e(d.get('why') or '')}</td></tr>")
    return ('<div class="table-wrap"><table id="curation-entries"><thead><tr><th>entry</th><th>phrase</th>'
            '<th>scope</th><th>who</th><th>when</th><th>why</th></tr></thead><tbody>' + "".join(rows)
            + "</tbody></table></div>")


def _diff_html(diff: dict, e) -> str:
    parts = [f'<p>{e(diff["a"]["run_id"])} → {e(diff["b"]["run_id"])}'
             f'{" (dry run, not promoted)" if diff["b"].get("dry_run") else ""}: '
             f'+{diff["counts"]["added"]:,} added, −{diff["counts"]["removed"]:,} removed, '
             f'{diff["counts"]["changed"]:,} changed df</p><ul class="diff-phrases">']
    for sign, key in (("+", "added"), ("−", "removed")):
        parts += [f"<li>{sign} df={row['df']} {e(row['text'])}</li>" for row in diff[key][:DIFF_ROWS]]
    parts += [f"<li>~ df {row['df_before']} → {row['df_after']} {e(row['text'])}</li>"
              for row in diff["changed"][:DIFF_ROWS]]
    parts.append("</ul>")
    if diff["sites"]:
        fmt = lambda v: "–" if v is None else f"{v:.1%}"  # noqa: E731
        parts.append("<table><thead><tr><th>site</th><th>before</th><th>after</th></tr></thead><tbody>"
                     + "".join(f"<tr><td>{e(r['site'])}</td><td>{fmt(r['before'])}</td><td>{fmt(r['after'])}</td></tr>"
                               for r in diff["sites"][:DIFF_ROWS]) + "</tbody></table>")
    for ex in diff["examples"]:
        parts.append(f'<div class="example"><h3>{e(ex["id"])}: {ex["changed_tokens"]:,} of {ex["tokens"]:,} '
                     f'tokens change</h3><p class="sub">cleaned before</p><pre class="page-text">{e(ex["before"])}</pre>'
                     f'<p class="sub">cleaned after</p><pre class="page-text">{e(ex["after"])}</pre></div>')
    return "".join(parts)


def curation_cards(section: dict | None, card, e) -> str:
    """The two cards (``card(title, sub, content, id)`` and ``e`` escape from the page module)."""
    if section is None:
        return ""
    diff = section.get("diff")
    diff_html = _diff_html(diff, e) if diff else f'<p class="empty">{e(section.get("diff_note") or "no diff")}</p>'
    return (card("Curation", "allow and deny entries and pattern modes (bloomspan curate), newest change first",
                 _entries_html(section.get("entries") or [], e), "curation")
            + card("Last two runs", "what promoting the newer run changes (bloomspan diff)", diff_html, "run-diff"))
