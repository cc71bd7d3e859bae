"""The terminal report, for every source: ``mine --jsonl`` (the engine's coverage report plus
engine, sigma and min_length), ``mine --index`` and ``bloomspan report`` (the run behind a
template alias, :func:`bloomspan.sidecar.report.operator_report.report`).

Both sources use the names of :mod:`bloomspan.sidecar.publish.run_names`; a report from a
cluster run adds the run's header (template index, run, source, documents seen and skipped),
the template detector's line and the clutter per site.
"""
from __future__ import annotations


def share_bar(fraction: float, width: int = 30) -> str:
    """``fraction`` (clipped to [0, 1]) as a bar of ``width`` characters: ``#`` filled, ``.`` empty."""
    n = int(round(max(0.0, min(1.0, fraction)) * width))
    return "#" * n + "." * (width - n)


def template_counts(templates: dict) -> str:
    """"N template phrases, M page skeletons, K line shapes" of a run's ``templates`` stats
    (runs made before line shapes existed have none)."""
    return (f"{templates['phrases']:,} template phrases, {templates['skeletons']:,} page skeletons, "
            f"{templates.get('line_shapes', 0):,} line shapes")


def _clip(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _run_header(rep: dict) -> list[str]:
    """The run's own lines (cluster reports: ``run_id`` present); the mining parameters otherwise."""
    p = rep.get("params") or rep
    mined_with = f"sigma={p.get('sigma', '?')} min_length={p.get('min_length', '?')} engine={p.get('engine', '?')}"
    if "run_id" not in rep:
        return [f"documents {rep['docs_mined']:,}  tokens {rep['tokens_mined']:,}  phrases {rep['phrases']:,}"
                f"  ({mined_with})"]
    return [f"template index {rep['template_index']} -> {rep['physical_index']} (run {rep['run_id']}, "
            f"finished {rep.get('finished_at')})",
            f"source {rep.get('source_index')} field {rep.get('field')}: {mined_with}",
            f"documents: {rep['docs_seen']:,} seen, {rep['docs_mined']:,} mined, {rep['docs_skipped']:,} skipped "
            f"{rep.get('skipped_by_reason', {})}"]


def render_report(rep: dict, top: int = 10, doc_label=None) -> str:
    """Plain-text form of a report for the terminal: ``top`` entries per list.

    ``doc_label(doc_index) -> str`` names documents in the clutter list (default: their
    ``id``, else ``#index``).
    """
    lines = _run_header(rep)
    lines.append(f"boilerplate: {rep['covered_tokens']:,} of {rep['tokens_mined']:,} tokens = "
                 f"{rep['covered_share']:.2%} ({rep['phrases']:,} phrases); mean share per document "
                 f"{rep['mean_doc_covered_fraction']:.2%}; {rep['docs_fully_covered']:,} documents entirely "
                 f"boilerplate, {rep['docs_without_coverage']:,} without any")
    t = rep.get("templates")
    if t:
        lines.append(f"with the template detector (--templates): {t['covered_tokens']:,} tokens = "
                     f"{t['covered_share']:.2%} ({template_counts(t)})")
    hist = rep.get("clutter_histogram") or []
    if hist:
        total = max(1, sum(b["docs"] for b in hist))
        lines.append("documents by boilerplate share:")
        for b in hist:
            lines.append(f"  {b['lo']:>4.0%}-{b['hi']:<4.0%} {share_bar(b['docs'] / total)} {b['docs']:,}")
    hogs = rep.get("top_phrases") or []
    if hogs:
        lines.append("top index hogs (length x df):")
        for rank, h in enumerate(hogs[:top], start=1):
            share = f" ({h['psi_share']:6.2%})" if h.get("psi_share") is not None else ""
            lines.append(f"  {h.get('rank', rank):>3}. psi={h['psi']:>9,}{share} df={h['df']:>7,} "
                         f"len={h['length']:>3}  {_clip(h.get('text', ''), 80)}")
    cluttered = rep.get("most_cluttered_docs") or []
    if cluttered:
        lines.append("most cluttered documents:")
        for d in cluttered[:top]:
            name = doc_label(d["doc"]) if doc_label else d.get("id", f"#{d.get('doc')}")
            lines.append(f"  {d['covered_fraction']:7.2%} {d['covered_tokens']:>6,}/{d['tokens']:<6,} {name}")
    sites = rep.get("most_cluttered_sites") or []
    if sites:
        lines.append("most cluttered sites:")
        for s in sites[:top]:
            lines.append(f"  {s['covered_share']:7.2%} {s['docs']:>6} docs {s['tokens']:>9,} tokens  {s['site']}")
    return "\n".join(lines)
