"""Line-shape templates: navigation lines at a page's edges whose fixed words repeat, in order,
while the words between them change on every page.

Texinfo's "Next: X, Previous: Y, Up: Z [Contents][Index]" bar and DocBook's "Prev Up Next"
tables name other pages, so no whole line repeats and neither the block miner nor the page
skeleton (:mod:`.page_skeleton`) has an anchor. What does repeat is the line's *shape*:

* **zone**: the first (``edge = "start"``) or last (``"end"``) :data:`EDGE_LINES` lines of a
  page. Chrome sits at a page's edges; content sits between them. A page of no more lines
  than that has no zone (a one-line document is all content as far as edges can tell).
* **fixed tokens** of a group (a site) and zone: tokens in the zone of at least
  :data:`FIXED_FRACTION` of the group's pages, and of at least ``sigma`` of them
  (``sigma = group_sigma(pages)``, the other passes' threshold).
* **shape** of a zone line: its fixed tokens in order. The line *qualifies* when it holds at
  least :data:`MIN_FIXED` fixed tokens, no more than ``max_gap`` other tokens between two
  consecutive ones (``TemplateConfig.line_shape_gap``), and at least one such token: fixed
  words in one run are a repeated phrase, which the phrase passes judge, not a bar.
* a **line-shape template** is a shape of qualifying lines on at least ``sigma`` pages of the
  group, in at least two of its URL sections when the group spans several (chrome is the
  same across a site; a phrase one section repeats is that section's content).

A qualifying line with a template shape is covered from its first fixed token to its last:
the variable words between fixed ones are covered, the words before the first and after the
last are not (nothing on the line bounds them).

Mining and ingest apply a group's models with the same function (:func:`cover_shape_lines`)
on tokens mapped to the model's own fixed-token indices, so the cleaner covers exactly what
the run reported. :class:`LineShapeModel` is one group's zone; its record is kind
``"line_shape"``, ``version`` :data:`RECORD_VERSION`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from bloomspan.engine.text.slots import SLOT_ID, SLOT_TOKEN

from .model_record import check_model_record

EDGE_LINES = 3  # lines of a page's start (and end) that are its edge zone
# Fixed tokens a qualifying line holds. Two fixed words around a changing one read as a heading
# of repeated structure ("Topic 4 alpha") as often as navigation; a bar links several pages.
MIN_FIXED = 3
# Share of a group's pages whose zone holds a fixed token (the page skeleton's anchor share,
# SkeletonConfig.anchor_fraction): chrome words are on nearly every page, words of page titles
# on fewer, and a title word taken as fixed would split one shape into many.
FIXED_FRACTION = 0.7
RECORD_VERSION = 1
EDGES = ("start", "end")
NOT_FIXED = -1
_MASK = (1 << 64) - 1
_HASH_BASE = 0x100000001B3  # odd: multiplication by it is a bijection modulo 2**64
_HASH_LEN = 0x9E3779B97F4A7C15


@dataclass(frozen=True, kw_only=True)
class LineShapeModel:
    """One group's (site's) line shapes in one edge zone.

    scope:     the group's name (None: a corpus without groups); edge: "start" or "end".
    fixed:     the fixed tokens (token ids in mining, strings in a record); a shape refers to
               them by index into this tuple.
    shapes:    the template shapes, each a tuple of indices into ``fixed``.
    max_gap:   most variable tokens between two fixed tokens of a qualifying line.
    edge_lines, min_fixed: the zone size and fixed-token minimum it was mined with.
    sigma, documents: the group's threshold and page count (for reports).
    """

    scope: str | None
    edge: str
    fixed: tuple
    shapes: tuple[tuple[int, ...], ...]
    max_gap: int
    edge_lines: int = EDGE_LINES
    min_fixed: int = MIN_FIXED
    sigma: int = 0
    documents: int = 0
    _keys: np.ndarray = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.edge not in EDGES:
            raise ValueError(f"line_shape edge={self.edge!r}: must be 'start' or 'end'")
        for name, low in (("max_gap", 0), ("edge_lines", 1), ("min_fixed", 1)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < low:
                raise ValueError(f"line_shape {name}={v!r}: must be an integer >= {low}")
        n = len(self.fixed)
        for s in self.shapes:
            if len(s) < self.min_fixed or any(not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n for i in s):
                raise ValueError(f"line_shape shape {list(s)!r}: must hold >= {self.min_fixed} indices into "
                                 f"the {n} fixed tokens")
        object.__setattr__(self, "_keys", np.sort(np.asarray([shape_key(s) for s in self.shapes], dtype=np.uint64)))

    @property
    def keys(self) -> np.ndarray:
        """uint64 (S,): the shapes' keys (:func:`shape_key`), sorted."""
        return self._keys

    def to_record(self, token: Callable[[int], str]) -> dict:
        """JSON form (kind "line_shape"), fixed tokens as strings (``token``: id -> string; the
        slot id as :data:`~bloomspan.engine.text.slots.SLOT_TOKEN`) in string order and the
        shapes as indices into that list, ascending: the same record whatever ids the tokens
        had in mining (a model's fixed tokens are in id order, and ids depend on the corpus)."""
        words = [SLOT_TOKEN if int(t) == SLOT_ID else token(int(t)) for t in self.fixed]
        order = sorted(range(len(words)), key=words.__getitem__)
        place = {old: new for new, old in enumerate(order)}
        shapes = sorted([place[i] for i in s] for s in self.shapes)
        return {"kind": "line_shape", "version": RECORD_VERSION, "scope": self.scope, "edge": self.edge,
                "fixed": [words[i] for i in order], "shapes": shapes,
                "max_gap": self.max_gap, "edge_lines": self.edge_lines, "min_fixed": self.min_fixed,
                "sigma": self.sigma, "documents": self.documents}

    @classmethod
    def from_record(cls, rec: Mapping, where: str = "record") -> LineShapeModel:
        """Read :meth:`to_record`'s form, every key required; a record of another version is
        refused (naming it)."""
        check_model_record(rec, "line_shape", RECORD_VERSION,
                           ("edge", "fixed", "shapes", "max_gap", "edge_lines", "min_fixed", "sigma", "documents"), where)
        scope, fixed, shapes = rec.get("scope"), rec["fixed"], rec["shapes"]
        if scope is not None and not isinstance(scope, str):
            raise ValueError(f"{where}: line_shape scope={scope!r}: must be a string (a site or section) or null")
        if not isinstance(fixed, list) or not all(isinstance(t, str) for t in fixed):
            raise ValueError(f"{where}: line_shape fixed={fixed!r}: must be a list of token strings")
        if not isinstance(shapes, list) or not all(isinstance(sh, list) for sh in shapes):
            raise ValueError(f"{where}: line_shape shapes={shapes!r}: must be a list of lists of indices into fixed")
        counts = {"max_gap": (rec["max_gap"], 0), "edge_lines": (rec["edge_lines"], 1),
                  "min_fixed": (rec["min_fixed"], 1), "sigma": (rec["sigma"], 0), "documents": (rec["documents"], 0)}
        for name, (v, low) in counts.items():
            if not _is_count(v, low):  # the matcher's kernels take int64: a larger value fails there
                raise ValueError(f"{where}: line_shape {name}={v!r}: must be an integer from {low} to 2**63-1")
        try:
            return cls(scope=scope, edge=rec["edge"], fixed=tuple(fixed), shapes=tuple(tuple(sh) for sh in shapes),
                       **{name: v for name, (v, _) in counts.items()})
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None


