"""Template recovery scores: how much of the known boilerplate a coverage mask finds.

Inputs: documents with ``truth.template_spans`` (and optionally ``truth.variable_spans``)
as produced by this package, and, per document, the character spans that a miner marked
as covered (e.g. the tokens under ``MiningResult.coverage`` mapped back to the text with
:func:`spans_from_token_mask`).

Definitions (character level). Only *token characters* count: characters inside tokens
as found by ``bloomspan.engine.text.tokenizer.token_spans``. Whitespace, punctuation and "©"
are invisible to the miner (the tokenizer drops them), so counting them would reward or
punish nothing the miner can see.

* template character: a token character inside some template span;
* content character: any other token character;
* recall = covered template characters / template characters;
* damage = covered content characters / content characters (the share of real content
  a boilerplate stripper would wrongly remove).

Token level. A token is a template token when at least half of its characters are
template characters, otherwise a content token; it is covered when at least half of its
characters are covered (generators here never split a token between template and
content, so the halves only matter for foreign inputs). recall = covered template
tokens / template tokens; damage = covered content tokens / content tokens.

``variable_parts``: "template" (default) counts the variable parts of templates (years,
category names, prices, product names, "Read also" titles) as template text, although
exact matching cannot find them as one phrase (article, Part 6); "ignore" leaves their
characters and tokens out of every count, scoring the fixed template text only.

Ratios with a zero denominator are ``nan``. Counts add up: the overall score is the sum
over documents (micro average), so large sites weigh more; per-site scores are given too.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from bloomspan.engine.text.tokenizer import token_spans

VARIABLE_PARTS = ("template", "ignore")


@dataclass(frozen=True)
class RecoveryCounts:
    """Summable counts of one document, one site or a whole corpus."""

    docs: int = 0
    template_chars: int = 0
    template_chars_covered: int = 0
    content_chars: int = 0
    content_chars_covered: int = 0
    template_tokens: int = 0
    template_tokens_covered: int = 0
    content_tokens: int = 0
    content_tokens_covered: int = 0

    def __add__(self, other: RecoveryCounts) -> RecoveryCounts:
        return RecoveryCounts(*(a + b for a, b in zip(asdict(self).values(), asdict(other).values())))

    @staticmethod
    def _ratio(a: int, b: int) -> float:
        return a / b if b else math.nan

    @property
    def char_recall(self) -> float:
        return self._ratio(self.template_chars_covered, self.template_chars)

    @property
    def char_damage(self) -> float:
        return self._ratio(self.content_chars_covered, self.content_chars)

    @property
    def token_recall(self) -> float:
        return self._ratio(self.template_tokens_covered, self.template_tokens)

    @property
    def token_damage(self) -> float:
        return self._ratio(self.content_tokens_covered, self.content_tokens)

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("char_recall", "char_damage", "token_recall", "token_damage"):
            v = getattr(self, k)
            d[k] = None if math.isnan(v) else v
        return d


@dataclass
class RecoveryReport:
    """overall: summed over all documents; per_site: keyed by ``doc["site"]``."""

    overall: RecoveryCounts = field(default_factory=RecoveryCounts)
    per_site: dict[str, RecoveryCounts] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"overall": self.overall.to_dict(),
                "per_site": {k: v.to_dict() for k, v in sorted(self.per_site.items())}}


def _mask(n: int, spans: Sequence[Sequence[int]], what: str, doc_id) -> np.ndarray:
    """bool (n,): union of [start, end) spans; validates every span."""
    diff = np.zeros(n + 1, dtype=np.int32)
    for sp in spans:
        if len(sp) != 2:
            raise ValueError(f"doc {doc_id!r}: {what} span {sp!r} must be [start, end]")
        a, b = int(sp[0]), int(sp[1])
        if not 0 <= a <= b <= n:
            raise ValueError(f"doc {doc_id!r}: {what} span [{a}, {b}] must satisfy 0 <= start <= end <= "
                             f"len(text) = {n}")
        diff[a] += 1
        diff[b] -= 1
    return np.cumsum(diff[:-1]) > 0


def _token_share(mask: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """float64 (n_tokens,): share of each token's characters where ``mask`` is True."""
    cs = np.concatenate([[0], np.cumsum(mask, dtype=np.int64)])
    return (cs[ends] - cs[starts]) / np.maximum(ends - starts, 1)


