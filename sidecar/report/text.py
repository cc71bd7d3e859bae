"""Plain-text rendering of a coverage report (``engine.mining.report.coverage_report`` plus run
fields such as engine, sigma and min_length), for the terminal."""
from __future__ import annotations


def share_bar(fraction: float, width: int = 30) -> str:
    """``fraction`` (clipped to [0, 1]) as a bar of ``width`` characters: ``#`` filled, ``.`` empty."""
    n = int(round(max(0.0, min(1.0, fraction)) * width))
    return "#" * n + "." * (width - n)


def _clip(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def render_report(report: dict, top: int = 10, doc_label=None) -> str:
    """``doc_label(doc_index) -> str`` names documents (e.g. by external id) in the clutter list."""
    lines = [
        f"documents {report['n_docs']:,}  tokens {report['n_tokens']:,}  phrases {report['n_phrases']:,}"
        f"  (engine={report.get('engine', '?')}, sigma={report.get('sigma', '?')}, min_length={report.get('min_length', '?')})",
        f"boilerplate: {report['covered_tokens']:,} tokens = {report['covered_share']:.2%} of the corpus;"
        f" mean per document {report['mean_doc_covered_fraction']:.2%}; {report['docs_fully_covered']:,} documents"
        f" entirely boilerplate, {report['docs_without_coverage']:,} without any",
    ]
    hist = report.get("doc_covered_fraction_histogram") or []
    total = max(1, sum(b["docs"] for b in hist))
    if hist:
        lines.append("documents by boilerplate share:")
        for b in hist:
            lines.append(f"  {b['lo']:>4.0%}-{b['hi']:<4.0%} {share_bar(b['docs'] / total)} {b['docs']:,}")
    hogs = report.get("top_phrases") or []
    if hogs:
        lines.append("top index hogs (length x df):")
        for h in hogs[:top]:
            lines.append(f"  psi={h['psi']:>9,} df={h['df']:>7,} len={h['length']:>3}  {_clip(h['text'])}")
    cluttered = report.get("most_cluttered_docs") or []
    if cluttered:
        lines.append("most cluttered documents:")
        for d in cluttered[:top]:
            name = doc_label(d["doc"]) if doc_label else d.get("id", f"#{d['doc']}")
            lines.append(f"  {d['covered_fraction']:>6.1%} of {d['tokens']:>6,} tokens  {name}")
    return "\n".join(lines)