def _is_count(v, low: int) -> bool:
    """``v`` is an integer from ``low`` to int64's largest (not a bool)."""
    return isinstance(v, int) and not isinstance(v, bool) and low <= v <= 2**63 - 1


def shape_key(indices: Sequence[int]) -> int:
    """The uint64 key of a shape (indices into a model's fixed tokens), as the kernel computes
    it: the polynomial ``sum((i_k + 1) * B**(n-1-k))`` modulo 2**64, mixed with the length."""
    h = 0
    for i in indices:
        h = (h * _HASH_BASE + int(i) + 1) & _MASK
    return (h ^ (len(indices) * _HASH_LEN)) & _MASK


@njit(cache=True, nogil=True)
def _line_fixed_kernel(local, starts, ends, max_gap, min_fixed, n_fixed, first, last):
    """Per line l (tokens [starts[l], ends[l]) of ``local``: n_fixed[l] its fixed tokens, and
    first[l]/last[l] the first and last of them where it qualifies (>= min_fixed fixed tokens,
    no more than max_gap others between two of them, at least one other token between its first
    and its last), -1 elsewhere."""
    for li in range(starts.shape[0]):
        count = 0
        prev = -1
        ok = True
        f0 = -1
        for i in range(starts[li], ends[li]):
            if local[i] < 0:
                continue
            if prev >= 0 and i - prev - 1 > max_gap:
                ok = False
            if f0 < 0:
                f0 = i
            prev = i
            count += 1
        n_fixed[li] = count
        if ok and count >= min_fixed and prev - f0 + 1 > count:
            first[li] = f0
            last[li] = prev
        else:
            first[li] = -1
            last[li] = -1