def token_labels(text: str, template_spans: Sequence[Sequence[int]]) -> tuple[list[str], np.ndarray]:
    """Tokens of ``text`` and bool (n_tokens,): True for template tokens (see module doc)."""
    tokens, starts, ends = token_spans(text)
    tmpl = _mask(len(text), template_spans, "template", None)
    return tokens, _token_share(tmpl, starts, ends) >= 0.5


def spans_from_token_mask(text: str, covered: np.ndarray) -> list[list[int]]:
    """Character spans of covered tokens: ``covered`` is bool (n_tokens,) over
    ``token_spans(text)``; runs of covered tokens merge into one span (first start, last end)."""
    _tokens, starts, ends = token_spans(text)
    covered = np.asarray(covered, dtype=bool)
    if covered.shape != starts.shape:
        raise ValueError(f"covered.shape={covered.shape}: must be ({starts.shape[0]},), one flag per token")
    out: list[list[int]] = []
    idx = np.flatnonzero(covered)
    if idx.shape[0] == 0:
        return out
    breaks = np.flatnonzero(np.diff(idx) > 1)
    first = np.concatenate([[0], breaks + 1])
    last = np.concatenate([breaks, [idx.shape[0] - 1]])
    for first_token, last_token in zip(idx[first].tolist(), idx[last].tolist()):
        out.append([int(starts[first_token]), int(ends[last_token])])
    return out


def doc_counts(text: str, template_spans, covered_spans, variable_spans=(), variable_parts: str = "template",
               doc_id=None) -> RecoveryCounts:
    """Counts of one document (definitions in the module docstring)."""
    if variable_parts not in VARIABLE_PARTS:
        raise ValueError(f"variable_parts={variable_parts!r}: must be one of {VARIABLE_PARTS}")
    n = len(text)
    _tokens, starts, ends = token_spans(text)
    tmpl = _mask(n, template_spans, "template", doc_id)
    cov = _mask(n, covered_spans, "covered", doc_id)
    diff = np.zeros(n + 1, dtype=np.int32)
    np.add.at(diff, starts, 1)
    np.add.at(diff, ends, -1)
    tokc = np.cumsum(diff[:-1]) > 0
    t_share = _token_share(tmpl, starts, ends)
    c_share = _token_share(cov, starts, ends)
    keep_tok = np.ones(starts.shape[0], dtype=bool)
    if variable_parts == "ignore" and len(variable_spans):
        var = _mask(n, variable_spans, "variable", doc_id)
        tokc &= ~var
        keep_tok = _token_share(var, starts, ends) < 0.5
    t_tok = (t_share >= 0.5) & keep_tok
    c_tok = (t_share < 0.5) & keep_tok
    cov_tok = c_share >= 0.5
    return RecoveryCounts(
        docs=1,
        template_chars=int(np.count_nonzero(tokc & tmpl)),
        template_chars_covered=int(np.count_nonzero(tokc & tmpl & cov)),
        content_chars=int(np.count_nonzero(tokc & ~tmpl)),
        content_chars_covered=int(np.count_nonzero(tokc & ~tmpl & cov)),
        template_tokens=int(np.count_nonzero(t_tok)),
        template_tokens_covered=int(np.count_nonzero(t_tok & cov_tok)),
        content_tokens=int(np.count_nonzero(c_tok)),
        content_tokens_covered=int(np.count_nonzero(c_tok & cov_tok)),
    )


def evaluate_template_recovery(docs: Iterable[dict],
                               covered: Mapping[str, Sequence[Sequence[int]]] | Sequence[Sequence[Sequence[int]]],
                               variable_parts: str = "template") -> RecoveryReport:
    """Score coverage against the truth of ``docs``.

    covered: either a mapping ``doc id -> [[start, end], ...]`` (documents missing from it
    have no coverage) or a sequence of span lists aligned with ``docs``.
    """
    report = RecoveryReport()
    by_id = isinstance(covered, Mapping)
    it = iter(()) if by_id else iter(covered)
    for i, doc in enumerate(docs):
        doc_id = doc.get("id", i)
        if by_id:
            spans = covered.get(doc_id, ())
        else:
            try:
                spans = next(it)
            except StopIteration:
                raise ValueError(f"covered has {i} entries but docs has more: give one span list per "
                                 "document") from None
        truth = doc["truth"]
        c = doc_counts(doc["text"], truth["template_spans"], spans, truth.get("variable_spans", ()),
                       variable_parts, doc_id)
        site = str(doc.get("site", ""))
        report.overall = report.overall + c
        report.per_site[site] = report.per_site.get(site, RecoveryCounts()) + c
    if not by_id and next(it, None) is not None:
        raise ValueError("covered has more entries than docs: give one span list per document")
    return report
