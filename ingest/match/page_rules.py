"""Page rules: what a site's page models cover beyond the phrases, on a batch's token arrays.

* :class:`SkeletonCover` (``kind="skeleton"`` records,
  :class:`~bloomspan.engine.templates.page_skeleton.PageSkeleton`, one per site): each
  page's lines are walked from its edges as in mining, with the lines the phrases covered as
  detected anchors, and the navigation between them is covered too.
* :class:`LineShapeCover` (``kind="line_shape"`` records,
  :class:`~bloomspan.engine.templates.line_shapes.LineShapeModel`, one per site and page edge):
  the lines at each page's edges whose fixed words repeat in a template shape are covered
  from their first fixed word to their last, as in mining.
* :class:`TitleNavCover` (``kind="title_nav"`` records,
  :class:`~bloomspan.engine.templates.title_nav.TitleNavModel`, one per site): the lines at
  each page's edges made of other pages' titles and navigation words are covered whole, by
  mining's rule (:func:`~bloomspan.engine.templates.title_nav.page_nav_lines`, composed here from
  its parts with each distinct token's key and pieces computed once: :func:`page_nav_lines_of`).

All take the phrases' :class:`~.spans.TemplateMatch` of each text and return them
with what they add.
"""
from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bloomspan.engine.templates.blocks import flags_per_span
from bloomspan.engine.templates.line_shapes import LineShapeModel, covered_positions, local_indices
from bloomspan.engine.templates.page_skeleton import PageSkeleton
from bloomspan.engine.templates.skeleton_set import SkeletonSet
from bloomspan.engine.templates.title_nav import (
    MAX_LINE_PIECES,
    NAV_WORDS,
    TITLE_LINES,
    TitleNavModel,
    is_title_nav,
    key_pieces,
    token_key,
    zone_line_indices,
)
from bloomspan.engine.text.slots import SLOT_TOKEN
from bloomspan.engine.text.vocabulary import UNKNOWN, Vocabulary

from .scopes import scope_names
from .spans import TemplateMatch, span_mask, with_batch_mask


class SkeletonCover:
    """The skeletons of a record set, keyed by integer token ids (line keys at ingest are then
    built from id arrays), with a vocabulary probe that maps a batch's distinct tokens to them."""

    def __init__(self, skeletons: Sequence[PageSkeleton]):
        self.skeletons = tuple(skeletons)
        self._token_ids = {t: i for i, t in enumerate(sorted(set().union(*(k.tokens() for k in self.skeletons))))}
        self._id_skeletons = [k.map_tokens(self._token_ids.__getitem__) for k in self.skeletons]
        self._skeleton_set = SkeletonSet(self._id_skeletons)
        tokens = list(self._token_ids)
        self._vocabulary = Vocabulary(capacity=max(len(tokens), 1))
        self._id_of = np.zeros(len(tokens), dtype=np.uint32)
        self._id_of[self._vocabulary.ids_of(tokens, add_new=True)] = np.arange(len(tokens), dtype=np.uint32)
        # Skeletons per scope (None: every page), so each page looks up only its own scopes'.
        self._skeletons_of: dict[str | None, list[int]] = {}
        for k, sk in enumerate(self._id_skeletons):
            self._skeletons_of.setdefault(sk.scope, []).append(k)

    def cover(self, scopes, results, line_start, tok_off, ids, words, is_number) -> list[TemplateMatch]:
        """Add the lines each page's skeleton covers (mining's walk, same kernel). ``ids`` are
        the batch's own token ids in its vocabulary ``words``, ``is_number`` its number tokens.
        Works on arrays: lines are token ranges of the batch, compared by hash
        (:meth:`~bloomspan.engine.templates.skeleton_set.SkeletonSet.cover_walks`: every skeleton's
        pages in one call)."""
        # Token -> the skeletons' integer id (a number token reads as the slot); a token no
        # skeleton holds gets an id of its own above theirs, so lines keep their identity for echoes.
        known = self._token_ids
        n_known = len(known)
        n_words = len(words)
        number = known.get(SLOT_TOKEN, n_known + n_words)  # every number is one token, as in mining
        probe = words.ids_in(self._vocabulary)
        found = probe != UNKNOWN
        as_id = np.arange(n_known, n_known + n_words, dtype=np.uint32)
        as_id[found] = self._id_of[probe[found]]
        as_id[is_number] = number
        tokens = as_id[ids] if ids.shape[0] else np.zeros(0, dtype=np.uint32)
        n_tok = int(tok_off[-1])
        # Lines of the batch (no line crosses a document: each document's first token starts one).
        starts = np.flatnonzero(line_start[:n_tok]).astype(np.int64)
        ends = np.append(starts[1:], n_tok).astype(np.int64)
        doc_lines = np.searchsorted(starts, tok_off).astype(np.int64)  # (D+1,) line offsets per document
        # Tokens the phrases cover, and per line whether they cover at least half of it.
        mask = np.zeros(n_tok, dtype=bool)
        if results:
            base = np.repeat(tok_off[:-1], [m.span_token_start.shape[0] for m in results])
            mask = span_mask(np.concatenate([m.span_token_start for m in results]) + base,
                             np.concatenate([m.span_token_end for m in results]) + base, n_tok)
        lengths = ends - starts
        detected = flags_per_span(mask, starts, ends) * 2 >= lengths
        # Lines of numbers only read as lines of slots: no anchor, as in mining (slots on only).
        numbers = flags_per_span(is_number[ids] if ids.shape[0] else np.zeros(0, bool), starts, ends) == lengths
        # Every (page, skeleton) walk of the batch in one kernel call.
        walk_page_of: list[int] = []
        walk_skeleton: list[int] = []
        everywhere = self._skeletons_of.get(None, [])
        for d in range(len(results)):
            if tok_off[d + 1] == tok_off[d]:
                continue
            for scope in dict.fromkeys(scope_names(scopes[d])):
                for k in self._skeletons_of.get(scope, ()) if scope is not None else ():
                    walk_page_of.append(d)
                    walk_skeleton.append(k)
            for k in everywhere:
                walk_page_of.append(d)
                walk_skeleton.append(k)
        added = self._skeleton_set.cover_walks(tokens, starts, ends, doc_lines, detected, numbers,
                                               np.asarray(walk_page_of, dtype=np.int64),
                                               np.asarray(walk_skeleton, dtype=np.int64))
        if not added.any():
            return results
        mask |= span_mask(starts[added], ends[added], n_tok)
        n_added = np.concatenate([[0], np.cumsum(added)])
        return with_batch_mask(results, mask, tok_off, n_added[doc_lines[1:]] > n_added[doc_lines[:-1]])