@njit(cache=True, nogil=True)
def _variant_keys_kernel(local, first, last, n_fixed, out_start, min_fixed, base, mix, keys, drops):
    """Per qualifying line l (first[l] >= 0): at out_start[l] its shape's key (drops = -1), then,
    when it has more than min_fixed fixed tokens, the key of the shape without its k-th fixed
    token for each k (drops = k). Keys as :func:`shape_key` (uint64 arithmetic wraps)."""
    for li in range(first.shape[0]):
        if first[li] < 0:
            continue
        n = n_fixed[li]
        seq = np.empty(n, dtype=np.int64)
        k = 0
        for i in range(first[li], last[li] + 1):
            if local[i] >= 0:
                seq[k] = local[i]
                k += 1
        pre = np.zeros(n + 1, dtype=np.uint64)  # pre[k]: hash of seq[:k]
        for k in range(n):
            pre[k + 1] = pre[k] * base + np.uint64(seq[k] + 1)
        power = np.ones(n + 1, dtype=np.uint64)
        for k in range(n):
            power[k + 1] = power[k] * base
        o = out_start[li]
        keys[o] = pre[n] ^ (np.uint64(n) * mix)
        drops[o] = -1
        if n - 1 >= min_fixed:
            for k in range(n):
                # seq without seq[k]: the prefix shifted past the suffix, plus the suffix.
                suffix = pre[n] - pre[k + 1] * power[n - k - 1]
                h = pre[k] * power[n - k - 1] + suffix
                keys[o + 1 + k] = h ^ (np.uint64(n - 1) * mix)
                drops[o + 1 + k] = k


