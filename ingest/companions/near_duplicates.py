"""Collapse near-duplicate search hits by comparing their chunk-fingerprint Bloom filters.

Similarity (``measure``), from the popcounts ``t_A``, ``t_B`` and ``t_AB = |A & B|`` of two
filters of ``m`` bits:

* ``"jaccard"`` (default): the Jaccard index of the two chunk sets, estimated from the
  filters. A filter with ``t`` of ``m`` bits set holds about ``n(t) = -(m/k) ln(1 - t/m)``
  items (Swamidass & Baldi); ``|A u B| ~ n(t_A + t_B - t_AB)`` (the OR filter) and
  ``|A n B| ~ n(t_A) + n(t_B) - |A u B|``, so ``J = |A n B| / |A u B|``, clipped to [0, 1].
  ``k`` cancels out. Unlike the raw bit overlap it does not reward two unrelated, densely
  filled filters: identical filters give exactly 1, unrelated ones about 0.
* ``"containment"``: ``|A n B| / min(|A|, |B|)`` with the same estimates, for pages that
  include another page with small changes.
* ``"overlap"``: the raw ``t_AB / min(t_A, t_B)`` of set bits (the paper's "75 % of A's
  set bits matched"), biased upwards by chance collisions.

A filter with no bit set (a document without tokens) is similar to nothing (0.0).
Saturated filters (``t = m``) are counted as ``t = m - 1/2``.

:func:`collapse` groups hits in rank order: each hit joins the group of the first (best
ranked) representative it is similar enough to, else starts a new group; groups come in
rank order, the representative first. It is O(n^2) in the number of hits, vectorised:
the pairwise AND popcounts of all hits come from one broadcast AND and a popcount.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bloomspan.engine.sketches.chunk_fingerprint import decode_fingerprint

from ..base.errors import IngestConfigError

MEASURES = ("jaccard", "containment", "overlap")

Hit = Sequence[Any]  # (id, score, filter bytes or base64 str) — extra items are kept, ignored


_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def and_popcounts(filters: np.ndarray) -> np.ndarray:
    """int64 (n, n): ``|F_i & F_j|`` for uint8 filters (n, B); the diagonal holds the popcounts.

    Plain numpy (no BLAS, which can take tens of ms for this tiny product on a busy machine):
    the AND of all pairs by broadcasting, then a popcount (``np.bitwise_count`` on uint64
    words with numpy >= 2, a byte table otherwise).
    """
    f = np.ascontiguousarray(filters, dtype=np.uint8)
    if hasattr(np, "bitwise_count") and f.shape[1] % 8 == 0:
        w = f.view(np.uint64)
        return np.bitwise_count(w[:, None, :] & w[None, :, :]).sum(axis=-1, dtype=np.int64)
    return _POPCOUNT8[f[:, None, :] & f[None, :, :]].sum(axis=-1, dtype=np.int64)


def similarity_matrix(filters: np.ndarray, measure: str = "jaccard") -> np.ndarray:
    """float64 (n, n) pairwise similarities of uint8 filters of shape (n, m/8)."""
    if measure not in MEASURES:
        raise IngestConfigError("measure", measure, f"must be one of {', '.join(MEASURES)}")
    f = np.ascontiguousarray(filters, dtype=np.uint8)
    if f.ndim != 2:
        raise ValueError(f"filters: expected uint8 (n, m/8), got shape {f.shape}")
    m = f.shape[1] * 8
    inter = and_popcounts(f).astype(np.float64)
    pop = np.diag(inter).copy()
    a, b = pop[:, None], pop[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        if measure == "overlap":
            sim = inter / np.minimum(a, b)
        else:
            card = lambda t: -np.log1p(-np.minimum(t, m - 0.5) / m)  # noqa: E731  (n(t) * k / m)
            na, nb = card(a), card(b)
            nu = card(a + b - inter)
            ni = na + nb - nu
            sim = ni / nu if measure == "jaccard" else ni / np.minimum(na, nb)
    sim = np.clip(np.nan_to_num(sim, nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)
    empty = pop == 0
    sim[empty, :] = 0.0
    sim[:, empty] = 0.0
    return sim


def similarity(a_bits: bytes | str, b_bits: bytes | str, measure: str = "jaccard") -> float:
    """Similarity in [0, 1] of two fingerprints (raw bytes or base64) of equal length."""
    a, b = decode_fingerprint(a_bits), decode_fingerprint(b_bits)
    if len(a) != len(b) or not a:
        raise ValueError(f"fingerprints: lengths {len(a)} and {len(b)} differ or are zero")
    f = np.frombuffer(a + b, dtype=np.uint8).reshape(2, -1)
    return float(similarity_matrix(f, measure)[0, 1])


def collapse(hits: Sequence[Hit], threshold: float, measure: str = "jaccard") -> list[list[Hit]]:
    """Group near-duplicate hits; see the module docstring.

    ``hits``: sequences ``(id, score, fingerprint)``; rank = score descending, ties in input
    order. A hit whose fingerprint is None forms its own group. Returns groups (lists of the
    original hit objects), representative first, groups ordered by their representative.
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
        raise IngestConfigError("threshold", threshold, "must be a number in [0, 1] (0.5 to 0.8 is typical)")
    order = sorted(range(len(hits)), key=lambda i: -float(hits[i][1]))
    ranked = [hits[i] for i in order]
    raw = [None if h[2] is None else decode_fingerprint(h[2]) for h in ranked]
    present = [i for i, r in enumerate(raw) if r is not None]
    width = {len(raw[i]) for i in present}
    if len(width) > 1:
        bad = next(ranked[i][0] for i in present if len(raw[i]) != len(raw[present[0]]))
        raise ValueError(f"hit {bad!r}: fingerprint length differs from the others ({sorted(width)} bytes)")
    close = np.zeros((0, 0), dtype=bool)
    if present:
        mat = np.frombuffer(b"".join(raw[i] for i in present), dtype=np.uint8).reshape(len(present), -1)
        close = similarity_matrix(mat, measure) >= threshold
    row = {i: n for n, i in enumerate(present)}
    groups: list[list[Hit]] = []
    rep_rows = np.empty(len(present), dtype=np.int64)  # matrix rows of the representatives so far
    rep_group = np.empty(len(present), dtype=np.int64)  # their group numbers
    n_reps = 0
    for i, hit in enumerate(ranked):
        r = row.get(i)
        if r is not None and n_reps:
            ok = np.flatnonzero(close[r, rep_rows[:n_reps]])
            if ok.size:
                groups[int(rep_group[ok[0]])].append(hit)
                continue
        if r is not None:
            rep_rows[n_reps], rep_group[n_reps] = r, len(groups)
            n_reps += 1
        groups.append([hit])
    return groups


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class PrecisionRecall:
    """Pair-level scores: ``tp``/``fp``/``fn`` unordered pairs; precision 1.0 with no
    predicted pair, recall 1.0 with no true pair."""

    precision: float
    recall: float
    tp: int
    fp: int
    fn: int

    @property
    def f1(self) -> float:
        s = self.precision + self.recall
        return 0.0 if s == 0 else 2 * self.precision * self.recall / s


def pairs_from_groups(groups: Iterable[Iterable[Any]]) -> set[frozenset]:
    """Unordered id pairs within each group; group members are hits (id first) or ids."""
    out: set[frozenset] = set()
    for g in groups:
        ids = [m[0] if isinstance(m, (tuple, list)) else m for m in g]
        for x in range(len(ids)):
            for y in range(x + 1, len(ids)):
                out.add(frozenset((ids[x], ids[y])))
    return out


def precision_recall(predicted: Iterable[Iterable[Hashable]], truth: Iterable[Iterable[Hashable]]) -> PrecisionRecall:
    """Precision/recall of predicted duplicate pairs against true pairs (each an iterable of 2 ids)."""
    pred = {frozenset(p) for p in predicted}
    true = {frozenset(p) for p in truth}
    for p in pred | true:
        if len(p) != 2:
            raise ValueError(f"pair {sorted(p, key=repr)!r}: a pair needs two distinct ids")
    tp = len(pred & true)
    fp = len(pred - true)
    fn = len(true - pred)
    return PrecisionRecall(
        precision=tp / (tp + fp) if pred else 1.0,
        recall=tp / (tp + fn) if true else 1.0,
        tp=tp,
        fp=fp,
        fn=fn,
    )
