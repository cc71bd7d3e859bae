"""``bloomspan report --html``: the report model (:mod:`.model`) as ONE self-contained page.

Everything is inline: the figures are SVG (:mod:`.figures`), the style and the table's
script sit in the page, and a Content-Security-Policy forbids any request, so the file opens
the same from a laptop without network, an e-mail attachment or ``serve``'s ``GET /report``.

Untrusted text (phrases, document ids, pages from the crawl) reaches the page only
HTML-escaped, or as JSON inside ``<script type="application/json">`` with ``<``, ``>`` and
``&`` written as ``\\u003c``/``\\u003e``/``\\u0026`` (a ``</script>`` in a phrase cannot end the
block); the script puts it into the table with ``textContent`` only.

The phrase table sorts by any column (click the header) and filters on the text, scope and
example ids as one types; the page applies ``?q=WORDS`` (and ``&sort=COLUMN&dir=asc|desc``)
from its URL on load, so a link can open it filtered.
"""
from __future__ import annotations

import html
import json

from .curation_section import curation_cards
from .figures import histogram_svg, runs_svg, sites_svg, top_phrases_svg

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

_STYLE = """
:root { --ink:#343a40; --muted:#868e96; --line:#dee2e6; --bp:#e8590c; --bp-bg:#ffe8cc; --tp-bg:#d0ebff;
        --primary:#3b5bdb; --card:#fff; --page:#f1f3f5; }
* { box-sizing: border-box; }
body { margin:0; background:var(--page); color:var(--ink); font:14px/1.45 "DejaVu Sans", system-ui, sans-serif; }
header { background:#212529; color:#f8f9fa; padding:18px 32px; }
header h1 { margin:0 0 4px; font-size:21px; font-weight:600; }
header .origin { color:#ced4da; font-size:12.5px; }
main { max-width:1240px; margin:0 auto; padding:20px 28px 40px; }
.tiles { display:grid; grid-template-columns:repeat(auto-fit, minmax(170px, 1fr)); gap:12px; margin-bottom:18px; }
.tile { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:10px 14px; }
.tile .value { font-size:22px; font-weight:600; }
.tile .value.bp { color:var(--bp); }
.tile .name { color:var(--muted); font-size:11.5px; font-family:"DejaVu Sans Mono", monospace; }
.grid { display:grid; grid-template-columns:repeat(auto-fit, minmax(540px, 1fr)); gap:16px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 16px; margin-bottom:16px; }
.card h2 { font-size:15px; margin:0 0 2px; }
.card .sub { color:var(--muted); font-size:12px; margin:0 0 8px; }
.card svg.figure-svg { width:100%; height:auto; display:block; }
.empty { color:var(--muted); font-style:italic; padding:30px 0; text-align:center; }
.controls { display:flex; gap:12px; align-items:center; margin:6px 0 10px; flex-wrap:wrap; }
.controls input { font:inherit; padding:6px 10px; border:1px solid #adb5bd; border-radius:6px; width:340px; }
.controls .count { color:var(--muted); font-size:12.5px; }
.table-wrap { max-height:560px; overflow:auto; border:1px solid var(--line); border-radius:6px; }
table { border-collapse:collapse; width:100%; font-size:12.5px; }
th { position:sticky; top:0; background:#f8f9fa; text-align:left; padding:6px 8px; border-bottom:1px solid var(--line);
     cursor:pointer; white-space:nowrap; user-select:none; }
th[aria-sort="ascending"]::after { content:" ▲"; color:var(--primary); }
th[aria-sort="descending"]::after { content:" ▼"; color:var(--primary); }
td { padding:5px 8px; border-bottom:1px solid #f1f3f5; vertical-align:top; }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.text { max-width:560px; }
td.text span { display:-webkit-box; -webkit-line-clamp:2; -webkit-box-orient:vertical; overflow:hidden; }
td.ids { color:var(--muted); font-family:"DejaVu Sans Mono", monospace; font-size:11px; }
.example { border-top:1px solid var(--line); padding-top:10px; margin-top:10px; }
.example:first-of-type { border-top:none; margin-top:0; padding-top:0; }
.example h3 { font-size:13.5px; margin:0 0 6px; font-family:"DejaVu Sans Mono", monospace; }
.page-text { white-space:pre-wrap; font-size:12.5px; background:#f8f9fa; border:1px solid var(--line);
             border-radius:6px; padding:10px 12px; max-height:300px; overflow:auto; margin:0; }
mark.bp { background:var(--bp-bg); color:inherit; border-bottom:2px solid var(--bp); }
mark.tp { background:var(--tp-bg); color:inherit; border-bottom:2px solid #1c7ed6; }
.legend { font-size:12px; color:var(--muted); }
.notes { color:var(--muted); font-size:12.5px; }
"""