def shape_lines(local: np.ndarray, starts: np.ndarray, ends: np.ndarray, max_gap: int, min_fixed: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The shapes of the lines [starts, ends) (int64 (L,)) of ``local`` (int32 (W,): fixed-token
    index or -1), by the numba kernels; :func:`shape_lines_reference` is their plain twin.

    Returns ``(first, last, key_line, keys, drops)``: first/last int64 (L,) the first and last
    fixed token of each qualifying line (-1 elsewhere); per key of a qualifying line (its
    shape, then its shape without one fixed token, when that keeps >= min_fixed): key_line
    int64 (K,) the line, keys uint64 (K,), drops int64 (K,) the fixed token left out (-1: none).
    """
    local = np.ascontiguousarray(local, dtype=np.int32)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    n = starts.shape[0]
    n_fixed = np.zeros(n, dtype=np.int64)
    first = np.full(n, -1, dtype=np.int64)
    last = np.full(n, -1, dtype=np.int64)
    _line_fixed_kernel(local, starts, ends, int(max_gap), int(min_fixed), n_fixed, first, last)
    ok = first >= 0
    per_line = np.where(ok, 1 + np.where(n_fixed - 1 >= min_fixed, n_fixed, 0), 0)
    out_start = np.zeros(n, dtype=np.int64)
    np.cumsum(per_line[:-1], out=out_start[1:]) if n else None
    total = int(per_line.sum())
    keys = np.zeros(total, dtype=np.uint64)
    drops = np.zeros(total, dtype=np.int64)
    _variant_keys_kernel(local, first, last, n_fixed, out_start, int(min_fixed), np.uint64(_HASH_BASE),
                         np.uint64(_HASH_LEN), keys, drops)
    return first, last, np.repeat(np.arange(n, dtype=np.int64), per_line), keys, drops


def line_shape_of(local: Sequence[int], first: int, last: int) -> list[int]:
    """The fixed-token indices of a line between its first and last fixed token."""
    return [int(x) for x in local[first:last + 1] if x >= 0]


def shape_lines_reference(local: Sequence[int], starts: Sequence[int], ends: Sequence[int], max_gap: int,
                          min_fixed: int) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """Plain twin of :func:`shape_lines`: each line's fixed positions, its gaps, its shapes."""
    first, last, key_line, keys, drops = [], [], [], [], []
    for li, (a, b) in enumerate(zip(starts, ends)):
        pos = [i for i in range(a, b) if local[i] >= 0]
        ok = (len(pos) >= min_fixed and all(q - p - 1 <= max_gap for p, q in zip(pos, pos[1:]))
              and any(q - p > 1 for p, q in zip(pos, pos[1:])))
        first.append(pos[0] if ok else -1)
        last.append(pos[-1] if ok else -1)
        if not ok:
            continue
        seq = [local[i] for i in pos]
        variants = [(-1, seq)] + ([(k, seq[:k] + seq[k + 1:]) for k in range(len(seq))]
                                  if len(seq) - 1 >= min_fixed else [])
        for k, v in variants:
            key_line.append(li)
            keys.append(shape_key(v))
            drops.append(k)
    return first, last, key_line, keys, drops


def zone_lines(line_starts: np.ndarray, page_lines: np.ndarray, edge: str, edge_lines: int) -> np.ndarray:
    """int64 (Z,): indices of the lines in each page's zone, page by page. ``page_lines`` int64
    (P+1,): the pages' line ranges in ``line_starts`` (B,). A page of at most ``edge_lines``
    lines has no zone: its edge would be all of it, content included (a document stored as one
    line is the common case), and chrome is told apart by sitting beside content."""
    counts = np.diff(page_lines)
    take = np.where(counts > edge_lines, np.minimum(counts, edge_lines), 0)
    first = page_lines[:-1] if edge == "start" else page_lines[1:] - take
    if take.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    within = np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take)
    return (np.repeat(first, take) + within).astype(np.int64)


def local_indices(tokens: np.ndarray, fixed_ids: np.ndarray) -> np.ndarray:
    """int32 (W,): each token's index in ``fixed_ids`` (int64 (F,), the model's fixed tokens as
    ids of ``tokens``; -1 for one the text does not hold), or -1 for a token that is not fixed."""
    present = fixed_ids >= 0
    order = np.argsort(fixed_ids[present], kind="stable")
    sorted_ids = fixed_ids[present][order]
    local_of = np.flatnonzero(present)[order].astype(np.int32)
    local = np.full(tokens.shape[0], NOT_FIXED, dtype=np.int32)
    if sorted_ids.shape[0] and tokens.shape[0]:
        t = tokens.astype(np.int64)
        where = np.minimum(np.searchsorted(sorted_ids, t), sorted_ids.shape[0] - 1)
        hit = sorted_ids[where] == t
        local[hit] = local_of[where[hit]]
    return local