class LineShapeCover:
    """The line-shape models of a record set; ``slots``: numbers read as the slot, as mined."""

    def __init__(self, models: Sequence[LineShapeModel], slots: bool):
        self.models = tuple(models)
        self.slots = slots

    def cover(self, scopes, results, line_start, tok_off, ids, names, is_number) -> list[TemplateMatch]:
        """Add what each page's line-shape models cover (mining's :func:`model_coverage`, on the
        batch's tokens with numbers read as the slot when ``slots``, as mined)."""
        n_tok = int(tok_off[-1])
        slot_id = len(names)  # every number token is the one slot token, as in mining
        tokens = np.where(is_number[ids], slot_id, ids).astype(np.int64) if self.slots and n_tok else \
            ids.astype(np.int64)
        id_of = {t: i for i, t in enumerate(names)}
        if self.slots:
            id_of[SLOT_TOKEN] = slot_id
        starts = np.flatnonzero(line_start[:n_tok]).astype(np.int64)
        ends = np.append(starts[1:], n_tok).astype(np.int64)
        doc_lines = np.searchsorted(starts, tok_off).astype(np.int64)
        mask = np.zeros(n_tok, dtype=bool)
        # The batch's pages per scope, once: each model then reads only its own pages' edge lines.
        pages_of: dict[str | None, list[int]] = {}
        for d in range(len(results)):
            if tok_off[d + 1] > tok_off[d]:
                for scope in (None, *scope_names(scopes[d])):
                    pages_of.setdefault(scope, []).append(d)
        local = np.full(n_tok, -1, dtype=np.int32)  # filled at a model's edge tokens only, reset after
        for model in self.models:
            docs = pages_of.get(model.scope)
            if not docs:
                continue
            counts = np.asarray([doc_lines[d + 1] - doc_lines[d] for d in docs], dtype=np.int64)
            # the edge lines of each page and the line beside them, no others: zone_lines needs
            # to see that a page holds more lines than its edge (a shorter page has no zone)
            take = np.minimum(counts, model.edge_lines + 1)
            first = doc_lines[docs] if model.edge == "start" else doc_lines[np.asarray(docs) + 1] - take
            lines = (np.repeat(first, take) + np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take))
            page_lines = np.concatenate([[0], np.cumsum(take)]).astype(np.int64)
            lens = ends[lines] - starts[lines]
            at = np.repeat(starts[lines], lens) + np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
            fixed_ids = np.asarray([id_of.get(t, -1) for t in model.fixed], dtype=np.int64)
            local[at] = local_indices(tokens[at], fixed_ids)
            mask[covered_positions(model, local, starts[lines], ends[lines], page_lines)] = True
            local[at] = -1
        if not mask.any():
            return results
        out = []
        for d, match in enumerate(results):
            a, b = int(tok_off[d]), int(tok_off[d + 1])
            if not mask[a:b].any():
                out.append(match)
                continue
            out.append(match.with_mask(match.token_mask() | mask[a:b]))
        return out