_SCRIPT = r"""
(function () {
  "use strict";
  var rows = JSON.parse(document.getElementById("phrase-data").textContent);
  var body = document.querySelector("#phrases tbody");
  var input = document.getElementById("phrase-search");
  var count = document.getElementById("phrase-count");
  var headers = document.querySelectorAll("#phrases th[data-key]");
  var params = new URLSearchParams(window.location.search);
  var state = {q: params.get("q") || "", key: params.get("sort") || "psi", dir: params.get("dir") || "desc"};
  var numeric = {rank: 1, length: 1, df: 1, psi: 1, slots: 1};
  rows.forEach(function (r, i) {
    r.rank = i + 1;
    r.haystack = (r.text + " " + r.scope + " " + r.kind + " " + r.example_ids.join(" ")).toLowerCase();
  });
  function cell(tr, value, cls) {
    var td = document.createElement("td");
    td.textContent = value;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }
  function render() {
    var words = state.q.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = rows.filter(function (r) {
      return words.every(function (w) { return r.haystack.indexOf(w) >= 0; });
    });
    var sign = state.dir === "asc" ? 1 : -1, key = state.key;
    shown.sort(function (a, b) {
      var x = a[key], y = b[key];
      if (!numeric[key]) { x = String(x); y = String(y); }
      return x < y ? -sign : x > y ? sign : a.rank - b.rank;  // ties keep the psi order
    });
    var frag = document.createDocumentFragment();
    shown.forEach(function (r) {
      var tr = document.createElement("tr");
      cell(tr, r.rank, "num");
      var td = document.createElement("td"), span = document.createElement("span");
      td.className = "text";
      span.textContent = r.text;
      td.title = r.text;
      td.appendChild(span);
      tr.appendChild(td);
      cell(tr, r.kind);
      cell(tr, r.length.toLocaleString("en"), "num");
      cell(tr, r.df.toLocaleString("en"), "num");
      cell(tr, r.psi.toLocaleString("en"), "num");
      cell(tr, r.scope);
      cell(tr, r.slots, "num");
      cell(tr, r.example_ids.length ? r.example_ids.join(" ") : "—", "ids");
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    count.textContent = shown.length.toLocaleString("en") + " of " + rows.length.toLocaleString("en") + " rows";
    document.body.setAttribute("data-phrase-rows", String(shown.length));
    headers.forEach(function (th) {
      th.setAttribute("aria-sort", th.dataset.key === key ? (state.dir === "asc" ? "ascending" : "descending") : "none");
    });
  }
  input.value = state.q;
  input.addEventListener("input", function () { state.q = input.value; render(); });
  headers.forEach(function (th) {
    th.addEventListener("click", function () {
      var key = th.dataset.key;
      state.dir = state.key === key ? (state.dir === "asc" ? "desc" : "asc") : (numeric[key] ? "desc" : "asc");
      state.key = key;
      render();
    });
  });
  render();
  document.body.setAttribute("data-report-ready", "1");
})();
"""

_COLUMNS = [("rank", "#"), ("text", "phrase"), ("kind", "kind"), ("length", "length"), ("df", "df"),
            ("psi", "Ψ"), ("scope", "scope"), ("slots", "slots"), ("example_ids", "example ids")]


def _e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def script_json(value) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (module docstring)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def highlighted(text: str, spans: list, template_spans: list = ()) -> str:
    """``text`` escaped, exact-phrase spans in ``<mark class="bp">``, spans only the template
    detector covers in ``<mark class="tp">``; spans are ``[start, end)`` characters."""
    label = bytearray(len(text) + 1)
    for value, marked in ((2, template_spans), (1, spans)):  # exact phrases drawn over templates
        for s, e in marked:
            a = max(0, s)
            b = max(a, min(e, len(text)))
            label[a:b] = bytes([value]) * (b - a)
    out, start = [], 0
    for i in range(1, len(text) + 1):
        if i == len(text) or label[i] != label[start]:
            piece = _e(text[start:i])
            out.append(piece if label[start] == 0 else
                       f'<mark class="{"bp" if label[start] == 1 else "tp"}">{piece}</mark>')
            start = i
    return "".join(out)


def _tiles(q: dict) -> str:
    tiles = [(f"{q['covered_share']:.1%}", "covered_share", True),
             (f"{q['covered_tokens']:,}", "covered_tokens", False),
             (f"{q['tokens_mined']:,}", "tokens_mined", False),
             (f"{q['docs_mined']:,}", "docs_mined", False),
             (f"{q['phrases']:,}", "phrases", False),
             (f"{q['mean_doc_covered_fraction']:.1%}", "mean_doc_covered_fraction", False),
             (f"{q['docs_fully_covered']:,}", "docs_fully_covered", False)]
    if q.get("template_covered_share") is not None:
        tiles.insert(1, (f"{q['template_covered_share']:.1%}", "template covered_share (--templates)", True))
    return "".join(f'<div class="tile"><div class="value{" bp" if bp else ""}">{_e(v)}</div>'
                   f'<div class="name">{_e(n)}</div></div>' for v, n, bp in tiles)


