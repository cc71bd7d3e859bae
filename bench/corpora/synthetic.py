"""The article's synthetic corpora (Part 5) with their known answers.

Synthetic 1 - sparse insertions into a unique background
    Every background word is a random 8-letter string, unique in the whole corpus
    (:mod:`.unique_words`); documents of ``words_per_doc`` words are consecutive slices
    of that sequence (df = 1 for every background word). Three English phrases are
    planted with supports 3, 5 and 4: each in that many distinct random documents, at a
    random position between background words. Two phrases planted in the same document
    get distinct positions, so a unique word always separates them. The MCFP answer is
    known in advance: :func:`synthetic1_expected`. Use sigma = 3, min length = 3 (the
    article's settings) to get exactly the three phrases.

Synthetic 2 - dense nested overlaps (BloomSpan's worst case)
    The article only says "300 heavily overlapping phrases of decreasing length" and that
    "almost every n-gram from the inserted family is frequent; the filter has nothing to
    cut; all the work is in the maximality check". We build it so that this holds:
    a base sequence B of ``base_length`` distinct words; phrase k (k = 0..299) is the
    window B[s_k : s_k + L_k] with L_k decreasing linearly from ``max_phrase_length`` to
    ``min_phrase_length`` and s_k uniform, so windows nest inside and overlap each other
    everywhere. Each document holds ``phrases_per_doc`` windows (phrase k appears in
    about n_docs * phrases_per_doc / 300 documents, at least n_docs // 300 by a
    round-robin first slot), separated by 1-4 unique background words. Almost all of a
    document is planted material, every bigram of B is frequent, and most frequent
    phrases are nested in others. The answer is exact and cheap:
    :func:`synthetic2_expected` (interval containment over B).

Document dicts have the web corpus's keys: ``id``, ``url``, ``site`` ("synthetic1" or
"synthetic2"), ``lang`` ("en"), ``page_type`` ("synthetic"), ``text``, and ``truth``
with ``template_spans`` (character spans of the planted phrases), ``variable_spans``
(empty), ``near_duplicate_of`` (None) and ``planted``: a list of ``[phrase_index, start,
end]``.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .unique_words import UniqueWords

SYNTHETIC1_PHRASES: tuple[tuple[str, int], ...] = (
    ("This is the first test sentence", 3),
    ("Another unique phrase for testing", 5),
    ("A third sentence", 4),
)


@dataclass(frozen=True)
class ExpectedPhrase:
    """A known MCFP: lowercased tokens, df, occurrences, and the ids of its documents."""

    tokens: tuple[str, ...]
    df: int
    occurrences: int
    doc_ids: tuple[str, ...]

    @property
    def length(self) -> int:
        return len(self.tokens)

    @property
    def psi(self) -> int:
        return len(self.tokens) * self.df


def _order(phrases: list[ExpectedPhrase]) -> list[ExpectedPhrase]:
    """psi descending, length descending, then tokens (strings) ascending."""
    return sorted(phrases, key=lambda p: (-p.psi, -p.length, p.tokens))


def _check(name: str, value, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name}={value!r}: must be an integer >= {minimum}")


def _doc(corpus: str, i: int, text: str, planted: list[list[int]]) -> dict:
    return {
        "id": f"{corpus}-{i:09d}", "url": f"synthetic://{corpus}/{i}", "site": corpus, "lang": "en",
        "page_type": "synthetic", "text": text,
        "truth": {"template_spans": [[a, b] for _k, a, b in planted], "variable_spans": [],
                  "near_duplicate_of": None, "planted": planted},
    }


def _assemble(pieces: list[tuple[int, str]]) -> tuple[str, list[list[int]]]:
    """Join (phrase index or -1 for background, text) pieces with single spaces."""
    parts, planted, pos = [], [], 0
    for k, text in pieces:
        if not text:
            continue
        if parts:
            parts.append(" ")
            pos += 1
        if k >= 0:
            planted.append([k, pos, pos + len(text)])
        parts.append(text)
        pos += len(text)
    return "".join(parts), planted


# --- Synthetic 1 ------------------------------------------------------------------------

def _synthetic1_plan(n_docs: int, seed: int, words_per_doc: int) -> dict[int, list[tuple[int, int]]]:
    """doc -> [(slot, phrase index)], slots distinct within a doc, ascending."""
    need = max(s for _p, s in SYNTHETIC1_PHRASES)
    if n_docs < need:
        raise ValueError(f"n_docs={n_docs}: Synthetic 1 plants a phrase in {need} distinct documents; "
                         f"use n_docs >= {need}")
    _check("words_per_doc", words_per_doc, 2)
    rng = np.random.default_rng([seed, 11])
    plan: dict[int, list[tuple[int, int]]] = {}
    for k, (_text, support) in enumerate(SYNTHETIC1_PHRASES):
        for d in rng.choice(n_docs, size=support, replace=False).tolist():
            used = {slot for slot, _ in plan.get(d, [])}
            slot = int(rng.integers(0, words_per_doc + 1))
            while slot in used:
                slot = int(rng.integers(0, words_per_doc + 1))
            plan.setdefault(d, []).append((slot, k))
    return {d: sorted(v) for d, v in plan.items()}


def _forbidden(phrases) -> tuple[str, ...]:
    toks = {t.lower() for p in phrases for t in p.split()}
    return tuple(sorted(t for t in toks if len(t) == 8 and t.isascii() and t.isalpha()))


def generate_synthetic1(n_docs: int, seed: int, words_per_doc: int = 5000) -> Iterator[dict]:
    """Stream Synthetic 1 (see module docstring); n_docs >= 5."""
    _check("n_docs", n_docs, 5)
    plan = _synthetic1_plan(n_docs, seed, words_per_doc)
    words = UniqueWords(seed, forbidden=_forbidden(p for p, _s in SYNTHETIC1_PHRASES))
    if n_docs * words_per_doc > words.capacity:
        raise ValueError(f"n_docs * words_per_doc = {n_docs * words_per_doc}: more than {words.capacity} "
                         "unique 8-letter words exist")
    return _synthetic1_stream(n_docs, words_per_doc, plan, words)


def _synthetic1_stream(n_docs, words_per_doc, plan, words) -> Iterator[dict]:
    width = 9  # 8 letters + space
    for i in range(n_docs):
        background = words.joined(i * words_per_doc, words_per_doc)
        pieces: list[tuple[int, str]] = []
        prev = 0
        for slot, k in plan.get(i, []):
            pieces.append((-1, background[prev * width:slot * width].rstrip(" ")))
            pieces.append((k, SYNTHETIC1_PHRASES[k][0]))
            prev = slot
        pieces.append((-1, background[prev * width:]))
        text, planted = _assemble(pieces)
        yield _doc("synthetic1", i, text, planted)


def synthetic1_expected(n_docs: int, seed: int, sigma: int = 3, min_length: int = 3,
                        words_per_doc: int = 5000) -> list[ExpectedPhrase]:
    """The exact MCFP answer for ``generate_synthetic1(n_docs, seed, words_per_doc)``.

    Background words are unique and planted phrases never touch, so every frequent phrase
    lies inside planted phrases; the answer is the MCFPs of the planted phrases alone,
    computed by brute force over their n-grams (they are a few dozen tokens).
    """
    _check("sigma", sigma, 2)
    _check("min_length", min_length, 2)
    plan = _synthetic1_plan(n_docs, seed, words_per_doc)
    segments = {d: [SYNTHETIC1_PHRASES[k][0].lower().split() for _slot, k in v] for d, v in plan.items()}
    return _mcfp_of_segments(segments, sigma, min_length, "synthetic1")


def _mcfp_of_segments(segments: dict[int, list[list[str]]], sigma: int, min_length: int,
                      corpus: str) -> list[ExpectedPhrase]:
    """MCFPs of documents made of separate segments (nothing spans two segments)."""
    docs: dict[tuple[str, ...], set[int]] = {}
    occ: dict[tuple[str, ...], int] = {}
    for d, segs in segments.items():
        for seg in segs:
            for a in range(len(seg)):
                for b in range(a + 1, len(seg) + 1):
                    g = tuple(seg[a:b])
                    docs.setdefault(g, set()).add(d)
                    occ[g] = occ.get(g, 0) + 1
    frequent = {g for g, ds in docs.items() if len(ds) >= sigma}
    out = []
    for g in frequent:
        if len(g) < min_length:
            continue
        extended = any(len(h) == len(g) + 1 and (h[1:] == g or h[:-1] == g) for h in frequent)
        if not extended:
            ids = tuple(f"{corpus}-{d:09d}" for d in sorted(docs[g]))
            out.append(ExpectedPhrase(tokens=g, df=len(docs[g]), occurrences=occ[g], doc_ids=ids))
    return _order(out)


# --- Synthetic 2 ------------------------------------------------------------------------

@dataclass(frozen=True)
class Synthetic2Plan:
    """starts, lengths: int64 (n_phrases,) windows of B; :meth:`doc` gives a document's phrases."""

    seed: int
    base_length: int
    starts: np.ndarray
    lengths: np.ndarray
    phrases_per_doc: int

    def doc(self, d: int) -> list[int]:
        """Phrase indices of document ``d``, in order (the first slot is d mod n_phrases)."""
        n_phrases = int(self.starts.shape[0])
        r = np.random.default_rng([self.seed, 22, d])
        ks = [d % n_phrases] + r.integers(0, n_phrases, size=self.phrases_per_doc - 1).tolist()
        return [ks[j] for j in r.permutation(len(ks)).tolist()]