# Distinct token strings whose key and pieces a TitleNavCover keeps between batches; a cache is
# emptied when it holds more (a crawl's zone lines reuse a few hundred thousand tokens at most).
TOKEN_FACTS_MAX = 1 << 18


class NameEdges:
    """A model's names, sorted forwards and backwards, to tell in a bisection whether a string
    starts (ends) one of them (:func:`could_be_nav`)."""

    def __init__(self, names):
        self.names = frozenset(names)
        self._forward = sorted(self.names)
        self._backward = sorted(n[::-1] for n in self.names)

    def starts_one(self, piece: str) -> bool:
        """Whether some name starts with ``piece``: the first name not below it does if any does."""
        i = bisect.bisect_left(self._forward, piece)
        return i < len(self._forward) and self._forward[i].startswith(piece)

    def ends_one(self, piece: str) -> bool:
        """Whether some name ends with ``piece``."""
        back = piece[::-1]
        i = bisect.bisect_left(self._backward, back)
        return i < len(self._backward) and self._backward[i].startswith(back)


def could_be_nav(first_piece: str, last_piece: str, names: NameEdges, own_starts: Callable[[str], bool],
                 own_ends: Callable[[str], bool]) -> bool:
    """False only where :func:`~bloomspan.engine.templates.title_nav.is_title_nav` of a line whose
    pieces open with ``first_piece`` and close with ``last_piece`` is False, read from those two
    pieces alone (``names.names`` the model's names; ``own_starts(p)`` / ``own_ends(p)``: whether
    one of the page's own title keys starts / ends with ``p``, asked only where the names leave it
    open). Navigation splits all of a line's pieces into steps, each a navigation word (one piece)
    or a name of ``names | own`` (the concatenation of consecutive pieces). The first step holds
    the first piece: it is a navigation word, or it starts the step's name. The last step likewise
    ends with the last piece."""
    return ((first_piece in NAV_WORDS or names.starts_one(first_piece) or own_starts(first_piece))
            and (last_piece in NAV_WORDS or names.ends_one(last_piece) or own_ends(last_piece)))


@dataclass(frozen=True)
class LineEdges:
    """A page's lines read from their edges, for :func:`page_nav_lines_of` to refuse a zone line
    from two of its pieces: ``pieces(i)`` the first piece of line i's first keyed token and the
    last piece of its last one (None: no keyed token); ``key_start(i, n)`` / ``key_end(i, n)`` a
    prefix / suffix of line i's key of at least ``n`` characters, or the whole key (the keys of
    its first / last tokens joined); ``names`` the model's names as :class:`NameEdges`."""

    pieces: Callable[[int], tuple[str, str] | None]
    key_start: Callable[[int, int], str]
    key_end: Callable[[int, int], str]
    names: NameEdges


def page_nav_lines_of(n_lines: int, line_keys, line_pieces, names, edge_lines: int,
                      edges: LineEdges | None = None) -> list[int]:
    """:func:`~bloomspan.engine.templates.title_nav.page_nav_lines` with line i given as its tokens'
    keys (``line_keys(i)``) and, asked only where the rule reads them, their non-empty pieces in
    order (``line_pieces(i)``, one tuple per token): the same zone, first key, own titles and
    :func:`~bloomspan.engine.templates.title_nav.is_title_nav` test, ``line_key`` being the keys
    joined. A token with a key has at least one piece, so a line of more than
    :data:`~bloomspan.engine.templates.title_nav.MAX_LINE_PIECES` keyed tokens has more pieces
    than that and is not navigation, pieces unread. With ``edges``, a zone line that
    :func:`could_be_nav` refuses is not navigation, its other tokens unread, and the page's title
    lines are read at their edges for it (a prefix of a key starts with ``p`` exactly when the key
    does, once it is as long as ``p``), whole only for a line it lets through: a stripped page
    brings lines of content into its zone and to its top, whose tokens the cover has mostly never
    keyed. Equal to mining's rule by construction; a property test compares the two."""
    zone = zone_line_indices(n_lines, edge_lines)
    if not zone:
        return []
    title_lines = range(min(TITLE_LINES, n_lines))

    @functools.cache
    def first() -> str:
        return "".join(line_keys(0))

    @functools.cache
    def own() -> frozenset[str]:
        return frozenset("".join(line_keys(i)) for i in title_lines)

    def own_starts(p: str) -> bool:
        return any(edges.key_start(i, len(p)).startswith(p) for i in title_lines)

    def own_ends(p: str) -> bool:
        return any(edges.key_end(i, len(p)).endswith(p) for i in title_lines)
    out = []
    for i in zone:
        if i == 0:
            continue
        if edges is not None:
            ends = edges.pieces(i)
            if ends is None or not could_be_nav(ends[0], ends[1], edges.names, own_starts, own_ends):
                continue
        keys = line_keys(i)
        if "".join(keys) == first() or sum(1 for k in keys if k) > MAX_LINE_PIECES:
            continue
        if is_title_nav([p for ps in line_pieces(i) for p in ps], names, own()):
            out.append(i)
    return out


