"""Title navigation: lines at a page's edges made of other pages' titles and navigation words.

Previous/next/up bars and breadcrumbs name the neighbouring pages ("PrevUpChapter 12. Storage
ModelHomeNext", "Prev 7.3. Configuring the Network", "Home / Guide / Install"), so no two pages
share the line and neither the block miner, the page skeleton nor a line shape (:mod:`.line_shapes`,
which needs fixed words on most pages) has an anchor. The text holds the evidence: the words of
such a line, less a few fixed navigation words, are the titles of *other* pages of the same site.

* **titles** of a page: its first :data:`TITLE_LINES` lines (the detector knows no title
  field; a page may open with its title, or with a bar and then its title, as Texinfo's do),
  each of at most :data:`MAX_TITLE_TOKENS` tokens. A site's **names** are its pages' titles,
  each as its **key**: the line's letters and digits, lower-cased, without spaces or separators (the
  tokenizer drops "/", "»", "|"), so "7.3. Configuring the Network" is "73configuringthenetwork".
* **pieces** of a line: its tokens, each split where a navigation word of :data:`NAV_WORDS` is
  glued to its start or end ("prevupchapter" -> "prev", "up", "chapter"): generators write bars
  without spaces between the links' texts.
* **zone**: the first and last :data:`~.line_shapes.EDGE_LINES` lines of a page of more lines
  than that (the line-shape pass's edge zone; chrome sits at a page's edges).
* a zone line is **title navigation** when its pieces split wholly into navigation words and
  names, at least one name is not one of the page's own titles, and it holds a navigation word
  or at least two names. A page's first line, and any line with the same key, is never title
  navigation: it is the page's own title, naming itself (even when other titles spell it, as
  "Storage" and "Model" spell "Storage Model"); a line that is one other page's title alone,
  with no navigation word (a heading that is also a page's title), is content: precision wins.

Mining and ingest apply a site's model with the same function (:func:`page_nav_lines`) on the
token strings, so the cleaner covers exactly what the run reported. The record is kind
``"title_nav"``, version :data:`RECORD_VERSION`, one per site: a kind of its own, because it
carries a set of names and a rule over whole lines, not a phrase, a skeleton or a shape.
Everything here is plain Python over the edge lines only (a few lines per page); there is no
numba kernel, hence no twin.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .line_shapes import EDGE_LINES
from .model_record import check_model_record

RECORD_VERSION = 1
TITLE_LINES = 2  # lines at a page's start that may be its title
MAX_TITLE_TOKENS = 16  # a first line longer than this is a paragraph, not a title
MAX_LINE_PIECES = 48  # a zone line of more pieces is prose: it is never navigation
MIN_NAME_CHARS = 3  # a shorter key ("a", "12") names nothing reliably
# Navigation words of prev/next/up bars and breadcrumbs, lower-cased as the tokenizer writes
# them, in the languages of the sites we crawl. One constant: mining and ingest read it alike.
NAV_WORDS = frozenset({
    # English
    "prev", "previous", "next", "up", "home", "top", "index", "contents", "toc", "chapter",
    # French
    "précédent", "precedent", "précédente", "suivant", "suivante", "accueil", "sommaire", "haut",
    "retour", "chapitre", "début",
    # German
    "zurück", "zuruck", "weiter", "oben", "inhalt", "startseite", "kapitel", "vorherige", "nächste",
    # Spanish, Italian, Portuguese
    "anterior", "siguiente", "inicio", "arriba", "índice", "capítulo", "precedente", "successivo",
    "successiva", "indice", "próximo", "proximo",
    # Russian
    "пред", "предыдущая", "предыдущий", "след", "следующая", "следующий", "вверх", "наверх", "назад",
    "вперёд", "вперед", "главная", "содержание", "оглавление", "глава", "начало",
})
_NAV_LENGTHS = tuple(sorted({len(w) for w in NAV_WORDS}, reverse=True))


def token_key(token: str) -> str:
    """A token's letters and digits, lower-cased ("7.3" -> "73")."""
    return "".join(c for c in token.lower() if c.isalnum())


def line_key(tokens: Sequence[str]) -> str:
    """A line's key: its tokens' keys joined without spaces."""
    return "".join(token_key(t) for t in tokens)


def token_pieces(token: str) -> list[str]:
    """A token's key split where navigation words are glued to its start or end, longest word
    first ("prevupchapter" -> ["prev", "up", "chapter"], "modelhomenext" -> ["model", "home",
    "next"]); a token that is no such run stays one piece."""
    return list(key_pieces(token_key(token)))


