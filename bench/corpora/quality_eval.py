"""Template quality: recall of known templates and damage to content, per site and overall.

Scores any method that marks tokens as boilerplate against a corpus whose documents carry
``truth.template_spans`` (the generated web crawl, :mod:`.corpora.web`, or real
documentation sites, :mod:`.real_corpus`). The standard comparison
(:func:`standard_methods`):

* ``mcfp-20-10``: exact MCFP, sigma 20, min length 10 (the article's defaults, Part 6);
* ``mcfp-10-5``:  exact MCFP, sigma 10, min length 5;
* ``lines-20``:   every whole line repeated in >= 20 documents (the line baseline);
* ``detector``:   :func:`bloomspan.engine.templates.detector.detect_templates`.

Each method returns a token mask; it becomes character spans
(:func:`~bloomspan.engine.templates.detector.coverage_char_spans`) scored by
:func:`bloomspan.corpora.evaluate.evaluate_template_recovery` (token and character
level, per site and summed). The four columns of the template-quality table are: template tokens
found, mean over sites; template tokens found over all sites; content tokens damaged.
:func:`token_scores` computes the token-level numbers straight from masks (same
definitions, no re-tokenization) for parameter sweeps.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.fhk import mine_fhk
from bloomspan.engine.templates.blocks import block_offsets_from_texts, mine_blocks
from bloomspan.engine.templates.config import SkeletonConfig, TemplateConfig
from bloomspan.engine.templates.detector import coverage_char_spans, detect_templates, scope_levels
from bloomspan.engine.templates.scoped_mining import sub_corpus
from bloomspan.engine.text.slots import number_token_mask
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.ingest.match.phrase_matcher import PhraseMatcher
from bloomspan.ingest.match.scopes import template_scopes
from bloomspan.ingest.match.template_matcher import TemplateMatcher
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.ingest.records.template_records import is_template_record
from bloomspan.sidecar.publish.phrase_records import phrase_records
from bloomspan.sidecar.run.run_templates import TemplateOptions, detect_run_templates, exact_phrases_applied

from .evaluate import RecoveryReport, evaluate_template_recovery

logger = logging.getLogger(__name__)


@dataclass
class EvalCorpus:
    """A tokenized corpus with truth. W tokens, D documents, B blocks (lines).

    docs: the D document dicts; tokens uint32 (W,); doc_offsets int64 (D+1,);
    char_starts/char_ends int64 (W,) (offsets in each document's text); block_offsets
    int64 (B+1,); sites: D site names; urls: D URLs (or None); is_number bool (V,);
    template: bool (W,) truth per token (>= half its characters in a template span).
    """

    docs: list[dict]
    tokens: np.ndarray
    doc_offsets: np.ndarray
    char_starts: np.ndarray
    char_ends: np.ndarray
    block_offsets: np.ndarray
    sites: list[str]
    urls: list[str | None]
    is_number: np.ndarray
    template: np.ndarray
    vocabulary: Vocabulary | None = None  # token ids -> strings (what phrase records are written with)

    @property
    def site_names(self) -> list[str]:
        return sorted(set(self.sites))


def truth_token_mask(doc_offsets: np.ndarray, char_starts: np.ndarray, char_ends: np.ndarray,
                     docs: Sequence[dict]) -> np.ndarray:
    """bool (W,): True for tokens with at least half their characters in a template span
    (the token-level definition of :mod:`.corpora.evaluate`)."""
    out = np.zeros(char_starts.shape[0], dtype=bool)
    for d, doc in enumerate(docs):
        a, b = int(doc_offsets[d]), int(doc_offsets[d + 1])
        n = len(doc["text"])
        diff = np.zeros(n + 1, dtype=np.int64)
        for s, e in doc["truth"]["template_spans"]:
            diff[s] += 1
            diff[e] -= 1
        cs = np.concatenate([[0], np.cumsum(np.cumsum(diff[:-1]) > 0)])
        st, en = char_starts[a:b], char_ends[a:b]
        out[a:b] = (cs[en] - cs[st]) * 2 >= (en - st)
    return out


def prepare_corpus(docs: Iterable[dict]) -> EvalCorpus:
    """Tokenize ``docs`` (fast path, one vocabulary), find their lines and truth masks."""
    docs = list(docs)
    texts = [d["text"] for d in docs]
    vocab = Vocabulary()
    tokens, doc_offsets, starts, ends = encode_batch(texts, vocab, with_offsets=True, count_df=False)
    blocks = block_offsets_from_texts(texts, doc_offsets, starts)
    return EvalCorpus(docs, tokens, doc_offsets, starts, ends, blocks, [str(d.get("site", "")) for d in docs],
                      [d.get("url") for d in docs], number_token_mask(vocab.tokens()),
                      truth_token_mask(doc_offsets, starts, ends, docs), vocab)


@dataclass(frozen=True)
class Method:
    """A named way to mark boilerplate: ``run(corpus) -> bool (W,)``."""

    name: str
    label: str
    run: Callable[[EvalCorpus], np.ndarray]


def mcfp_method(sigma: int, min_length: int, engine: str = "bloomspan") -> Method:
    """Plain exact MCFP on the whole corpus (no scope, no blocks, no slots)."""
    def run(c: EvalCorpus) -> np.ndarray:
        miner = mine_bloomspan if engine == "bloomspan" else mine_fhk
        return miner(c.tokens, c.doc_offsets, MiningConfig(sigma=sigma, min_length=min_length, engine=engine)).coverage
    return Method(f"mcfp-{sigma}-{min_length}", f"exact MCFP, σ = {sigma}, min length {min_length}", run)


def whole_line_method(sigma: int) -> Method:
    """Every whole line (any length) repeated in >= sigma documents of the corpus."""
    def run(c: EvalCorpus) -> np.ndarray:
        huge = int(c.tokens.shape[0]) + 1  # no chains: single lines only
        return mine_blocks(c.tokens, c.doc_offsets, c.block_offsets, sigma, 1, huge).coverage
    return Method(f"lines-{sigma}", f"whole lines repeated in ≥ {sigma} documents", run)


def site_lines_ceiling() -> Method:
    """Diagnostic: whole lines repeated on >= 2 pages of their own site. Its recall bounds
    what any line-repetition method can find (page-specific navigation is out of reach)."""
    def run(c: EvalCorpus) -> np.ndarray:
        cov = np.zeros(c.tokens.shape[0], dtype=bool)

        for site in c.site_names:
            docs = np.asarray([d for d, s in enumerate(c.sites) if s == site], dtype=np.int64)
            if docs.shape[0] < 2:
                continue
            sub = sub_corpus(c.tokens, c.doc_offsets, docs, site, c.block_offsets)
            r = mine_blocks(sub.tokens, sub.doc_offsets, sub.block_offsets, 2, 1, sub.tokens.shape[0] + 1)
            cov[sub.positions[r.coverage]] = True
        return cov
    return Method("ceiling-site-lines-2", "diagnostic: lines on ≥ 2 pages of their site", run)


def detector_method(config: TemplateConfig | None = None, name: str = "detector") -> Method:
    config = config or TemplateConfig()

    def run(c: EvalCorpus) -> np.ndarray:
        levels = scope_levels(c.sites, c.urls, config.section_depth)
        return detect_templates(c.tokens, c.doc_offsets, c.block_offsets, config, levels, c.is_number).coverage
    return Method(name, "template detector" + (" (defaults)" if config == TemplateConfig() else ""), run)


def run_records(c: EvalCorpus, sigma: int = 20, min_length: int = 10, config: TemplateConfig | None = None,
                detector: bool = True) -> list[dict]:
    """What ``bloomspan mine --jsonl --site-field site --url-field url`` writes for ``c``:
    the exact phrases (each with ``min_length``), then the detector's records (config,
    template phrases, page skeletons) from the run's own
    :func:`~bloomspan.sidecar.run.run_templates.detect_run_templates`."""
    if c.vocabulary is None:
        raise ValueError("the corpus has no vocabulary: build it with prepare_corpus")
    result = mine_bloomspan(c.tokens, c.doc_offsets, MiningConfig(sigma=sigma, min_length=min_length))
    phrases = [{**r, "min_length": min_length} for r in phrase_records(result.phrases, c.vocabulary)]
    if not detector:
        return phrases
    defaults = TemplateConfig().to_dict()
    changed = {k: v for k, v in (config or TemplateConfig()).to_dict().items() if v != defaults[k]}
    options = TemplateOptions(site_field="site", url_field="url", config=changed or None)
    records, _stats = detect_run_templates(c.tokens, c.doc_offsets, c.block_offsets, c.vocabulary, c.sites, c.urls,
                                           options, result.coverage)
    return records[:1] + phrases + records[1:]


def ingest_coverage(c: EvalCorpus, records: list[dict], match: str = "windows") -> np.ndarray:
    """bool (W,): the tokens ``bloomspan clean --site-field site --url-field url`` removes from
    the corpus' own texts with ``records`` (the cleaner's matcher, as in production)."""
    texts = [d["text"] for d in c.docs]
    if any(is_template_record(r) for r in records):
        matcher = TemplateMatcher(records, match=match)
        found = matcher.find_batch(texts, [template_scopes(s, u) for s, u in zip(c.sites, c.urls)])
    else:
        found = PhraseMatcher(PhraseSet.from_records(records), match=match).find_batch(texts, fixed_point=True)
    out = np.zeros(c.tokens.shape[0], dtype=bool)
    for d, m in enumerate(found):
        base, n = int(c.doc_offsets[d]), int(c.doc_offsets[d + 1] - c.doc_offsets[d])
        if m.n_tokens != n:
            raise AssertionError(f"document {d}: the cleaner's tokenizer found {m.n_tokens} tokens, mining {n}")
        for a, b in zip(m.span_token_start.tolist(), m.span_token_end.tolist()):
            out[base + a:base + b] = True
    return out


def default_path_method(match: str = "windows", detector: bool = True, config: TemplateConfig | None = None,
                        name: str | None = None, label: str | None = None) -> Method:
    """The README's main path, with defaults only: ``mine --jsonl --site-field site --url-field
    url`` (exact phrases 20/10 and the detector), then ``clean`` (window matching) on the same pages."""
    def run(c: EvalCorpus) -> np.ndarray:
        return ingest_coverage(c, run_records(c, config=config, detector=detector), match)

    what = ("mine + clean, defaults" if detector else "mine + clean without the detector") + \
        ("" if match == "windows" else ", whole phrases")
    return Method(name or f"path-{'detector' if detector else 'mcfp'}-{match}", label or what, run)


def window_ablations() -> list[Method]:
    """The default path with and without window matching, with and without the detector."""
    return [default_path_method(), default_path_method(match="phrases"), default_path_method(detector=False),
            default_path_method(match="phrases", detector=False)]


def standard_methods(config: TemplateConfig | None = None) -> list[Method]:
    """The issue's comparison: (a) MCFP 20/10, (b) MCFP 10/5, (c) lines >= 20, (d) the detector."""
    return [mcfp_method(20, 10), mcfp_method(10, 5), whole_line_method(20), detector_method(config)]