_NO_MODEL = object()  # the scope of a page no title-navigation model applies to
EDGE_PEEK = 4  # tokens of a line's edge read for its first (last) keyed token before the whole line


class TitleNavCover:
    """The title-navigation models of a record set, one per site (scope)."""

    def __init__(self, models: Sequence[TitleNavModel]):
        self.models = {m.scope: m for m in models}
        self._edges = {m.scope: NameEdges(m.name_set) for m in models}
        self._keys: dict[str, str] = {}  # token string -> token_key
        self._pieces: dict[str, tuple[str, ...]] = {}  # token string -> its non-empty token_pieces

    def cover(self, scopes, results, line_start, tok_off, ids, names) -> list[TemplateMatch]:
        """Add the title-navigation lines of each page whose scopes name a model's site
        (``names``: the batch vocabulary's token strings, ``ids`` the batch's token ids)."""
        n_tok = int(tok_off[-1])
        starts = np.flatnonzero(line_start[:n_tok]).astype(np.int64)
        bounds = np.append(starts, n_tok).tolist()
        doc_lines = np.searchsorted(starts, tok_off).tolist()
        keys, pieces = self._keys, self._pieces
        if len(keys) > TOKEN_FACTS_MAX:
            keys.clear()
        if len(pieces) > TOKEN_FACTS_MAX:
            pieces.clear()

        def key_of(t: int) -> str:
            s = names[t]
            k = keys.get(s)
            if k is None:
                k = keys[s] = token_key(s)
            return k

        def pieces_of(t: int) -> tuple[str, ...]:
            s = names[t]
            p = pieces.get(s)
            if p is None:
                p = pieces[s] = key_pieces(key_of(t))
            return p

        def line_keys(li: int) -> list[str]:
            return [key_of(t) for t in ids[bounds[li]:bounds[li + 1]].tolist()]

        def line_pieces(li: int) -> list[tuple[str, ...]]:
            return [pieces_of(t) for t in ids[bounds[li]:bounds[li + 1]].tolist()]

        def keyed(t: list[int]) -> int | None:
            return next((x for x in t if key_of(x)), None)

        def edge_pieces(li: int) -> tuple[str, str] | None:
            a, b = bounds[li], bounds[li + 1]  # a line's edge tokens are mostly keyed: a few read first
            head = keyed(ids[a:min(b, a + EDGE_PEEK)].tolist())
            if head is None and (b - a <= EDGE_PEEK or (head := keyed(ids[a:b].tolist())) is None):
                return None
            tail = keyed(ids[max(a, b - EDGE_PEEK):b][::-1].tolist())
            if tail is None:
                tail = keyed(ids[a:b][::-1].tolist())
            return pieces_of(head)[0], pieces_of(tail)[-1]

        def key_start(li: int, n: int) -> str:
            key, a, b = "", bounds[li], bounds[li + 1]
            while a < b and len(key) < n:
                key += key_of(int(ids[a]))
                a += 1
            return key

        def key_end(li: int, n: int) -> str:
            key, a, b = "", bounds[li], bounds[li + 1]
            while a < b and len(key) < n:
                b -= 1
                key = key_of(int(ids[b])) + key
            return key
        out = []
        for d, match in enumerate(results):
            scope = next((s for s in (None, *scope_names(scopes[d])) if s in self.models), _NO_MODEL)
            model = self.models.get(scope)
            first = doc_lines[d]
            found = [] if model is None else page_nav_lines_of(doc_lines[d + 1] - first,
                                                               lambda i, first=first: line_keys(first + i),
                                                               lambda i, first=first: line_pieces(first + i),
                                                               model.name_set, model.edge_lines,
                                                               LineEdges(lambda i, first=first: edge_pieces(first + i),
                                                                         lambda i, n, first=first: key_start(first + i, n),
                                                                         lambda i, n, first=first: key_end(first + i, n),
                                                                         self._edges[scope]))
            if not found:
                out.append(match)
                continue
            a = int(tok_off[d])
            mask = match.token_mask().copy()
            for i in found:
                mask[bounds[first + i] - a:bounds[first + i + 1] - a] = True
            out.append(match.with_mask(mask))
        return out