def cover_shape_lines(model_keys: np.ndarray, local: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                      max_gap: int, min_fixed: int, n_tokens: int) -> np.ndarray:
    """bool (W,) with ``W = n_tokens``: the tokens a model covers on the lines [starts, ends)
    (its zone lines): on each qualifying line whose shape, or its shape without one fixed
    token, is in ``model_keys`` (uint64, sorted), the tokens from its first fixed token to its
    last. Mining and ingest both cover through this function."""
    out = np.zeros(n_tokens + 1, dtype=np.int64)
    if starts.shape[0] == 0 or model_keys.shape[0] == 0:
        return out[:-1].astype(bool)
    first, last, key_line, keys, _drops = shape_lines(local, starts, ends, max_gap, min_fixed)
    pos = np.minimum(np.searchsorted(model_keys, keys), model_keys.shape[0] - 1)
    hit = np.zeros(starts.shape[0], dtype=bool)
    hit[key_line[model_keys[pos] == keys]] = True
    np.add.at(out, first[hit], 1)
    np.add.at(out, last[hit] + 1, -1)
    return np.cumsum(out[:-1]) > 0


@dataclass
class LineShapeResult:
    """coverage bool (W,); models: one per group and edge that has template shapes; stats."""

    coverage: np.ndarray
    models: list[LineShapeModel]
    stats: dict