@dataclass
class TokenScore:
    """Token-level scores of one mask: mean per-site recall, overall recall, damage."""

    mean_site_recall: float
    recall: float
    damage: float
    per_site: dict[str, tuple[float, float]] = field(default_factory=dict)


def token_scores(c: EvalCorpus, coverage: np.ndarray) -> TokenScore:
    """Token-level recall and damage of ``coverage`` (bool (W,)) from the truth mask."""
    doc_of = np.searchsorted(c.doc_offsets, np.arange(c.tokens.shape[0]), side="right") - 1
    site_names = c.site_names
    site_index = {s: i for i, s in enumerate(site_names)}
    site_of = np.asarray([site_index[s] for s in c.sites], dtype=np.int64)[doc_of] if doc_of.size else doc_of
    n = len(site_names)
    t = np.bincount(site_of, weights=c.template, minlength=n)
    tc = np.bincount(site_of, weights=c.template & coverage, minlength=n)
    k = np.bincount(site_of, weights=~c.template, minlength=n)
    kc = np.bincount(site_of, weights=~c.template & coverage, minlength=n)
    ratio = lambda a, b: a / b if b else math.nan  # noqa: E731
    per = {s: (ratio(tc[i], t[i]), ratio(kc[i], k[i])) for i, s in enumerate(site_names)}
    recalls = [r for r, _ in per.values() if not math.isnan(r)]
    return TokenScore(float(np.mean(recalls)) if recalls else math.nan, ratio(tc.sum(), t.sum()),
                      ratio(kc.sum(), k.sum()), per)