def _synthetic2_plan(n_docs: int, seed: int, n_phrases: int, phrases_per_doc: int,
                     max_phrase_length: int, min_phrase_length: int, base_length: int | None) -> Synthetic2Plan:
    _check("n_docs", n_docs, 1)
    _check("n_phrases", n_phrases, 1)
    _check("phrases_per_doc", phrases_per_doc, 1)
    _check("min_phrase_length", min_phrase_length, 2)
    _check("max_phrase_length", max_phrase_length, min_phrase_length)
    if base_length is None:
        base_length = max_phrase_length + max_phrase_length // 2
    _check("base_length", base_length, max_phrase_length)
    rng = np.random.default_rng([seed, 21])
    lengths = np.round(np.linspace(max_phrase_length, min_phrase_length, n_phrases)).astype(np.int64)
    starts = (rng.random(n_phrases) * (base_length - lengths + 1)).astype(np.int64)
    return Synthetic2Plan(seed, base_length, starts, lengths, phrases_per_doc)


def generate_synthetic2(n_docs: int, seed: int, n_phrases: int = 300, phrases_per_doc: int = 8,
                        max_phrase_length: int = 120, min_phrase_length: int = 8,
                        base_length: int | None = None) -> Iterator[dict]:
    """Stream Synthetic 2 (see module docstring)."""
    plan = _synthetic2_plan(n_docs, seed, n_phrases, phrases_per_doc, max_phrase_length,
                            min_phrase_length, base_length)
    words = UniqueWords(seed + 0x52)
    base = words.words(0, plan.base_length)
    return _synthetic2_stream(n_docs, seed, plan, base, words)