def key_pieces(rest: str) -> tuple[str, ...]:
    """:func:`token_pieces` of a token whose key is ``rest`` (the cleaner keeps keys per distinct
    token). The first navigation word, longest first, that is shorter than what is left and
    starts (ends) it is taken off, until none does; of one length at most one word can start
    (end) it, so one set probe per word length finds it. A property test compares it with a
    scan of every word."""
    head: list[str] = []
    tail: list[str] = []
    changed = True
    while rest and changed:
        changed = False
        for n in _NAV_LENGTHS:
            if n < len(rest) and rest[:n] in NAV_WORDS:
                head.append(rest[:n])
                rest = rest[n:]
                changed = True
                break
        for n in _NAV_LENGTHS:
            if n < len(rest) and rest[-n:] in NAV_WORDS:
                tail.append(rest[-n:])
                rest = rest[:-n]
                changed = True
                break
    return (*head, *((rest,) if rest else ()), *tail[::-1])


def line_pieces(tokens: Sequence[str]) -> list[str]:
    """The pieces of a line (:func:`token_pieces` of each token, in order, empty ones dropped)."""
    return [p for t in tokens for p in token_pieces(t) if p]


def is_title_nav(pieces: Sequence[str], names: frozenset[str] | set[str], own: frozenset[str] | set[str]) -> bool:
    """Whether a line's pieces split wholly into navigation words and names (keys of ``names``
    or ``own``: the page's own titles count as names, a page mining never saw included), at
    least one name not in ``own``, with a navigation word or two names."""
    n = len(pieces)
    if n == 0 or n > MAX_LINE_PIECES:
        return False
    # states[i]: the (another page's name seen, navigation word seen, names seen capped at 2)
    # of the splits of pieces[:i]
    states: list[set[tuple[bool, bool, int]]] = [set() for _ in range(n + 1)]
    states[0].add((False, False, 0))
    for i in range(n):
        if not states[i]:
            continue
        if pieces[i] in NAV_WORDS:
            states[i + 1].update((other, True, count) for other, _nav, count in states[i])
        key = ""
        for j in range(i, n):
            key += pieces[j]
            if len(key) >= MIN_NAME_CHARS and (key in names or key in own):
                states[j + 1].update((other or key not in own, nav, min(count + 1, 2)) for other, nav, count in states[i])
    return any(other and (nav or count >= 2) for other, nav, count in states[n])


def zone_line_indices(n_lines: int, edge_lines: int = EDGE_LINES) -> list[int]:
    """The lines of a page of ``n_lines`` in its edge zone: the first and last ``edge_lines``
    (none when the page holds no more lines than that), ascending, each once."""
    if n_lines <= edge_lines:
        return []
    return sorted(set(range(edge_lines)) | set(range(n_lines - edge_lines, n_lines)))


def title_key(first_line: Sequence[str]) -> str | None:
    """A page's title key from its first line's token strings (:data:`MAX_TITLE_TOKENS` tokens
    at most, a key of :data:`MIN_NAME_CHARS` characters at least), or None."""
    if not 0 < len(first_line) <= MAX_TITLE_TOKENS:
        return None
    key = line_key(first_line)
    return key if len(key) >= MIN_NAME_CHARS else None


def page_nav_lines(n_lines: int, line_tokens: Callable[[int], Sequence[str]], names: frozenset[str] | set[str],
                   edge_lines: int = EDGE_LINES) -> list[int]:
    """The indices of a page's title-navigation lines (module docstring): a page of ``n_lines``
    lines, ``line_tokens(i)`` the token strings of its line i (only its first line and its zone
    are read). The one rule mining and ingest both apply."""
    zone = zone_line_indices(n_lines, edge_lines)
    if not zone:
        return []
    first = line_key(line_tokens(0))
    own = frozenset(line_key(line_tokens(i)) for i in range(min(TITLE_LINES, n_lines)))
    out = []
    for i in zone:
        tokens = line_tokens(i)
        if i > 0 and line_key(tokens) != first and is_title_nav(line_pieces(tokens), names, own):
            out.append(i)
    return out