@dataclass
class MethodResult:
    method: Method
    report: RecoveryReport
    seconds: float
    covered_tokens: int

    def mean_site_token_recall(self) -> float:
        vals = [v.token_recall for v in self.report.per_site.values() if not math.isnan(v.token_recall)]
        return float(np.mean(vals)) if vals else math.nan


def evaluate_methods(c: EvalCorpus, methods: Sequence[Method]) -> list[MethodResult]:
    """Run every method on ``c`` and score it with :func:`evaluate_template_recovery`."""
    out = []
    for m in methods:
        t0 = time.perf_counter()
        cov = m.run(c)
        seconds = time.perf_counter() - t0
        spans = coverage_char_spans(cov, c.doc_offsets, c.char_starts, c.char_ends)
        report = evaluate_template_recovery(c.docs, spans)
        out.append(MethodResult(m, report, seconds, int(cov.sum())))
        logger.info("%s: %.1f s, token recall %.4f, damage %.5f", m.name, seconds,
                    report.overall.token_recall, report.overall.token_damage)
    return out


def _pct(x: float, digits: int = 1) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.{digits}f} %"


def summary_table(results: Sequence[MethodResult]) -> str:
    """Markdown: the issue's four columns plus character-level recall and damage."""
    n_sites = len(results[0].report.per_site) if results else 0
    lines = [f"| method | template tokens found, mean over {n_sites} sites | all template tokens | "
             "content tokens damaged | template chars found | content chars damaged | seconds |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        o = r.report.overall
        lines.append(f"| {r.method.label} | {_pct(r.mean_site_token_recall())} | {_pct(o.token_recall)} | "
                     f"{_pct(o.token_damage, 2)} | {_pct(o.char_recall)} | {_pct(o.char_damage, 2)} | "
                     f"{r.seconds:.1f} |")
    return "\n".join(lines)


def per_site_table(results: Sequence[MethodResult]) -> str:
    """Markdown: per site, each method's token recall / token damage side by side."""
    if not results:
        return ""
    head = "| site | docs | template tokens | " + " | ".join(f"{r.method.name} found / damaged" for r in results) + " |"
    lines = [head, "|---|---|---|" + "---|" * len(results)]
    for site, base in sorted(results[0].report.per_site.items()):
        cells = []
        for r in results:
            s = r.report.per_site[site]
            cells.append(f"{_pct(s.token_recall)} / {_pct(s.token_damage, 2)}")
        lines.append(f"| {site} | {base.docs} | {base.template_tokens:,} of "
                     f"{base.template_tokens + base.content_tokens:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def results_to_dict(results: Sequence[MethodResult]) -> dict:
    """JSON-serialisable form of the results (per method: overall, per site, seconds)."""
    return {r.method.name: {"label": r.method.label, "seconds": r.seconds, "covered_tokens": r.covered_tokens,
                            "mean_site_token_recall": r.mean_site_token_recall(), **r.report.to_dict()}
            for r in results}


@dataclass
class SweepRow:
    config: TemplateConfig
    score: TokenScore
    seconds: float


def sweep(c: EvalCorpus, configs: Iterable[TemplateConfig]) -> list[SweepRow]:
    """Token-level scores of the detector with each config (fast: no re-tokenization)."""
    rows = []
    for cfg in configs:
        t0 = time.perf_counter()
        cov = detector_method(cfg).run(c)
        rows.append(SweepRow(cfg, token_scores(c, cov), time.perf_counter() - t0))
    return rows


DAMAGE_LIMIT = 0.005  # the goal: at most 0.5 % of content tokens damaged


GOALS = (0.70, 0.95)  # the goals: mean per-site recall, overall recall


def _rank(r: SweepRow) -> tuple:
    """Sort key, best first: goals met (mean per-site recall >= 70 %, overall >= 95 %), then
    overall recall, mean per-site recall, lower damage."""
    s = r.score
    met = s.mean_site_recall >= GOALS[0] and s.recall >= GOALS[1]
    return (not met, -round(s.recall, 6), -round(s.mean_site_recall, 6), s.damage)


def best_row(rows: Sequence[SweepRow], max_damage: float = DAMAGE_LIMIT) -> SweepRow | None:
    """Among the rows with overall token damage <= max_damage: the first by :func:`_rank`
    (one meeting the issue's recall goals if any; then the most template tokens found);
    None if no row is within the damage limit."""
    ok = [r for r in rows if not math.isnan(r.score.damage) and r.score.damage <= max_damage]
    if not ok:
        return None
    return min(ok, key=_rank)


def config_diff(config: TemplateConfig, base: TemplateConfig | None = None) -> str:
    """``field=value`` for every field that differs from ``base`` (default: the defaults)."""
    def flat(c: TemplateConfig) -> dict:
        d = c.to_dict()
        inner = d.pop("skeleton")
        d["skeleton"] = inner is not None
        d.update({f"skeleton.{k}": v for k, v in (inner or {}).items()})
        return d
    mine, theirs = flat(config), flat(base or TemplateConfig())
    items = [f"{k}={v}" for k, v in mine.items() if v != theirs.get(k)]
    return ", ".join(items) or "defaults"


def sweep_table(rows: Sequence[SweepRow], top: int = 15, max_damage: float = DAMAGE_LIMIT) -> str:
    """Markdown: the ``top`` rows by the :func:`best_row` order, damage limit first."""
    def key(r: SweepRow):
        return (not r.score.damage <= max_damage, *_rank(r))

    lines = ["| config | tokens found, mean over sites | all template tokens | content damaged |",
             "|---|---|---|---|"]
    for r in sorted(rows, key=key)[:top]:
        lines.append(f"| {config_diff(r.config)} | {_pct(r.score.mean_site_recall)} | {_pct(r.score.recall)} | "
                     f"{_pct(r.score.damage, 2)} |")
    return "\n".join(lines)


def default_sweep_configs() -> list[TemplateConfig]:
    """The parameter grid used to choose TemplateConfig's defaults (bench/quality_eval.py --sweep):
    the page-skeleton knobs (gap line length, site echoes, tables of contents, boxes).
    The block-miner knobs were swept before the skeleton pass existed (288 configs), then sigma
    fraction, scoped MCFP and the anchor share with the first skeleton (32 configs, see
    bench/RESULTS.md); they keep the values chosen then; slots stay on (see :func:`ablations`)."""
    import itertools

    boxes = ((0, 0.4), (4, 0.4), (4, 0.5), (3, 0.45))
    grid = itertools.product((6, 8), (0, 6), (0, 3), boxes)
    return [TemplateConfig(skeleton=SkeletonConfig(line_length=ll, site_echo_length=e, toc_min_lines=t,
                                                   box_min_lines=b, box_fraction=f))
            for ll, e, t, (b, f) in grid]


def ablations(config: TemplateConfig | None = None) -> list[tuple[str, TemplateConfig]]:
    """``config`` (default: the defaults) with one feature changed at a time."""
    import dataclasses

    c = config or TemplateConfig()
    swap = dataclasses.replace
    return [("as chosen", c), ("no slots", swap(c, slots=False)), ("no sections", swap(c, section_depth=0)),
            ("no page-edge anchors", swap(c, edge_anchors=False)),
            ("no scoped MCFP", swap(c, scoped_min_length=None)),
            ("no in-page tables of contents", swap(c, skeleton=swap(c.skeleton or SkeletonConfig(), toc_min_lines=0))),
            ("no mid-page boxes", swap(c, skeleton=swap(c.skeleton or SkeletonConfig(), box_min_lines=0))),
            ("no page skeleton", swap(c, skeleton=None)),
            ("no middle rule", swap(c, middle_content_tokens=0)),
            ("middle rule without the repeated-line veto", swap(c, middle_repeated_lines=False)),
            ("no section prose limit", swap(c, section_line_length=0)),
            ("no head lines", swap(c, head_line_length=0)),
            ("with global passes", swap(c, global_min_length=10, global_blocks=True)),
            ("sites only, no chains, no slots, no skeleton",
             swap(c, section_depth=0, run_min_length=10**6, slots=False, edge_anchors=False,
                  scoped_min_length=None, skeleton=None))]


def ablation_table(c: EvalCorpus, config: TemplateConfig | None = None) -> str:
    """Markdown: token-level scores of :func:`ablations` on ``c``."""
    lines = ["| detector variant | tokens found, mean over sites | all template tokens | content damaged |",
             "|---|---|---|---|"]
    for name, cfg in ablations(config):
        s = sweep(c, [cfg])[0].score
        lines.append(f"| {name} | {_pct(s.mean_site_recall)} | {_pct(s.recall)} | {_pct(s.damage, 2)} |")
    return "\n".join(lines)


# The record kind each detector pass writes (TemplateDetection.pass_coverage), in the order a damaged
# token is attributed: the first pass whose coverage holds it. Pass names end in their level.
_PASS_KINDS = (("blocks", "block"), ("mcfp", "template phrase (mcfp)"), ("skeleton", "skeleton"),
               ("line_shapes", "line_shape"))
EXACT_PHRASES = "exact phrase (mcfp 20/10)"
INGEST_ONLY = "ingest window matching"


def pass_kind(name: str) -> str:
    """The record kind a detector pass writes (``level1_blocks`` -> ``block``)."""
    for key, kind in _PASS_KINDS:
        if key in name:
            return kind
    raise ValueError(f"detector pass {name!r}: no record kind known; add it to _PASS_KINDS")


def damage_audit(c: EvalCorpus, config: TemplateConfig | None = None) -> dict[str, dict[str, int]]:
    """Per site, the content tokens the default path (mine + clean, defaults) removes, by the
    record kind and rule that took each: ``{site: {"<kind>: <pass>": tokens}}``.

    A damaged token (removed by the cleaner, not template in the truth) goes to the first of: the
    run's exact phrases as ingest applies them, then the detector's passes in the order of
    :data:`_PASS_KINDS` (the pass name says the rule and its scope level), else
    :data:`INGEST_ONLY` (window matching found it where mining's coverage did not)."""
    config = config or TemplateConfig()
    removed = ingest_coverage(c, run_records(c, config=config))
    result = mine_bloomspan(c.tokens, c.doc_offsets, MiningConfig(sigma=20, min_length=10))
    levels = scope_levels(c.sites, c.urls, config.section_depth)
    detection = detect_templates(c.tokens, c.doc_offsets, c.block_offsets, config, levels, c.is_number,
                                 anchor_coverage=result.coverage)
    rules = [(EXACT_PHRASES, exact_phrases_applied(result.coverage, c.doc_offsets, levels, detection, config))]
    order = {kind: k for k, (_, kind) in enumerate(_PASS_KINDS)}
    for name in sorted(detection.pass_coverage, key=lambda n: (order[pass_kind(n)], n)):
        rules.append((f"{pass_kind(name)}: {name}", np.asarray(detection.pass_coverage[name], dtype=bool)))
    damaged = removed & ~c.template
    doc_of = np.searchsorted(c.doc_offsets, np.arange(c.tokens.shape[0]), side="right") - 1
    site_of = np.asarray(c.sites, dtype=object)[doc_of] if doc_of.size else np.asarray([], dtype=object)
    left = damaged.copy()
    audit: dict[str, dict[str, int]] = {s: {} for s in c.site_names}
    for label, mask in rules + [(INGEST_ONLY, np.ones_like(damaged))]:
        took = left & mask
        left &= ~took
        for site, n in zip(*np.unique(site_of[took], return_counts=True)) if took.any() else ():
            audit[str(site)][label] = int(n)
    return audit


def damage_audit_table(c: EvalCorpus, audit: dict[str, dict[str, int]]) -> str:
    """Markdown: per site its content tokens, those removed (share) and the rules that took them,
    largest first."""
    doc_of = np.searchsorted(c.doc_offsets, np.arange(c.tokens.shape[0]), side="right") - 1
    site_of = np.asarray(c.sites, dtype=object)[doc_of] if doc_of.size else np.asarray([], dtype=object)
    rows = ["| site | content tokens | removed | share | by record kind: rule (tokens) |", "|---|---:|---:|---:|---|"]
    for site in c.site_names:
        content = int((~c.template[site_of == site]).sum())
        taken = audit.get(site, {})
        total = sum(taken.values())
        rules = ", ".join(f"{k} ({v:,})" for k, v in sorted(taken.items(), key=lambda kv: -kv[1])) or "none"
        rows.append(f"| {site} | {content:,} | {total:,} | {_pct(total / content if content else math.nan, 2)} "
                    f"| {rules} |")
    return "\n".join(rows)