def _synthetic2_stream(n_docs, seed, plan: Synthetic2Plan, base, words: UniqueWords) -> Iterator[dict]:
    n_bg = plan.base_length  # background word counter (B uses indices [0, base_length))
    phrases = [" ".join(base[s:s + n]) for s, n in zip(plan.starts.tolist(), plan.lengths.tolist())]
    for d in range(n_docs):
        r = np.random.default_rng([seed, 23, d])
        ks = plan.doc(d)
        gaps = r.integers(1, 5, size=len(ks) + 1).tolist()
        bg = words.words(n_bg, sum(gaps))
        n_bg += len(bg)
        pieces: list[tuple[int, str]] = []
        at = 0
        for j, k in enumerate(ks):
            pieces.append((-1, " ".join(bg[at:at + gaps[j]])))
            at += gaps[j]
            pieces.append((k, phrases[k]))
        pieces.append((-1, " ".join(bg[at:])))
        text, planted = _assemble(pieces)
        yield _doc("synthetic2", d, text, planted)


def synthetic2_expected(n_docs: int, seed: int, sigma: int, min_length: int, n_phrases: int = 300,
                        phrases_per_doc: int = 8, max_phrase_length: int = 120, min_phrase_length: int = 8,
                        base_length: int | None = None) -> list[ExpectedPhrase]:
    """The exact MCFP answer for ``generate_synthetic2`` with the same arguments.

    B's words are distinct and planted windows are separated by unique words, so a
    frequent phrase is an interval [a, b) of B, and df([a, b)) is the number of documents
    holding a window that contains it. With R_d(a) = the furthest end of a window of
    document d that starts at or before a (and ends after a), df([a, b)) = #{d: R_d(a) >= b};
    b_max(a) = the sigma-th largest R_d(a). [a, b_max(a)) is maximal iff
    b_max(a - 1) < b_max(a) (its left extension is not frequent).
    """
    _check("sigma", sigma, 2)
    _check("min_length", min_length, 2)
    plan = _synthetic2_plan(n_docs, seed, n_phrases, phrases_per_doc, max_phrase_length,
                            min_phrase_length, base_length)
    base = UniqueWords(seed + 0x52).words(0, plan.base_length)
    L = plan.base_length
    reach = np.zeros((n_docs, L), dtype=np.int32)   # R_d(a); 0 = no window covers a
    docs = [plan.doc(d) for d in range(n_docs)]
    for d, ks in enumerate(docs):
        for k in set(ks):
            s, e = int(plan.starts[k]), int(plan.starts[k] + plan.lengths[k])
            np.maximum(reach[d, s:e], e, out=reach[d, s:e])
    if n_docs < sigma:
        return []
    b_max = -np.partition(-reach, sigma - 1, axis=0)[sigma - 1]      # (L,)
    out = []
    ends = plan.starts + plan.lengths
    for a in range(L):
        b = int(b_max[a])
        if b - a < min_length or (a > 0 and int(b_max[a - 1]) >= b):
            continue
        holders = np.flatnonzero(reach[:, a] >= b)
        inside = (plan.starts <= a) & (ends >= b)
        occurrences = sum(int(inside[k]) for d in holders.tolist() for k in docs[d])
        out.append(ExpectedPhrase(tokens=tuple(base[a:b]), df=int(holders.shape[0]), occurrences=occurrences,
                                  doc_ids=tuple(f"synthetic2-{d:09d}" for d in holders.tolist())))
    return _order(out)
