"""A native ingest pipeline (OpenSearch or Elasticsearch) from a mining run, for users who
cannot route writes through the bulk proxy.

It applies what a ``gsub`` can say exactly of what ``bloomspan clean --site-field site
--url-field url`` applies (:class:`~bloomspan.ingest.match.template_matcher.TemplateMatcher`), by the
same rules, and removes nothing the cleaner keeps:

* the template detector's records (``templates``) as Java regexes (:mod:`.regex`):
  whole lines (``(?m)^…$``), two-line templates and lines at the text's start or end of at
  least ``run_min_length`` tokens (a pair alone is then a chain the matcher keeps), scoped and
  global phrases; slots as ``[0-9]+``;
* each scoped record only on its scope (:mod:`.scopes`): one ``gsub`` per site
  holding the alternation of its records, one per site section (near the page's edges where
  the detector's middle rule applies, below), every ``if`` the same Painless condition with its
  own params;
* the run's exact phrases (``phrases``) only on pages of sites the detector mined nothing for,
  unless the run's config sets ``exact_phrases_on_sites`` (the matcher's rule), packed
  ``phrases_per_processor`` to a ``gsub``;
* the detector's middle rule (``middle_content_tokens``: a run of lines that only section
  records found, with that many uncovered tokens on both sides, is content a section repeats):
  section records apply only where fewer tokens than that precede them (the page's first
  tokens, marked by a :data:`~.regex.SENTINEL` inserted and removed around them) or
  follow them, where the rule cannot hold (a page that holds that noncharacter itself gets no
  section record). With ``middle_repeated_lines`` a mid-page run of site or global matches
  that holds a line repeated in its page is dropped too, so on a page that repeats a line
  (:func:`~.scopes.repeats_a_line`, coarser than the matcher's line identity) every
  detector record applies near the edges only. Template records run first, on the text as sent, so those
  counts bound the uncovered tokens the matcher counts;
* the section rule (``section_line_length``: a line longer than that which only section
  records touch is that section's prose): section records on such lines are left out.
* a page's own facts (``own_facts`` records: a covered line of its site's own-fact line types in
  the page's header is content): no regex knows a page's header, so a record that can touch such
  a line (a block line equal to one, numbers read as the slot; a phrase that overlaps one) is
  left out on that site, its sections and, with a model for every page, everywhere;
* the table-of-contents rule (``toc_sections``: on a page whose header lists that many of its
  own headings, the covered lines from such a heading to the end of their run are content): it
  holds only on a page where at least that many lines repeat an earlier one (each heading is a
  copy of a header line), so there no template record applies at all (:func:`~.scopes.line_repeats`,
  coarser than the matcher's line identity, counts them).

Left out, and counted in :attr:`PipelineExport.left_out` (``bloomspan pipeline`` prints it):
page skeletons, line-shape templates, section records on long lines (above), pairs shorter than ``run_min_length`` (valid only inside a longer chain),
records beyond the top ``top`` of their scope by Ψ, scoped records without ``scope_field``,
section records without ``url_field``, and window matching (whole phrases only: each
``min_length`` window would need an alternation of its own). Other limits against the proxy:
the pipeline is fixed until exported again; whitespace left behind is tidied by ``gsub``/``trim``
(the cleaner's junction rules are finer); the ratio is by characters; no ``mark`` mode, chunks or
fingerprints; the text field and the scope and URL fields are top-level keys.

Elasticsearch has no ``copy`` processor: ``engine="elasticsearch"`` copies with ``set`` +
``copy_from`` (7.11 and later); both need ingest-common and lang-painless
(:meth:`bloomspan.sidecar.cluster.engine.ClusterEngine.missing_processors` says which a node lacks).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..base.errors import IngestConfigError
from .regex import (
    BEFORE_SENTINEL,
    INLINE_FLAGS,
    SENTINEL,
    SLOT_TOKEN,
    alternation,
    block_regex,
    first_tokens_regex,
    inline_regex,
    phrase_regex,
    tokens_after_below,
)
from .scopes import CHANGED, STATE_FIELD, STATE_SCRIPT, condition, state_params

__all__ = ["ENGINES", "MODES", "PipelineExport", "build_pipeline", "export_pipeline", "phrase_regex"]

MODES = ("strip", "downweight")
ENGINES = ("opensearch", "elasticsearch")
ORIGINAL = "_bloomspan_original"
MIN_RATIO = 1e-4  # rank_feature with negative impact cannot hold 0 (see sidecar/publish/document_annotation.py)

# Painless: only the ratio; the tidying is done by gsub/trim processors before it.
_RATIO_SCRIPT = """
def original = ctx[params.original];
def cleaned = ctx[params.target];
if (original instanceof String && cleaned instanceof String && original.length() > 0
    && cleaned.length() < original.length()) {
  double ratio = 1.0 - ((double) cleaned.length() / original.length());
  if (!(ctx.get('bloomspan') instanceof Map)) { ctx.bloomspan = new HashMap(); }
  ctx.bloomspan.boilerplate_ratio = Math.max(ratio, params.min_ratio);
}
""".strip()


@dataclass
class PipelineExport:
    """body: the ``_ingest/pipeline`` body; left_out: reason -> records left out;
    applied: what went in (``exact_phrases``, ``site_records``, ``section_records``,
    ``global_records``, ``sites``, ``sections``); notes: one line each for the user."""

    body: dict
    left_out: dict[str, int] = field(default_factory=dict)
    applied: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def left_out_line(self) -> str:
        """``left out of the pipeline …: 38 page skeletons, …`` (empty reasons omitted)."""
        names = {"skeletons": "page skeletons", "line_shapes": "line-shape templates",
                 "title_navs": "title-navigation models",
                 "own_facts": "own-fact models", "own_fact_lines": "records that can touch a site's own-fact lines",
                 "short_line_pairs": "line pairs shorter than run_min_length",
                 "section_long_lines": "section records on lines longer than section_line_length",
                 "beyond_top": "records beyond --top in their scope",
                 "scoped_without_scope_field": "scoped records (no --site-field)",
                 "sections_without_url_field": "section records (no --url-field)"}
        parts = [f"{n:,} {names[k]}" for k, n in self.left_out.items() if n]
        return ("left out of the pipeline (the proxy and `bloomspan clean` apply them): "
                + ", ".join(parts + ["window matching (whole phrases only)"]))


@dataclass(frozen=True)
class _Record:
    pattern: str  # one alternative (no flags)
    psi: int
    length: int
    scope: str | None


def _is_section(scope: str) -> bool:
    return "/" in scope  # "site/folder"; a site name holding "/" is treated as a section (edge-only: safe)


def _record_pattern(r: Mapping, run_min_length: int) -> str | None:
    """The alternative of one detector record, or None for a pair below ``run_min_length``."""
    tokens = [str(t) for t in (r.get("tokens") or str(r.get("text", "")).split(" "))]
    if r.get("kind") == "block":
        blocks, anchor = [int(n) for n in r["block_lengths"]], r.get("anchor")
        if (len(blocks) == 2 or anchor is not None) and len(tokens) < run_min_length:
            return None
        return block_regex(tokens, blocks, anchor)
    return inline_regex(tokens)


def _chunks(items: Sequence, size: int) -> list[Sequence]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _gsub(target: str, pattern: str, tag: str, condition_params: dict, replacement: str = "") -> dict:
    return {"gsub": {"field": target, "pattern": pattern, "replacement": replacement, "ignore_missing": True,
                     "tag": tag, "if": condition(**condition_params)}}


def _copy(source: str, target: str, engine: str) -> dict:
    if engine == "elasticsearch":  # no copy processor there
        return {"set": {"field": target, "copy_from": source, "ignore_empty_value": True, "override": True}}
    return {"copy": {"source_field": source, "target_field": target, "ignore_missing": True, "override_target": True}}


def _validate(field_name: str, mode: str, top: int, phrases_per_processor: int, engine: str,
              scope_field: str | None, url_field: str | None) -> None:
    if mode not in MODES:
        raise IngestConfigError("mode", mode, f"a pipeline supports {', '.join(MODES)} (mark needs the proxy or `bloomspan clean`)")
    if engine not in ENGINES:
        raise IngestConfigError("engine", engine, f"must be one of {', '.join(ENGINES)}")
    for name, value in (("top", top), ("phrases_per_processor", phrases_per_processor)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise IngestConfigError(name, value, "must be an integer >= 1")
    if not field_name or not isinstance(field_name, str):
        raise IngestConfigError("field", field_name, "name the text field to clean")
    for name, value in (("scope_field", scope_field), ("url_field", url_field)):
        if value is not None and (not isinstance(value, str) or not value):
            raise IngestConfigError(name, value, "must be a non-empty field name or None")
    if url_field is not None and scope_field is None:
        raise IngestConfigError("url_field", url_field, "sections are folders of a site: give scope_field too")
    if scope_field == field_name:
        raise IngestConfigError("scope_field", scope_field, f"is the text field {field_name!r}: name the site field")
    if url_field is not None and url_field in (field_name, scope_field):
        raise IngestConfigError("url_field", url_field, "is the text or scope field: name the URL field")


def _token_fits(phrase_token: str, line_token: str) -> bool:
    """A phrase's token can match a line's token (the line's numbers read as the slot)."""
    return phrase_token == line_token or (line_token == SLOT_TOKEN and (
        phrase_token == SLOT_TOKEN or (phrase_token.isascii() and phrase_token.isdigit())))


def _touches_line(r: Mapping, tokens: Sequence[str], line: Sequence[str]) -> bool:
    """Whether record ``r`` (its ``tokens``) can cover a token of ``line`` (slotted token strings):
    a block record when one of its lines is ``line``; a phrase when it overlaps ``line`` at some
    offset with every overlapping token fitting."""
    if r.get("kind") == "block":
        at = 0
        for n in (int(x) for x in r["block_lengths"]):
            part = tokens[at:at + n]
            at += n
            if len(part) == len(line) and all(_token_fits(p, q) for p, q in zip(part, line)):
                return True
        return False
    for shift in range(-len(line) + 1, len(tokens)):  # line[i] against tokens[i + shift]
        lo, hi = max(0, -shift), min(len(line), len(tokens) - shift)
        if lo < hi and all(_token_fits(tokens[i + shift], line[i]) for i in range(lo, hi)):
            return True
    return False


def _own_fact_models(templates: Sequence[Mapping]) -> list[tuple[str | None, list[tuple[str, ...]]]]:
    """Each ``own_facts`` record's scope and line types (token strings), read once."""
    return [(m.get("scope"), [tuple(str(t) for t in line) for line in m.get("lines") or []])
            for m in templates if m.get("kind") == "own_facts"]


def _own_fact_lines(models: Sequence[tuple[str | None, list[tuple[str, ...]]]], scope: str | None
                    ) -> list[tuple[str, ...]]:
    """The own-fact line types (of :func:`_own_fact_models`) that apply on pages of a record's
    ``scope``: its site's (a section "site/folder" is on its site's pages), a model without scope's,
    and for a record without scope (on every page) every model's."""
    return [line for own, lines in models
            if own is None or scope is None or scope == own or scope.startswith(own + "/") for line in lines]


def _detector_records(templates: Sequence[Mapping] | None, scope_field: str | None, url_field: str | None,
                      top: int, left_out: dict) -> tuple[list[_Record], dict, set[str]]:
    """The exportable detector records (top ``top`` per scope by Ψ), the detector's config,
    and the scopes it mined (phrases or skeletons: where a run's exact phrases stand down)."""
    if not templates:
        return [], {}, set()
    configs = [r.get("template_config") or {} for r in templates if r.get("kind") == "config"]
    config = dict(configs[0]) if configs else {}
    run_min_length = int(config.get("run_min_length", 4))
    long_line = int(config.get("section_line_length", 0))
    mined: set[str] = set()
    by_scope: dict[str | None, list[_Record]] = {}
    fact_models = _own_fact_models(templates)
    facts_of: dict[str | None, list[tuple[str, ...]]] = {}  # scope -> the own-fact lines on its pages
    for r in templates:
        kind, scope = r.get("kind"), r.get("scope")
        if kind in ("config", None):  # no kind: the run's exact phrases (they come as ``phrases``)
            continue
        if kind == "line_shape":  # no regex says "these words in this order at a page's edge"; the
            left_out["line_shapes"] += 1  # cleaner does not count it as a mined scope either
            continue
        if kind == "title_nav":  # nor "a line made of other pages' titles" (not a mined scope either)
            left_out["title_navs"] += 1
            continue
        if kind == "own_facts":  # nor "a page's header"; its lines' records stand down below
            left_out["own_facts"] += 1
            continue
        if scope is not None:
            mined.add(scope)
        if kind == "skeleton":
            left_out["skeletons"] += 1
            continue
        if scope is not None and scope_field is None:
            left_out["scoped_without_scope_field"] += 1
            continue
        if scope is not None and _is_section(scope) and url_field is None:
            left_out["sections_without_url_field"] += 1
            continue
        if scope is not None and _is_section(scope) and long_line > 0 and (
                kind != "block" or max(int(n) for n in r["block_lengths"]) > long_line):
            left_out["section_long_lines"] += 1  # the cleaner keeps a long line only a section's records touch
            continue
        if fact_models and scope not in facts_of:
            facts_of[scope] = _own_fact_lines(fact_models, scope)
        facts = facts_of.get(scope, [])
        if facts and any(_touches_line(r, [str(t) for t in (r.get("tokens") or str(r.get("text", "")).split(" "))],
                                       line) for line in facts):
            left_out["own_fact_lines"] += 1  # the cleaner gives such a line back in a page's header
            continue
        pattern = _record_pattern(r, run_min_length)
        if pattern is None:
            left_out["short_line_pairs"] += 1
            continue
        n = len(r.get("tokens") or str(r.get("text", "")).split(" "))
        by_scope.setdefault(scope, []).append(_Record(pattern, n * int(r.get("df") or 0), n, scope))
    kept: list[_Record] = []
    for scope in sorted(by_scope, key=lambda s: (s is not None, s or "")):
        ranked = sorted(by_scope[scope], key=lambda x: (-x.psi, -x.length, x.pattern))
        left_out["beyond_top"] += max(0, len(ranked) - top)
        kept.extend(sorted(ranked[:top], key=lambda x: (-x.length, x.pattern)))  # longest first
    return kept, config, mined


def _exact_phrases(phrases: Iterable, templates: Sequence[Mapping] | None, scope_field: str | None,
                   mined: set[str], left_out: dict) -> dict[str | None, list[tuple[tuple[str, ...], int]]]:
    """The run's exact phrases by scope, as ``(tokens, df)``; a scoped one's scope joins ``mined``."""
    exact: dict[str | None, list[tuple[tuple[str, ...], int]]] = {}
    for p in phrases:
        if templates and SLOT_TOKEN in p.tokens:
            continue  # slotted phrases are the detector's: they come with its records
        scope = getattr(p, "scope", None)
        if scope is not None and scope_field is None:
            left_out["scoped_without_scope_field"] += 1
            continue
        exact.setdefault(scope, []).append((tuple(p.tokens), int(p.df or 0)))
        if scope is not None and templates:
            mined.add(scope)  # the matcher counts every phrase's scope as mined, a scoped exact one's too
    return exact


class _RecordLayout:
    """Where the detector's records apply: section, site and global records, and the middle rule.

    The middle rule drops a mid-page run of section matches; with middle_repeated_lines, also a
    run of site or global matches that holds a line its page repeats. No regex sees runs: section
    records apply near a page's edges only, where the rule cannot hold, and so do site and global
    records on a page that repeats a line (the state script says which pages: repeats_a_line)."""

    def __init__(self, records: list[_Record], config: Mapping, templates: Sequence[Mapping] | None) -> None:
        self.records = records
        self.middle = int(config.get("middle_content_tokens", 0)) if templates else 0
        self.sections = sorted({r.scope for r in records if r.scope is not None and _is_section(r.scope)})
        self.sites = sorted({r.scope for r in records if r.scope is not None and not _is_section(r.scope)})
        self.global_patterns = [r.pattern for r in records if r.scope is None]
        self.repeated_rule = self.middle > 0 and bool(config.get("middle_repeated_lines", False))
        # The table-of-contents rule gives lines back anywhere after a page's header, on pages where
        # at least toc_sections lines repeat an earlier one: no regex can tell where, so template
        # records stand down on those pages.
        self.toc_sections = int(config.get("toc_sections", 0)) if templates else 0
        self.toc_rule = self.toc_sections > 0
        self.edged = bool(self.sections or (self.repeated_rule and records)) and self.middle > 0
        self.near_edge = f"(?:{BEFORE_SENTINEL}|{tokens_after_below(self.middle)})"
        self.marked = ({"edge": True} if self.repeated_rule
                       else {"any_of": {s: True for s in self.sections}, "edge": True})

    def variants(self, params: dict, kind: str) -> list[tuple[str, dict, str]]:
        """(pattern suffix, condition params, tag suffix) of the gsubs for records of ``kind``."""
        if self.toc_rule:
            params = {**params, "repeats_below": self.toc_sections}
        if self.middle > 0 and kind == "section":
            return [(self.near_edge, {**params, "edge": True}, "")]
        if self.repeated_rule:
            return [("", {**params, "repeated": False}, ""),
                    (self.near_edge, {**params, "repeated": True, "edge": True}, ":repeated-lines")]
        return [("", params, "")]

    def processors(self, target: str, phrases_per_processor: int, always: dict) -> list[dict]:
        """The gsubs of the records: sections, then sites, then global chunks, between the edge marks."""
        out = []
        if self.edged:  # the page's first tokens end at a sentinel (one the text does not hold itself)
            out.append(_gsub(target, first_tokens_regex(self.middle), "bloomspan-edge-mark", self.marked,
                             replacement="$0" + SENTINEL))
        for kind, scopes in (("section", self.sections), ("site", self.sites)):
            for scope in scopes:
                alts = [r.pattern for r in self.records if r.scope == scope]
                for suffix, params, tag in self.variants({"scope": scope}, kind):
                    out.append(_gsub(target, alternation(alts) + suffix, f"bloomspan-{kind}:{scope}{tag}", params))
        for k, chunk in enumerate(_chunks(self.global_patterns, phrases_per_processor)):
            for suffix, params, tag in self.variants(always, "global"):
                out.append(_gsub(target, alternation(chunk) + suffix, f"bloomspan-templates-{k}{tag}", params))
        if self.edged:
            out.append(_gsub(target, SENTINEL, "bloomspan-edge-unmark", self.marked))
        return out

    def notes(self) -> list[str]:
        notes = []
        if self.edged:
            which = ("section records, and on pages that repeat a line all template records,"
                     if self.repeated_rule else "section records")
            notes.append(f"{which} apply within {self.middle} tokens of a page's start or end (the detector's middle "
                         "rule; the cleaner also finds them mid-page where the rule lets it)")
        if self.toc_rule and self.records:
            notes.append(f"template records do not apply on pages where {self.toc_sections} or more lines repeat an "
                         "earlier one (the detector's table-of-contents rule; the cleaner applies them there where "
                         "the rule lets it)")
        return notes


def _exact_processors(exact: dict, target: str, top: int, phrases_per_processor: int, always: dict,
                      guard: dict | None, left_out: dict) -> tuple[list[dict], int]:
    """The gsubs of the exact phrases (top ``top`` per scope by Ψ, longest first), and their number."""
    out, n_exact = [], 0
    for scope in sorted(exact, key=lambda s: (s is not None, s or "")):
        ranked = sorted(exact[scope], key=lambda r: (-len(r[0]) * r[1], -len(r[0]), r[0]))
        left_out["beyond_top"] += max(0, len(ranked) - top)
        ordered = sorted((r[0] for r in ranked[:top]), key=lambda t: (-len(t), t))  # longest first
        n_exact += len(ordered)
        # The guard holds for scoped exact phrases too (the matcher stands every exact phrase down on a mined scope).
        params = {**({"scope": scope} if scope is not None else always), **(guard or {})}
        for k, chunk in enumerate(_chunks(ordered, phrases_per_processor)):
            tag = f"bloomspan-phrases-{k}" if scope is None else f"bloomspan-phrases:{scope}-{k}"
            out.append(_gsub(target, alternation([inline_regex(t) for t in chunk], INLINE_FLAGS), tag, params))
    return out, n_exact


def _closing_processors(target: str, original: str, temporary: list[str]) -> list[dict]:
    """Tidy the whitespace a removal left (only where the text changed), the ratio, then drop the temporaries."""
    changed = {"lang": "painless", "source": CHANGED, "params": {"a": target, "b": original}}
    out = [{"gsub": {"field": target, "pattern": pattern, "replacement": replacement,
                     "ignore_missing": True, "tag": "bloomspan-tidy", "if": changed}}
           for pattern, replacement in ((r"[ \t]+\n", "\n"), (r"\n{3,}", "\n\n"), (r"[ \t]{2,}", " "))]
    out.append({"trim": {"field": target, "ignore_missing": True, "tag": "bloomspan-tidy", "if": changed}})
    out.append({"script": {"lang": "painless", "source": _RATIO_SCRIPT, "tag": "bloomspan-ratio",
                           "params": {"original": original, "target": target, "min_ratio": MIN_RATIO}}})
    out.append({"remove": {"field": temporary, "ignore_missing": True, "tag": "bloomspan-temporary"}})
    return out


def export_pipeline(phrases: Iterable, field: str = "text", mode: str = "strip", top: int = 500,
                    phrases_per_processor: int = 50, description: str | None = None,
                    templates: Sequence[Mapping] | None = None, scope_field: str | None = None,
                    url_field: str | None = None, engine: str = "opensearch") -> PipelineExport:
    """The pipeline for a run (module docstring).

    phrases:   the run's exact phrases (objects with ``.tokens``, ``.df``, ``.scope``), ranked
               by Ψ = length × df, the top ``top`` kept.
    templates: the template detector's records (``templates.jsonl``, a config record first),
               or None for a run without the detector.
    scope_field, url_field: the document's site and URL keys, as ``bloomspan clean``'s.
    engine:    "opensearch" or "elasticsearch" (which copy processor exists).
    """
    _validate(field, mode, top, phrases_per_processor, engine, scope_field, url_field)
    left_out = {"skeletons": 0, "line_shapes": 0, "title_navs": 0, "own_facts": 0, "own_fact_lines": 0,
                "short_line_pairs": 0, "section_long_lines": 0, "beyond_top": 0,
                "scoped_without_scope_field": 0, "sections_without_url_field": 0}
    records, config, mined = _detector_records(templates, scope_field, url_field, top, left_out)
    exact_on_sites = bool(config.get("exact_phrases_on_sites", True)) if templates else True
    exact = _exact_phrases(phrases, templates, scope_field, mined, left_out)
    if not records and not exact:
        raise IngestConfigError("phrases", 0, "the phrase set is empty: mine first")
    target = field if mode == "strip" else f"{field}_clean"
    original = ORIGINAL if mode == "strip" else field
    always: dict = {}  # every cleaning processor checks the document first (a non-string text would fail a gsub)
    layout = _RecordLayout(records, config, templates)
    state = {"script": {"lang": "painless", "source": STATE_SCRIPT, "tag": "bloomspan-state",
                        "params": state_params(target, scope_field, url_field, SENTINEL)}}
    state["script"]["params"]["repeated_lines"] = layout.repeated_rule or layout.toc_rule
    guard = None if (exact_on_sites or not mined) else {"none_of": {s: True for s in sorted(mined)}}
    exact_gsubs, n_exact = _exact_processors(exact, target, top, phrases_per_processor, always, guard, left_out)
    processors = [_copy(field, ORIGINAL if mode == "strip" else target, engine), state,
                  *layout.processors(target, phrases_per_processor, always), *exact_gsubs,
                  *_closing_processors(target, original, ([ORIGINAL] if mode == "strip" else []) + [STATE_FIELD])]
    applied = {"exact_phrases": n_exact, "site_records": sum(r.scope in layout.sites for r in records),
               "section_records": sum(r.scope in layout.sections for r in records),
               "global_records": len(layout.global_patterns), "sites": len(layout.sites),
               "sections": len(layout.sections)}
    notes = []
    if guard is not None:
        notes.append(f"the run's exact phrases apply only on pages outside the {len(mined):,} scopes the detector "
                     "mined (exact_phrases_on_sites is off), as in `bloomspan clean`")
    notes += layout.notes()
    what = f"{n_exact} boilerplate phrases" + (f" and {len(records)} template records" if templates else "")
    body = {"description": description or f"bloomspan: {mode} {what} from field {field}", "processors": processors}
    return PipelineExport(body, left_out, applied, notes)


def build_pipeline(phrases: Iterable, field: str = "text", mode: str = "strip", top: int = 500,
                   phrases_per_processor: int = 50, description: str | None = None,
                   templates: Sequence[Mapping] | None = None, scope_field: str | None = None,
                   url_field: str | None = None, engine: str = "opensearch") -> dict:
    """The ``_ingest/pipeline`` body of :func:`export_pipeline`."""
    return export_pipeline(phrases, field, mode, top, phrases_per_processor, description, templates,
                           scope_field, url_field, engine).body