def _pages_per_value(values: np.ndarray, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(unique values, distinct pages per value)`` of (value, page) pairs."""
    if values.shape[0] == 0:
        return values, np.zeros(0, dtype=np.int64)
    pairs = np.unique(np.stack([values.astype(np.uint64), pages.astype(np.uint64)], axis=1), axis=0)
    uniq, counts = np.unique(pairs[:, 0], return_counts=True)
    return uniq, counts


def mine_group_shapes(tokens: np.ndarray, line_starts: np.ndarray, line_ends: np.ndarray, page_lines: np.ndarray,
                      sections: np.ndarray, sigma: int, max_gap: int, scope: str | None
                      ) -> tuple[list[LineShapeModel], np.ndarray]:
    """The models of one group, and the tokens they cover (bool (W,)).

    tokens uint32 (W,) of the corpus; line_starts/line_ends int64 (L,): the group's lines,
    page by page; page_lines int64 (P+1,): each page's lines; sections int64 (P,): each
    page's URL section (one value for all: the group has one section).
    """
    n_pages = page_lines.shape[0] - 1
    covered = np.zeros(tokens.shape[0], dtype=bool)
    models: list[LineShapeModel] = []
    need_sections = min(2, np.unique(sections).shape[0])
    for edge in EDGES:
        zone = zone_lines(line_starts, page_lines, edge, EDGE_LINES)
        if zone.shape[0] == 0:
            continue
        page_of_line = np.searchsorted(page_lines, zone, side="right") - 1
        lens = line_ends[zone] - line_starts[zone]
        idx = np.repeat(line_starts[zone], lens) + (np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens))
        tok_page = np.repeat(page_of_line, lens)
        ids, df = _pages_per_value(tokens[idx], tok_page)
        fixed_ids = ids[df >= max(sigma, math.ceil(round(FIXED_FRACTION * n_pages, 12)))].astype(np.int64)
        if fixed_ids.shape[0] < MIN_FIXED:
            continue
        local_zone = local_indices(tokens[idx], fixed_ids)
        zone_starts = np.cumsum(lens) - lens
        first, last, key_line, keys, drops = shape_lines(local_zone, zone_starts, zone_starts + lens, max_gap,
                                                         MIN_FIXED)
        if keys.shape[0] == 0:
            continue
        uniq, pages = _pages_per_value(keys, page_of_line[key_line])
        frequent = uniq[pages >= sigma]
        if need_sections > 1 and frequent.shape[0]:
            u2, n_sec = _pages_per_value(keys, sections[page_of_line[key_line]])
            frequent = np.intersect1d(frequent, u2[n_sec >= need_sections])
        if frequent.shape[0] == 0:
            continue
        # Each template shape as its fixed-token indices (from one line that has it).
        shapes = {}
        for j in np.flatnonzero(np.isin(keys, frequent)).tolist():
            k = int(keys[j])
            if k not in shapes:
                li = int(key_line[j])
                seq = line_shape_of(local_zone, int(first[li]), int(last[li]))
                if drops[j] >= 0:
                    del seq[int(drops[j])]
                shapes[k] = tuple(seq)
        model = LineShapeModel(scope=scope, edge=edge, fixed=tuple(int(t) for t in fixed_ids),
                               shapes=tuple(shapes[k] for k in sorted(shapes)), max_gap=max_gap,
                               sigma=int(sigma), documents=int(n_pages))
        models.append(model)
        covered |= model_coverage(model, local_indices(tokens, fixed_ids), line_starts, line_ends, page_lines)
    return models, covered


def model_coverage(model: LineShapeModel, local: np.ndarray, line_starts: np.ndarray, line_ends: np.ndarray,
                   page_lines: np.ndarray) -> np.ndarray:
    """bool (W,): what ``model`` covers on the pages of ``page_lines`` (int64 (P+1,), their lines
    in ``line_starts``/``line_ends`` int64 (L,)); ``local`` int32 (W,): each token's index among
    the model's fixed tokens or -1 (:func:`local_indices`; only the pages' edge lines are read)."""
    out = np.zeros(local.shape[0], dtype=bool)
    out[covered_positions(model, local, line_starts, line_ends, page_lines)] = True
    return out


def covered_positions(model: LineShapeModel, local: np.ndarray, line_starts: np.ndarray, line_ends: np.ndarray,
                      page_lines: np.ndarray) -> np.ndarray:
    """int64: the positions in ``local`` that ``model`` covers (:func:`model_coverage`'s True
    entries, ascending): the one rule mining and ingest both apply."""
    zone = zone_lines(line_starts, page_lines, model.edge, model.edge_lines)
    if zone.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    lens = line_ends[zone] - line_starts[zone]
    idx = np.repeat(line_starts[zone], lens) + (np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens))
    zone_starts = np.cumsum(lens) - lens
    cov = cover_shape_lines(model.keys, local[idx], zone_starts, zone_starts + lens, model.max_gap, model.min_fixed,
                            idx.shape[0])
    return idx[cov].astype(np.int64)


def mine_line_shapes(tokens: np.ndarray, doc_offsets: np.ndarray, block_offsets: np.ndarray,
                     groups: Sequence[str | None] | None, sections: Sequence[str | None] | None,
                     sigma_of: Callable[[int], int], max_gap: int) -> LineShapeResult:
    """Line-shape templates per group (``groups``: D names or None; None for all: the corpus
    is one group of scope None) with the group's sigma ``sigma_of(pages)``; ``sections``: D
    URL-section names (or None) for the cross-section rule. tokens uint32 (W,) (slots applied),
    doc_offsets int64 (D+1,), block_offsets int64 (B+1,)."""
    n_docs = doc_offsets.shape[0] - 1
    coverage = np.zeros(tokens.shape[0], dtype=bool)
    models: list[LineShapeModel] = []
    stats: dict = {}
    if max_gap is None or n_docs == 0:
        return LineShapeResult(coverage, models, stats)
    members: dict[str | None, list[int]] = {}
    for d in range(n_docs):
        g = None if groups is None else groups[d]
        if groups is None or g is not None:
            members.setdefault(g, []).append(d)
    doc_lines = np.searchsorted(block_offsets, doc_offsets).astype(np.int64)
    for g, docs in members.items():
        sigma = sigma_of(len(docs))
        if len(docs) < sigma:
            continue
        line_idx = np.concatenate([np.arange(doc_lines[d], doc_lines[d + 1]) for d in docs]).astype(np.int64)
        page_lines = np.concatenate([[0], np.cumsum([doc_lines[d + 1] - doc_lines[d] for d in docs])]).astype(np.int64)
        sec_names = [None if sections is None else sections[d] for d in docs]
        sec_index: dict = {}
        sec = np.asarray([sec_index.setdefault(s, len(sec_index)) for s in sec_names], dtype=np.int64)
        found, cov = mine_group_shapes(tokens, block_offsets[line_idx], block_offsets[line_idx + 1], page_lines, sec,
                                       sigma, max_gap, g)
        models.extend(found)
        coverage |= cov
        if found:
            stats[str(g)] = {m.edge: len(m.shapes) for m in found}
    return LineShapeResult(coverage, models, {"line_shape_groups": stats, "line_shape_tokens": int(coverage.sum())})
