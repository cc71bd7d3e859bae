"""Two published runs compared before one is promoted (``bloomspan diff``, the HTML report).

:func:`diff_runs` reads two complete runs of a template index and returns:

* ``added`` / ``removed``: phrases of one run only (by phrase id, which is derived from the
  text), and ``changed``: phrases of both whose df differs, largest change first;
* ``sites``: covered share per site before and after (the runs' clutter reports, so the
  sites each run ranked; ``--site-field`` runs only);
* ``examples``: the documents whose cleaned text would change most: candidates are the
  documents holding an added or removed phrase (from the phrases' document bitmaps); each
  is read from the source index and cleaned with both runs' phrase sets, curation applied,
  and ranked by how many tokens the two cleaned texts differ by.

Read-only: plain search and get calls.
"""
from __future__ import annotations

import logging
from collections import Counter

from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.ingest.clean.cleaner import CleanerConfig
from bloomspan.sidecar.cluster.scroll import extract_text
from bloomspan.sidecar.errors import RunNotFoundError
from bloomspan.sidecar.publish.bitmaps import decode_bitmap
from bloomspan.sidecar.publish.template_index import DOCMAP_CHUNK, physical_indices, physical_name, publication_order
from bloomspan.sidecar.publish.template_reader import load_cleaner
from bloomspan.sidecar.report.operator_report import _fetch_document

log = logging.getLogger(__name__)

CANDIDATE_DOCUMENTS = 200  # documents cleaned with both runs to find the examples
LISTED_PHRASES = 50


def resolve_pair(client, template_index: str, run_a: str | None, run_b: str | None) -> tuple[str, str]:
    """The physical indices to compare. Defaults: ``b`` = the newest complete run, ``a`` = the
    run behind the alias (or, when the newest is the one behind the alias, the run before it)."""
    indices = physical_indices(client, template_index)
    complete = [i for i in publication_order(client, template_index, indices) if indices[i]["complete"]]
    kept = [indices[i]["run_id"] for i in complete]

    def physical(run: str) -> str:
        name = run if run in indices else physical_name(template_index, run)
        if name not in indices or not indices[name]["complete"]:
            raise RunNotFoundError(f"run {run!r} of {template_index!r} is not a complete run (kept: {kept})",
                                   index=template_index, item=run)
        return name

    if run_b is not None:
        b = physical(run_b)
    elif complete:
        b = complete[-1]
    else:
        raise RunNotFoundError(f"{template_index!r} has no complete run; run `bloomspan mine`", index=template_index)
    if run_a is not None:
        a = physical(run_a)
    else:
        current = [i for i in complete if indices[i]["aliased"]]
        if current and current[0] != b:
            a = current[0]
        else:
            older = complete[:complete.index(b)]
            if not older:
                raise RunNotFoundError(f"only one run of {template_index!r} is kept ({kept}); nothing to compare",
                                       index=template_index)
            a = older[-1]
    return a, b


def _phrases(client, physical: str) -> dict[str, dict]:
    from opensearchpy import helpers

    return {hit["_id"]: hit["_source"] for hit in helpers.scan(
        client, index=physical, query={"query": {"term": {"kind": "phrase"}}}, size=1000,
        _source=["text", "df", "length", "psi", "doc_bitmap"])}


def _run_doc(client, physical: str) -> dict:
    return client.get(index=physical, id="run", _source_excludes=["coverage_bitmap"])["_source"]


