"""The HTML report's figures: matplotlib drawings returned as inline SVG strings.

Each function takes the report model's part (:mod:`.model`) and returns one
``<svg>`` element, text kept as text (``svg.fonttype = none``: small, selectable, searchable)
and every bar or point a group with an id (``hist-bar-3``, ``runs-point-0``) so a test of the
rendered page can count what was drawn. Figures are built with the object API
(``matplotlib.figure.Figure``, no pyplot state) under one lock, because the SVG settings are
process-wide and ``serve`` renders from worker threads.
"""
from __future__ import annotations

import io
import re
import threading

INK = "#343a40"
MUTED = "#868e96"
GRID = "#e9ecef"
BOILERPLATE = "#e8590c"   # the colour of boilerplate everywhere in the report
PRIMARY = "#3b5bdb"
TEMPLATES = "#1c7ed6"
LABEL_CHARS = 46

_LOCK = threading.Lock()


def _clip(text: str, n: int = LABEL_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _figure(height: float, width: float = 6.6):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(MUTED)
    ax.tick_params(colors=INK, labelsize=9)
    ax.grid(axis="both", color=GRID, linewidth=0.8)
    ax.set_axisbelow(True)
    return fig, ax


def _svg(fig, name: str, label: str) -> str:
    import matplotlib

    buf = io.StringIO()
    # hashsalt: clip-path ids differ between the figures of one page; Date: None keeps the
    # output a function of the data (the tests compare pages).
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": name, "font.family": "DejaVu Sans"}):
        fig.savefig(buf, format="svg", metadata={"Date": None}, transparent=True)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, count=1, flags=re.S)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{label}" class="figure-svg" data-figure="{name}" ', 1)


def _percent_axis(ax, axis: str = "x") -> None:
    from matplotlib.ticker import PercentFormatter

    (ax.xaxis if axis == "x" else ax.yaxis).set_major_formatter(PercentFormatter(1.0, decimals=0))


def histogram_svg(histogram: list[dict]) -> str:
    """Documents per bin of their covered fraction (``clutter_histogram``)."""
    with _LOCK:
        fig, ax = _figure(3.0)
        labels = [f"{b['lo'] * 100:.0f}–{b['hi'] * 100:.0f}%" for b in histogram]
        counts = [b["docs"] for b in histogram]
        bars = ax.bar(range(len(counts)), counts, color=BOILERPLATE, width=0.82)
        for i, bar in enumerate(bars):
            bar.set_gid(f"hist-bar-{i}")
        ax.bar_label(bars, labels=[f"{c:,}" if c else "" for c in counts], fontsize=8, color=INK, padding=2)
        ax.set_xticks(range(len(counts)), labels, rotation=0, fontsize=8)
        ax.set_xlabel("share of the document's tokens that are boilerplate", color=INK, fontsize=9)
        ax.set_ylabel("documents", color=INK, fontsize=9)
        ax.grid(axis="x", visible=False)
        ax.margins(y=0.12)
        return _svg(fig, "hist", "documents by boilerplate share")


def bar_chart_svg(name: str, label: str, values: list[float], labels: list[str], value_labels: list[str], *,
                  color: str, xlabel: str, share: bool = False) -> str:
    """Horizontal bars, the first on top: one per ``labels`` entry, of length ``values``,
    annotated with ``value_labels``; bar ``i`` has the id ``{name}-bar-{i}``. ``share``:
    the values are fractions, drawn on a percent axis that leaves room for the annotations."""
    with _LOCK:
        fig, ax = _figure(0.8 + 0.3 * max(len(values), 1))
        bars = ax.barh(range(len(values)), values, color=color, height=0.7)
        for i, bar in enumerate(bars):
            bar.set_gid(f"{name}-bar-{i}")
        ax.bar_label(bars, labels=value_labels, fontsize=8, color=INK, padding=3)
        ax.set_yticks(range(len(values)), labels, fontsize=8)
        ax.invert_yaxis()
        if share:
            _percent_axis(ax, "x")
            ax.set_xlim(0, min(1.0, max(values + [0.01]) * 1.35))
        else:
            ax.margins(x=0.14)
        ax.set_xlabel(xlabel, color=INK, fontsize=9)
        ax.grid(axis="y", visible=False)
        return _svg(fig, name, label)


def top_phrases_svg(rows: list[dict], n: int = 12) -> str:
    """The top phrases by psi = length x df, largest on top."""
    rows = rows[:n]
    return bar_chart_svg("psi", "top phrases by psi", [r["psi"] for r in rows], [_clip(r["text"]) for r in rows],
                         [f"{r['psi']:,}" for r in rows], color=PRIMARY,
                         xlabel="Ψ = length × df (tokens of the index it fills)")


def sites_svg(sites: list[dict], n: int = 12) -> str:
    """covered_share of each site's tokens, the most cluttered sites on top."""
    sites = sites[:n]
    return bar_chart_svg("site", "clutter per site", [s["covered_share"] for s in sites],
                         [_clip(s["site"], 34) for s in sites],
                         [f"{s['covered_share']:.1%} of {s['docs']:,} docs" for s in sites], color=BOILERPLATE,
                         xlabel="covered_share of the site's tokens", share=True)


def runs_svg(runs: list[dict]) -> str:
    """covered_share after each kept run, oldest left; the current run marked."""
    with _LOCK:
        fig, ax = _figure(3.0)
        x = list(range(len(runs)))
        exact = [r["covered_share"] for r in runs]
        ax.plot(x, exact, color=PRIMARY, linewidth=2, label="covered_share (exact phrases)")
        templ = [(i, r["template_covered_share"]) for i, r in enumerate(runs) if r.get("template_covered_share") is not None]
        if templ:
            ax.plot([i for i, _ in templ], [v for _, v in templ], color=BOILERPLATE, linewidth=2, linestyle="--",
                    label="with the template detector")
        for i, r in enumerate(runs):
            marker = ax.plot([i], [r["covered_share"]], marker="o", markersize=9 if r.get("current") else 6,
                             color=PRIMARY, markeredgecolor="white", linestyle="none")[0]
            marker.set_gid(f"runs-point-{i}")
            ax.annotate(f"{r['covered_share']:.1%}", (i, r["covered_share"]), textcoords="offset points",
                        xytext=(0, 8), ha="center", fontsize=8, color=INK)
        labels = [(str(r.get("finished_at") or r["run_id"]))[:16].replace("T", " ") for r in runs]
        ax.set_xticks(x, labels, fontsize=8, rotation=15 if len(runs) > 3 else 0)
        ax.set_xlim(-0.5, max(len(runs) - 0.5, 0.5))
        top = max(exact + [v for _, v in templ] + [0.01])
        ax.set_ylim(0, min(1.0, top * 1.3))
        _percent_axis(ax, "y")
        ax.set_ylabel("share of all tokens", color=INK, fontsize=9)
        ax.legend(fontsize=8, frameon=False, loc="lower right")
        return _svg(fig, "runs", "covered share across runs")