def _origin(o: dict) -> str:
    if o["kind"] == "cluster":
        parts = [f"run {o['run_id']} ({o['physical_index']})", f"source {o.get('source_index')} field {o.get('field')}",
                 f"finished {o.get('finished_at')}"]
    else:
        parts = [f"results {o['results']}", f"source {o.get('source')}"]
    parts.append(f"sigma={o.get('sigma')} min_length={o.get('min_length')} engine={o.get('engine')}")
    return " · ".join(_e(p) for p in parts)


def _card(title: str, sub: str, content: str, card_id: str) -> str:
    return f'<section class="card" id="{card_id}"><h2>{_e(title)}</h2><p class="sub">{_e(sub)}</p>{content}</section>'


def _examples(examples: list[dict]) -> str:
    if not examples:
        return '<p class="empty">no example page could be read</p>'
    parts = ['<p class="legend"><mark class="bp">exact boilerplate phrase</mark> '
             '<mark class="tp">covered by the template detector only</mark></p>']
    for ex in examples:
        more = f" (first {len(ex['text']):,} of {ex['chars']:,} characters)" if ex["chars"] > len(ex["text"]) else ""
        top = "; ".join(f"×{p['occurrences']} {p['text'][:60]}" for p in ex.get("phrases", [])[:3])
        parts.append(f'<div class="example" data-example-id="{_e(ex["id"])}"><h3>{_e(ex["id"])} — '
                     f'{ex["covered_share"]:.1%} covered ({ex["covered_tokens"]:,} of {ex["tokens"]:,} tokens){_e(more)}</h3>'
                     f'<p class="sub">{_e(top)}</p>'
                     f'<pre class="page-text">{highlighted(ex["text"], ex["spans"], ex.get("template_spans") or [])}</pre></div>')
    return "".join(parts)


def render_html(model: dict) -> str:
    """The page for a report model (see module docstring)."""
    q = model["quantities"]
    hist = histogram_svg(model["clutter_histogram"]) if model["clutter_histogram"] else '<p class="empty">no documents</p>'
    psi = top_phrases_svg(model["top_phrases"]) if model["top_phrases"] else '<p class="empty">no phrases</p>'
    sites = sites_svg(model["sites"]) if model["sites"] else \
        '<p class="empty">no per-site numbers: mine with --site-field</p>'
    runs = runs_svg(model["runs"]) if model["runs"] else '<p class="empty">no kept run</p>'
    n_runs = len(model["runs"])
    figures = "".join([
        _card("Documents by boilerplate share", "clutter_histogram: documents per share of their tokens "
              "inside a boilerplate phrase", hist, "fig-histogram"),
        _card("Index hogs: top phrases by Ψ", "psi = length × df, the tokens a phrase adds to the index", psi,
              "fig-psi"),
        _card("Clutter per site", "covered_share of each site's tokens, the most cluttered sites", sites, "fig-sites"),
        _card("Covered share across runs", f"covered_share after each of the {n_runs} kept run(s), oldest left",
              runs, "fig-runs"),
    ])
    shown, total = len(model["phrases"]), model["phrases_total"]
    table_sub = (f"top {shown:,} of {total:,} phrases by Ψ; {model['phrases_note']}" if total > shown
                 else f"all {total:,} phrases; {model['phrases_note']}")
    head = "".join(f'<th data-key="{k}" scope="col">{_e(label)}</th>' for k, label in _COLUMNS)
    table = (f'<div class="controls"><input id="phrase-search" type="search" placeholder="filter phrases, scopes, ids…" '
             f'aria-label="filter phrases"><span class="count" id="phrase-count"></span></div>'
             f'<div class="table-wrap"><table id="phrases"><thead><tr>{head}</tr></thead><tbody></tbody></table></div>'
             f'<script type="application/json" id="phrase-data">{script_json(model["phrases"])}</script>')
    notes = "".join(f"<li>{_e(n)}</li>" for n in model.get("notes") or [])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(model['title'])}</title><style>{_STYLE}</style></head>"
        f"<body><header><h1>{_e(model['title'])}</h1><div class=\"origin\">{_origin(model['origin'])}</div></header>"
        f'<main><div class="tiles" id="quantities">{_tiles(q)}</div>'
        f'<div class="grid">{figures}</div>'
        + _card("Phrases", table_sub, table, "phrase-table")
        + _card("Example pages", "what `bloomspan explain` shows: the page with its boilerplate highlighted",
                _examples(model["examples"]), "examples")
        + curation_cards(model.get("curation"), _card, _e)
        + (f'<section class="notes"><ul>{notes}</ul></section>' if notes else "")
        + f"</main><script>{_SCRIPT}</script></body></html>\n"
    )


def write_html(model: dict, path: str) -> int:
    """Write the page for ``model`` to ``path`` (atomically: a temporary file renamed); returns bytes."""
    import os
    import tempfile

    page = render_html(model).encode("utf-8")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".html", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(page)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return len(page)