def _doc_ids(client, physical: str, members: set[int]) -> dict[int, str]:
    """Bitmap member -> document key, through the run's doc map."""
    out: dict[int, str] = {}
    chunks = sorted({m // DOCMAP_CHUNK for m in members})
    for chunk in chunks:
        found = client.get(index=physical, id=f"docmap-{chunk:06d}", ignore=[404])
        if not found.get("found"):
            continue
        src = found["_source"]
        for m in members:
            k = m - src["first_member"]
            if m // DOCMAP_CHUNK == chunk and 0 <= k < len(src["ids"]):
                out[m] = src["ids"][k]
    return out


def _candidates(client, a: str, b: str, pa: dict, pb: dict, added: list, removed: list) -> list[str]:
    """Document keys holding an added or removed phrase, most changed tokens (by phrase length) first."""
    ids: Counter = Counter()
    for physical, phrases, changed in ((b, pb, added), (a, pa, removed)):
        weight: Counter = Counter()
        for pid in changed:
            bitmap = phrases[pid].get("doc_bitmap")
            if bitmap:
                for member in decode_bitmap(bitmap):
                    weight[int(member)] += int(phrases[pid].get("length") or 1)
        top = dict(weight.most_common(CANDIDATE_DOCUMENTS))
        for member, key in _doc_ids(client, physical, set(top)).items():
            ids[key] += top[member]
    return [key for key, _ in ids.most_common(CANDIDATE_DOCUMENTS)]


def _examples(client, a: str, b: str, run_b: dict, keys: list[str], limit: int) -> list[dict]:
    if not keys:
        return []
    field = run_b["field"]
    scope_field = (run_b.get("params") or {}).get("site_field")
    config = CleanerConfig(fields=(field,), mode="strip", skip_missing=True, id_field=None, meta_field=None,
                           scope_field=scope_field)
    before, _, _ = load_cleaner(client, a, config)
    after, _, _ = load_cleaner(client, b, config)
    rows = []
    for key in keys:
        try:
            hit = _fetch_document(client, run_b["source_index"], key)
        except Exception as exc:  # deleted since the run: not an example
            log.debug("diff example %s unreadable: %s", key, exc)
            continue
        source = hit.get("_source") or {}
        status, text = extract_text(source, field)
        if not text:
            continue
        doc = {field: text}
        if scope_field and isinstance(source.get(scope_field), str):
            doc[scope_field] = source[scope_field]
        old, new = before.clean(doc), after.clean(doc)
        old_text, new_text = old.doc.get(field, text), new.doc.get(field, text)
        old_tokens, new_tokens = Counter(tokenize(old_text)), Counter(tokenize(new_text))
        delta = sum(((old_tokens - new_tokens) + (new_tokens - old_tokens)).values())
        if delta:
            rows.append({"id": key, "changed_tokens": delta, "tokens": len(tokenize(text)),
                         "before": old_text, "after": new_text, "text": text})
    rows.sort(key=lambda r: (-r["changed_tokens"], r["id"]))
    return rows[:limit]


def _site_rows(run_a: dict, run_b: dict) -> list[dict]:
    def shares(run):
        return {r["site"]: r for r in ((run.get("report") or {}).get("most_cluttered_sites") or [])}

    sa, sb = shares(run_a), shares(run_b)
    rows = [{"site": s, "before": (sa.get(s) or {}).get("covered_share"), "after": (sb.get(s) or {}).get("covered_share"),
             "docs": (sb.get(s) or sa.get(s) or {}).get("docs")} for s in set(sa) | set(sb)]
    rows.sort(key=lambda r: (-abs((r["after"] or 0) - (r["before"] or 0)), r["site"]))
    return rows


def diff_runs(client, template_index: str, run_a: str | None = None, run_b: str | None = None,
              examples: int = 5) -> dict:
    """Compare two runs (module docstring); ``run_a``/``run_b`` are run ids or physical names."""
    a, b = resolve_pair(client, template_index, run_a, run_b)
    pa, pb = _phrases(client, a), _phrases(client, b)
    doc_a, doc_b = _run_doc(client, a), _run_doc(client, b)
    added = sorted(set(pb) - set(pa), key=lambda p: (-int(pb[p].get("psi") or 0), pb[p]["text"]))
    removed = sorted(set(pa) - set(pb), key=lambda p: (-int(pa[p].get("psi") or 0), pa[p]["text"]))
    changed = [p for p in set(pa) & set(pb) if pa[p].get("df") != pb[p].get("df")]
    changed.sort(key=lambda p: (-abs(int(pb[p]["df"]) - int(pa[p]["df"])), pb[p]["text"]))
    keys = _candidates(client, a, b, pa, pb, added, removed) if examples else []
    return {
        "template_index": template_index,
        "a": {"run_id": doc_a.get("run_id"), "physical_index": a, "phrases": len(pa),
              "covered_share": doc_a.get("covered_share"), "published_at": doc_a.get("published_at")},
        "b": {"run_id": doc_b.get("run_id"), "physical_index": b, "phrases": len(pb),
              "covered_share": doc_b.get("covered_share"), "published_at": doc_b.get("published_at"),
              "dry_run": bool((doc_b.get("params") or {}).get("dry_run"))},
        "added": [{"phrase_id": p, "text": pb[p]["text"], "df": pb[p].get("df")} for p in added[:LISTED_PHRASES]],
        "removed": [{"phrase_id": p, "text": pa[p]["text"], "df": pa[p].get("df")} for p in removed[:LISTED_PHRASES]],
        "changed": [{"phrase_id": p, "text": pb[p]["text"], "df_before": pa[p].get("df"), "df_after": pb[p].get("df")}
                    for p in changed[:LISTED_PHRASES]],
        "counts": {"added": len(added), "removed": len(removed), "changed": len(changed)},
        "sites": _site_rows(doc_a, doc_b),
        "examples": _examples(client, a, b, doc_b, keys, examples),
    }


def render_diff(diff: dict, top: int = 10) -> str:
    """Plain-text form of :func:`diff_runs` for the terminal."""
    def clip(text: str, n: int = 90) -> str:
        return text if len(text) <= n else text[:n - 1] + "…"

    a, b, counts = diff["a"], diff["b"], diff["counts"]
    lines = [f"{diff['template_index']}: {a['run_id']} ({a['phrases']:,} phrases, covered "
             f"{(a['covered_share'] or 0):.2%}) -> {b['run_id']} ({b['phrases']:,} phrases, covered "
             f"{(b['covered_share'] or 0):.2%}){' [dry run]' if b.get('dry_run') else ''}",
             f"phrases: +{counts['added']:,} added, -{counts['removed']:,} removed, {counts['changed']:,} changed df"]
    for sign, key in (("+", "added"), ("-", "removed")):
        for row in diff[key][:top]:
            lines.append(f"  {sign} df={row['df']:<6} {clip(row['text'])}")
    for row in diff["changed"][:top]:
        lines.append(f"  ~ df {row['df_before']} -> {row['df_after']:<6} {clip(row['text'])}")
    if diff["sites"]:
        lines.append("covered share per site (before -> after):")
        for row in diff["sites"][:top]:
            fmt = lambda v: "-" if v is None else f"{v:.2%}"  # noqa: E731
            lines.append(f"  {row['site']:<40} {fmt(row['before']):>8} -> {fmt(row['after']):>8}")
    if diff["examples"]:
        lines.append("documents whose cleaned text changes most:")
        for row in diff["examples"]:
            lines.append(f"  {row['id']}: {row['changed_tokens']:,} of {row['tokens']:,} tokens change")
            lines.append(f"    before: {clip(' '.join(row['before'].split()))}")
            lines.append(f"    after:  {clip(' '.join(row['after'].split()))}")
    return "\n".join(lines)
