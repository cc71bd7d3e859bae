"""Plain-text rendering of a coverage report (the dict from ``engine.report.coverage_report``
plus run fields), for the terminal."""
from __future__ import annotations


def _bar(fraction: float, width: int = 30) -> str:
    n = int(round(max(0.0, min(1.0, fraction)) * width))
    return "#" * n + "." * (width - n)


def render_report(report: dict, top: int = 10) -> str:
    lines = []
    docs = report.get("documents", report.get("n_docs"))
    tokens = report.get("tokens", report.get("n_tokens"))
    lines.append(f"documents {docs:,}  tokens {tokens:,}  phrases {report.get('phrases', len(report.get('top_phrases', [])))}"
                 f"  (sigma={report.get('sigma')}, min_length={report.get('min_length')}, engine={report.get('engine')})")
    share = float(report.get("covered_share", 0.0))
    lines.append(f"boilerplate: {report.get('covered_tokens', 0):,} tokens = {share:.2%} of the corpus")
    hist = report.get("histogram") or {}
    counts = hist.get("counts") or []
    edges = hist.get("edges") or []
    if counts:
        total = max(1, sum(counts))
        lines.append("documents by boilerplate share:")
        for i, c in enumerate(counts):
            lo = edges[i] if i < len(edges) else i / len(counts)
            hi = edges[i + 1] if i + 1 < len(edges) else (i + 1) / len(counts)
            lines.append(f"  {lo:4.0%}-{hi:4.0%} {_bar(c / total)} {c:,}")
    hogs = report.get("top_phrases") or []
    if hogs:
        lines.append(f"top index hogs (length x df):")
        for h in hogs[:top]:
            text = h.get("text", "")
            if len(text) > 90:
                text = text[:87] + "..."
            lines.append(f"  psi={h.get('psi'):>9,} df={h.get('df'):>7,} len={h.get('length'):>3}  {text}")
    return "\n".join(lines)