@dataclass(frozen=True, kw_only=True)
class TitleNavModel:
    """One site's title navigation: ``names`` its pages' title keys (sorted), ``edge_lines``
    the zone size, ``documents`` the pages it was mined on (for reports)."""

    scope: str | None
    names: tuple[str, ...]
    edge_lines: int = EDGE_LINES
    documents: int = 0
    _names: frozenset = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.edge_lines, int) or isinstance(self.edge_lines, bool) or self.edge_lines < 1:
            raise ValueError(f"title_nav edge_lines={self.edge_lines!r}: must be an integer >= 1")
        if not isinstance(self.documents, int) or isinstance(self.documents, bool) or self.documents < 0:
            raise ValueError(f"title_nav documents={self.documents!r}: must be an integer >= 0")
        object.__setattr__(self, "_names", frozenset(self.names))

    @property
    def name_set(self) -> frozenset[str]:
        return self._names

    def to_record(self, token: Callable[[int], str] | None = None) -> dict:
        """JSON form (kind "title_nav"); ``token`` is not used (names are strings already)."""
        return {"kind": "title_nav", "version": RECORD_VERSION, "scope": self.scope, "names": list(self.names),
                "edge_lines": self.edge_lines, "documents": self.documents}

    @classmethod
    def from_record(cls, rec: Mapping, where: str = "record") -> TitleNavModel:
        """Read :meth:`to_record`'s form, every key required; a newer version is refused."""
        check_model_record(rec, "title_nav", RECORD_VERSION, ("names", "edge_lines", "documents"), where)
        scope, names = rec.get("scope"), rec["names"]
        if scope is not None and not isinstance(scope, str):
            raise ValueError(f"{where}: title_nav scope={scope!r}: must be a string (a site) or null")
        if not isinstance(names, list) or not all(isinstance(t, str) for t in names):
            raise ValueError(f"{where}: title_nav names={names!r}: must be a list of strings (title keys)")
        try:
            return cls(scope=scope, names=tuple(sorted(set(names))), edge_lines=rec["edge_lines"],
                       documents=rec["documents"])
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None


@dataclass
class TitleNavResult:
    """coverage bool (W,); models: one per group with names; stats."""

    coverage: np.ndarray
    models: list[TitleNavModel]
    stats: dict


def mine_title_nav(tokens: np.ndarray, doc_offsets: np.ndarray, block_offsets: np.ndarray,
                   groups: Sequence[str | None] | None, token_strings: Sequence[str], min_pages: int = 2
                   ) -> TitleNavResult:
    """Title-navigation models per group (``groups``: D names or None; None for all: the corpus
    is one group of scope None) of at least ``min_pages`` pages where the rule finds at least one
    line, and the tokens they cover. A group whose pages hold no such line gets no model: nothing
    on its pages is evidence of title navigation, and the cleaner would read every page's edge
    lines for it (a quarter of `clean`'s CPU on the generated crawl, whose sites have none).
    tokens uint32 (W,) ids into ``token_strings`` (numbers as written: no slots), doc_offsets
    int64 (D+1,), block_offsets int64 (B+1,)."""
    n_docs = doc_offsets.shape[0] - 1
    coverage = np.zeros(tokens.shape[0], dtype=bool)
    models: list[TitleNavModel] = []
    members: dict[str | None, list[int]] = {}
    for d in range(n_docs):
        g = None if groups is None else groups[d]
        if groups is None or g is not None:
            members.setdefault(g, []).append(d)
    doc_lines = np.searchsorted(block_offsets, doc_offsets).tolist()
    bounds = block_offsets.tolist()

    def line_tokens(li: int) -> list[str]:
        return [token_strings[t] for t in tokens[bounds[li]:bounds[li + 1]].tolist()]
    per_group: dict[str, dict] = {}
    for g, docs in members.items():
        if len(docs) < min_pages:
            continue
        titles = (title_key(line_tokens(li)) for d in docs
                  for li in range(doc_lines[d], min(doc_lines[d] + TITLE_LINES, doc_lines[d + 1])))
        names = sorted({k for k in titles if k is not None})
        if not names:
            continue
        model = TitleNavModel(scope=g, names=tuple(names), documents=len(docs))
        hits = 0
        for d in docs:
            first = doc_lines[d]
            for i in page_nav_lines(doc_lines[d + 1] - first, lambda i, first=first: line_tokens(first + i),
                                    model.name_set, model.edge_lines):
                coverage[bounds[first + i]:bounds[first + i + 1]] = True
                hits += 1
        if hits:  # a site none of whose pages holds a title-navigation line has no model to publish
            models.append(model)
        per_group[str(g)] = {"lines": hits, "names": len(names)}  # a table per group, as line shapes write
    return TitleNavResult(coverage, models, {"title_nav_groups": per_group,
                                             "title_nav_tokens": int(coverage.sum())})
