r"""Clean documents: strip, mark or down-weight the boilerplate phrases of a :class:`PhraseSet`.

``Cleaner(phrase_set, config).clean_batch(docs)`` (or ``.clean(doc)``) returns one
:class:`CleanResult` per document, in order. It never raises for a bad document and never
loses one: a bad document comes back untouched (the same object) with ``action ==
"error"`` and a :class:`~bloomspan.ingest.base.errors.DocumentError` naming the document id
and field: not a dict, a configured field missing/None or "" (unless ``skip_missing``),
not a string (number, nested object, list, bytes), holding lone surrogates, or longer
than ``max_chars``. A field of only whitespace/punctuation has no tokens: nothing to do,
no error. The input document is never mutated; a changed document is a new dict
(shallow copy, other keys shared).

Matching (``match``): ``"windows"`` (default) finds every run of ``min_length`` consecutive
tokens of a phrase (the run's ``--min-length``, recorded with each phrase; ``min_length``
overrides it), so known boilerplate is found next to neighbours it was never mined with;
``"phrases"`` finds whole phrases only. A phrase with no known ``min_length`` is matched
whole either way.

Modes (per configured text field; matching and merging as in :mod:`~bloomspan.ingest.match.phrase_matcher`):

* ``strip``: the field is rewritten without its merged spans (see *Strip rule*).
* ``mark``: text untouched; ``doc[meta_field] = {"spans": [{"field", "start", "end",
  "phrase_ids"}], "boilerplate_ratio": r}`` with character offsets ``[start, end)`` into
  the field (first token's start to last token's end) and the ids of every phrase
  matched inside the span.
* ``downweight``: text untouched; ``doc[field + clean_suffix]`` gets the stripped text and
  ``doc[meta_field] = {"boilerplate_ratio": r}``.

In ``strip`` mode ``doc[meta_field] = {"boilerplate_ratio": r}`` too, unless
``meta_field`` is None. ``r`` = tokens inside merged spans / all tokens, summed over the
configured fields present. With ``fingerprint=True`` (any mode)
``doc[meta_field]["fingerprint"]`` is the base64 chunk fingerprint
(:mod:`bloomspan.engine.sketches.chunk_fingerprint`) of the *stripped* text of the configured fields
present (joined by a blank line), for near-duplicate collapse of search results.

Every valid document gets its metadata, matched or not, so the queries of the README see
every page: ``boilerplate_ratio`` is written as ``max(r, RATIO_FLOOR)`` (the field is a
``rank_feature`` with negative impact, which Lucene stores as 1/value and cannot hold 0;
a clean page stores 1e-4), and in ``downweight`` mode ``field + clean_suffix`` is written
even when nothing was removed (then equal to the field). ``CleanResult.boilerplate_ratio``
stays the exact ``r``. Keys of a ``meta_field`` object the document already holds are kept
(the cleaner's own keys are replaced); a ``meta_field`` that holds something other than an
object is a :class:`FieldTypeError`. Only in ``strip`` mode with ``meta_field=None`` (and
no chunks) does a document without a match come back as the *same object*, untouched.
With ``max_ratio`` a document whose ``r`` exceeds it gets ``action == "drop"`` and a
``reason``; the caller routes it (the cleaned document is still in the result).

Stripping is idempotent: removing a span never leaves a phrase of the set formed across
the junction, so a second pass over a stripped text removes nothing. The phrase matcher
closes its spans under removal (:mod:`~bloomspan.ingest.match.phrase_matcher`, ``fixed_point``): boilerplate that was
interrupted by other boilerplate (a footer split by a cookie banner) is boilerplate too,
and is removed with it. With template records (line rules, skeletons) or protected text
(``protected``, the deny entries' phrases) the stripped text is matched again until a pass
removes nothing, and the tokens those passes remove count
in ``r`` in ``strip`` and ``downweight`` mode (``mark`` reports the spans of the text as
it is).

Strip rule. Write the text as ``g0 t1 g1 t2 ... tn gn`` (tokens ``t``, non-token gaps
``g``). A merged span ``t_i .. t_j`` is removed together with the gaps on both sides,
``g_{i-1}`` and ``g_j``, which are replaced by one junction ``J`` (:func:`junction`).
Split a gap at its first and last whitespace character: ``trail`` is the part before the
first whitespace (punctuation closing the token before it, e.g. ``.`` or ``),``), ``lead``
the part after the last whitespace (punctuation opening the token after it, e.g. ``(``);
a gap without whitespace has neither. Then ``J = A + W + B``:

* ``A`` = ``trail(g_{i-1})`` without its trailing separators (``, ; : | / \ - – — · •``
  and the like, which pointed at the removed text); if that leaves nothing, the sentence
  end (``.``, ``!``, ``?``, ``…``) that starts ``trail(g_j)``, so a removed sentence tail
  still ends the sentence ("Copyright 2024, all rights reserved." -> "Copyright 2024.");
* ``W`` = ``"\n\n"`` if either gap holds a blank line (paragraphs are kept), else ``"\n"``
  if either holds a line break, else ``" "``;
* ``B`` = ``lead(g_j)``.

The span owns the whitespace, punctuation and separator symbols (``| / + = > ~ ^`` and
the like: Unicode ``P*``, ``Sm``, ``Sk``) of the rest of the two gaps (``mid`` and ``lead``
of ``g_{i-1}``, ``trail`` and ``mid`` of ``g_j``). Every other non-token character there
(emoji and other symbols such as ``©`` or ``€``, control characters such as NUL) stays,
in order: the kept characters of each whitespace-separated chunk of ``g_{i-1}`` follow
``A`` with a space before each (``Kl``), those of ``g_j`` precede ``B`` with a space after
each (``Kr``), so ``J = A + Kl + W + Kr + B`` ("Intro 😀 <span> 😀 outro" -> "Intro 😀 😀 outro").

At the start of the text ``J = Kr + B`` (with ``Kl``'s chunks first), at the end
``J = A + Kl`` (with ``Kr``'s chunks last; the text's trailing gap counts as trail when it
has no whitespace); if the span covers every token, the kept chunks joined by spaces
(``""`` when there are none). So the stripped text keeps every character outside the
removed regions byte for byte, and its tokens are the original tokens without the
matched ones.
"""
from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bloomspan.engine.sketches.chunk_fingerprint import fingerprint_b64

from ..base.batch_tokens import BatchTokens, tokens_after_strip
from ..base.errors import (
    CleaningFailedError,
    DocumentError,
    DocumentTooLargeError,
    EmptyFieldError,
    FieldTypeError,
    IngestConfigError,
    InvalidDocumentError,
    InvalidTextError,
    MissingFieldError,
)
from ..match.phrase_matcher import BATCH_CHARS, MATCH_MODES, PhraseMatcher
from ..match.spans import MatchResult
from ..match.template_matcher import TemplateMatcher
from ..records.phrase_set import PhraseSet
from .chunking import chunk_text, validate_chunking
from .denied_text import DeniedText

logger = logging.getLogger(__name__)

MODES = ("strip", "mark", "downweight")
# The smallest boilerplate_ratio written: Lucene stores a negative-impact rank_feature as
# 1/value, so 0 (a clean page) cannot be stored.
RATIO_FLOOR = 1e-4
ACTIONS = ("keep", "drop", "error")

_BLANK_LINE_RE = re.compile(r"\n[^\S\n]*\n|\r[^\S\r\n]*\r")


@dataclass(frozen=True)
class CleanerConfig:
    """What to clean and how. Every field is validated on construction.

    fields:        text fields (top-level keys) to clean, non-empty, distinct.
    mode:          "strip" | "mark" | "downweight" (module docstring).
    max_ratio:     None, or 0 <= x <= 1: a document whose boilerplate_ratio > max_ratio gets
                   action "drop" (the caller routes it; the cleaned document is still returned).
    chunk_size:    None, or characters per RAG chunk (chunking module): adds
                   ``field + chunks_suffix`` = list of chunk strings of the stripped text.
    chunk_overlap: characters shared by consecutive chunks, 0 <= overlap < chunk_size.
    max_chars:     a field longer than this is a DocumentTooLargeError (doc returned untouched).
    skip_missing:  True: a missing field or an empty string is skipped; False: an error.
    id_field:      key of the document id used in results and errors (None: no id).
    scope_field:   key of the document's scope (site) for scoped phrases (None: only
                   unscoped phrases apply).
    url_field:     key of the document's URL: with template records (``Cleaner(templates=)``)
                   its folders name the site sections whose records apply too.
    meta_field:    key for the metadata object (None only in strip mode without
                   fingerprint: no metadata).
    clean_suffix, chunks_suffix: names of the derived fields.
    fingerprint:   True: write ``meta_field.fingerprint``, the base64 chunk fingerprint of the
                   stripped text (default :class:`FingerprintConfig`; mapping: ``binary``).
    match:         "windows" (every ``min_length`` window of a phrase) or "phrases" (whole
                   phrases only); module docstring.
    min_length:    window length for every phrase; None: each phrase's recorded ``min_length``.
    """

    fields: tuple[str, ...]
    mode: str = "strip"
    max_ratio: float | None = None
    chunk_size: int | None = None
    chunk_overlap: int = 0
    max_chars: int = 10_000_000
    skip_missing: bool = False
    id_field: str | None = "_id"
    scope_field: str | None = None
    url_field: str | None = None
    meta_field: str | None = "bloomspan"
    clean_suffix: str = "_clean"
    chunks_suffix: str = "_chunks"
    fingerprint: bool = False
    match: str = "windows"
    min_length: int | None = None

    def __post_init__(self) -> None:
        fields = self.fields
        if isinstance(fields, str) or not isinstance(fields, (list, tuple)) or not fields:
            raise IngestConfigError("fields", fields, 'must be a non-empty list of field names, e.g. ["body"]')
        for f in fields:
            if not isinstance(f, str) or not f:
                raise IngestConfigError("fields", fields, f"every field name must be a non-empty string, got {f!r}")
        if len(set(fields)) != len(fields):
            raise IngestConfigError("fields", fields, "must not repeat a field")
        object.__setattr__(self, "fields", tuple(fields))
        if self.mode not in MODES:
            raise IngestConfigError("mode", self.mode, f"must be one of {', '.join(MODES)}")
        r = self.max_ratio
        if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float)) or not 0.0 <= r <= 1.0):
            raise IngestConfigError("max_ratio", r, "must be a number in [0, 1] (drop when the ratio exceeds it) or None")
        validate_chunking(self.chunk_size, self.chunk_overlap)
        if not isinstance(self.max_chars, int) or isinstance(self.max_chars, bool) or self.max_chars < 1:
            raise IngestConfigError("max_chars", self.max_chars, "must be an integer >= 1")
        if not isinstance(self.skip_missing, bool):
            raise IngestConfigError("skip_missing", self.skip_missing, "must be true or false")
        for name in ("id_field", "scope_field", "url_field", "meta_field"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v):
                raise IngestConfigError(name, v, "must be a non-empty string or None")
        if self.meta_field is None and self.mode != "strip":
            raise IngestConfigError("meta_field", None, f"mode {self.mode!r} writes metadata: give a key, e.g. 'bloomspan'")
        if not isinstance(self.fingerprint, bool):
            raise IngestConfigError("fingerprint", self.fingerprint, "must be true or false")
        if self.fingerprint and self.meta_field is None:
            raise IngestConfigError("meta_field", None, "fingerprint=True writes meta_field.fingerprint: give a key, e.g. 'bloomspan'")
        if self.match not in MATCH_MODES:
            raise IngestConfigError("match", self.match, f"must be one of {', '.join(MATCH_MODES)}")
        m = self.min_length
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            raise IngestConfigError("min_length", m, "must be an integer >= 1 (the mining run's --min-length) or None")
        for name in ("clean_suffix", "chunks_suffix"):
            v = getattr(self, name)
            if not isinstance(v, str) or not v:
                raise IngestConfigError(name, v, "must be a non-empty string")
        derived = {self.meta_field} if self.meta_field else set()
        if self.mode == "downweight":
            derived |= {f + self.clean_suffix for f in self.fields}
        if self.chunk_size is not None:
            derived |= {f + self.chunks_suffix for f in self.fields}
        clash = derived & (set(self.fields) | {self.id_field, self.scope_field, self.url_field})
        if clash:
            raise IngestConfigError("fields", self.fields, f"{sorted(clash)} would be overwritten by derived fields; rename")


class FieldReport:
    """Per-field outcome: ``n_tokens``, ``covered_tokens`` and ``spans``, the merged spans as
    ``(char_start, char_end, phrase_ids)`` (built on first access). Holds plain lists
    only, so results never pin a batch's token arrays in memory."""

    __slots__ = ("n_tokens", "covered_tokens", "_starts", "_ends", "_match_span", "_match_phrase", "_ids", "_spans")

    def __init__(self, m: MatchResult, phrase_ids: list):
        self.n_tokens = m.n_tokens
        self.covered_tokens = m.covered_tokens
        self._starts: list[int] = m.span_char_start.tolist()
        self._ends: list[int] = m.span_char_end.tolist()
        self._match_span: list[int] = m.match_span.tolist()
        self._match_phrase: list[int] = m.match_phrase.tolist()
        self._ids = phrase_ids
        self._spans: list[tuple[int, int, list]] | None = None

    @property
    def spans(self) -> list[tuple[int, int, list]]:
        if self._spans is None:
            phrases: list[set[int]] = [set() for _ in self._starts]
            for k, p in zip(self._match_span, self._match_phrase):
                phrases[k].add(p)
            self._spans = [(cs, ce, [self._ids[p] for p in sorted(ph)]) for cs, ce, ph in zip(self._starts, self._ends, phrases)]
        return self._spans

    def __repr__(self) -> str:
        return f"FieldReport(n_tokens={self.n_tokens}, covered_tokens={self.covered_tokens}, spans={self.spans!r})"


@dataclass
class CleanResult:
    """Outcome for one document.

    doc:    the cleaned document (a new dict), or the input object itself when nothing
            changed or on error.
    action: "keep", "drop" (boilerplate_ratio > max_ratio; ``reason`` says so; ``doc`` is
            the cleaned document) or "error" (``error`` says why; ``doc`` is the input).
    """

    doc: Any
    doc_id: Any = None
    action: str = "keep"
    reason: str | None = None
    error: DocumentError | None = None
    changed: bool = False
    n_tokens: int = 0
    covered_tokens: int = 0
    fields: dict[str, FieldReport] = field(default_factory=dict)

    @property
    def boilerplate_ratio(self) -> float:
        return self.covered_tokens / self.n_tokens if self.n_tokens else 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def dropped(self) -> bool:
        return self.action == "drop"


_WS_RE = re.compile(r"\s")


def _split_gap(gap: str) -> tuple[str, str, str]:
    """``(trail, middle, lead)``: split at the first and last whitespace character;
    ``("", gap, "")`` when the gap holds no whitespace. Linear time (gaps can be long)."""
    first = _WS_RE.search(gap)
    if first is None:
        return "", gap, ""
    i = first.start()
    j = len(gap) - _WS_RE.search(gap[::-1]).start()  # one past the last whitespace
    return gap[:i], gap[i:j], gap[j:]


_SEPARATORS = frozenset(",;:|/\\-\u2013\u2014\u00b7\u2022\u00a6\u2010\u2011\u2012\u2015\u2043\u2192\u00bb\u203a>")
_SENTENCE_ENDS = frozenset(".!?\u2026\u3002\uff01\uff1f")


def _closing(trail: str) -> str:
    """``trail`` without its trailing separator characters."""
    end = len(trail)
    while end and trail[end - 1] in _SEPARATORS:
        end -= 1
    return trail[:end]


def _sentence_end(trail: str) -> str:
    """The run of sentence-ending characters that starts ``trail`` ("" if none)."""
    end = 0
    while end < len(trail) and trail[end] in _SENTENCE_ENDS:
        end += 1
    return trail[:end]


# Gap characters a span does not own (Strip rule): anything but whitespace, punctuation and
# separator symbols. ASCII gaps (most of them) hold such a character only as "$" or a control.
_OWNED_CATEGORIES = frozenset(("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sk", "Zs", "Zl", "Zp"))
_ASCII_KEPT_RE = re.compile(r"[$\x00-\x08\x0e-\x1b\x7f]")


@functools.lru_cache(maxsize=65536)
def _kept_char(c: str) -> bool:
    return not c.isspace() and c not in _SEPARATORS and unicodedata.category(c) not in _OWNED_CATEGORIES


def _kept_chunks(part: str) -> list[str]:
    """The characters of ``part`` a removed span does not own, one string per
    whitespace-separated chunk that holds any (Strip rule)."""
    if not part or (part.isascii() and _ASCII_KEPT_RE.search(part) is None):
        return []
    chunks = ("".join(c for c in chunk if _kept_char(c)) for chunk in part.split())
    return [chunk for chunk in chunks if chunk]


def junction(left_gap: str, right_gap: str, at_start: bool, at_end: bool) -> str:
    """The text that replaces ``left_gap + span + right_gap`` (Strip rule, module docstring).

    ``at_start``: no token before the span (``left_gap`` is the text's leading gap);
    ``at_end``: no token after it (``right_gap`` is the trailing gap).
    """
    left_trail, left_mid, left_lead = _split_gap(left_gap)
    right_trail, right_mid, lead = _split_gap(right_gap)
    if at_end:  # the text's trailing gap: no token after the span to open (all trail without whitespace)
        right_trail, right_mid, lead = (right_gap, "", "") if not any(c.isspace() for c in right_gap) else \
            (right_trail, right_mid + " " + lead, "")
    if at_start:  # the text's leading gap: nothing closes a token before the span
        left_trail, left_mid, left_lead = "", left_gap, ""
    kept_left = _kept_chunks(left_mid + " " + left_lead)
    kept_right = _kept_chunks(right_trail + " " + right_mid)
    if at_start and at_end:
        return " ".join(kept_left + kept_right)
    if at_start:
        kept = kept_left + kept_right
        return "".join(k + " " for k in kept) + lead
    # A: what closes the token before the span, else the span's sentence end (after Kl: it
    # ends the text before the span, which Kl's characters belong to).
    closing = _closing(left_trail)
    sentence_end = "" if closing else _sentence_end("".join(c for c in right_trail if not _kept_char(c)))
    if at_end:
        return closing + "".join(" " + k for k in kept_left + kept_right) + sentence_end
    if _BLANK_LINE_RE.search(left_mid) or _BLANK_LINE_RE.search(right_mid):
        ws = "\n\n"
    elif "\n" in left_mid or "\n" in right_mid or "\r" in left_mid or "\r" in right_mid:
        ws = "\n"
    else:
        ws = " "
    return closing + "".join(" " + k for k in kept_left) + sentence_end + ws + "".join(k + " " for k in kept_right) + lead


# Short gaps repeat endlessly (" ", ". ", "\n\n"): memoize the rule for them only, so
# the cache stays small whatever the documents hold.
_junction_cached = functools.lru_cache(maxsize=4096)(junction)
_CACHED_GAP_CHARS = 32


def strip_spans(text: str, m: MatchResult) -> str:
    """``text`` without the merged spans of ``m`` (Strip rule); ``text`` itself if there are none."""
    return strip_spans_with_junctions(text, m)[0]


def strip_spans_with_junctions(text: str, m: MatchResult) -> tuple[str, list[str]]:
    """:func:`strip_spans`, and the junction that replaced each merged span's region."""
    if m.n_spans == 0:
        return text, []
    pieces: list[str] = []
    joins: list[str] = []
    kept_from = 0  # start of the next kept piece
    n_tok = m.n_tokens
    for ts, te, gs, cs, ce, ge in zip(m.span_token_start.tolist(), m.span_token_end.tolist(), m.span_gap_start.tolist(),
                                      m.span_char_start.tolist(), m.span_char_end.tolist(), m.span_gap_end.tolist()):  # fmt: skip
        pieces.append(text[kept_from:gs])
        left, right = text[gs:cs], text[ce:ge]
        rule = _junction_cached if len(left) + len(right) <= _CACHED_GAP_CHARS else junction
        joins.append(rule(left, right, ts == 0, te == n_tok))
        pieces.append(joins[-1])
        kept_from = ge
    pieces.append(text[kept_from:])
    return "".join(pieces), joins


def _field_error(value: Any, name: str, doc_id: Any, cfg: CleanerConfig) -> DocumentError | None:
    """Why ``value`` cannot be cleaned, or None (missing/empty are handled by the caller)."""
    if not isinstance(value, str):
        kind = "a nested object" if isinstance(value, dict) else "a list" if isinstance(value, list) else type(value).__name__
        return FieldTypeError(f"must be a string, got {kind}", doc_id=doc_id, field=name)
    if len(value) > cfg.max_chars:
        return DocumentTooLargeError(f"{len(value)} characters > max_chars={cfg.max_chars}", doc_id=doc_id, field=name)
    if not value.isascii():  # isascii is O(1); only non-ASCII text can hold surrogates
        try:  # strict UTF-16 rejects lone surrogates like UTF-8 does, and is faster to encode
            value.encode("utf-16-le")
        except UnicodeEncodeError as e:
            return InvalidTextError(
                f"lone surrogate {value[e.start]!r} at character {e.start}: not valid Unicode (cannot be UTF-8)",
                doc_id=doc_id,
                field=name,
            )
    return None


class Cleaner:
    """Applies a :class:`PhraseSet` to documents according to a :class:`CleanerConfig`.

    :meth:`clean_batch` is the fast path: all texts of the batch are tokenized and
    scanned together. :meth:`clean` is ``clean_batch([doc])[0]``.

    ``templates``: a :class:`~bloomspan.ingest.match.template_matcher.TemplateMatcher` (the template detector's
    records: line-anchored blocks, slots, site scopes, page skeletons) used instead of the
    plain phrase matcher; ``phrase_set`` may then be None (the matcher's phrases are used).
    A document's scopes are its ``scope_field`` (site) and the sections of its ``url_field``.

    ``protected``: a :class:`~.denied_text.DeniedText` (the operator's deny entries): its
    phrases' occurrences stay uncovered whatever record covered them (the text around them
    is cleaned as before; :mod:`.curated_cleaner` gives each cleaner the entries of its scopes).
    """

    def __init__(self, phrase_set: PhraseSet | None, config: CleanerConfig, *, templates=None,
                 protected: DeniedText | None = None):
        if not isinstance(config, CleanerConfig):
            raise IngestConfigError("config", config, "must be a CleanerConfig")
        if templates is not None and not isinstance(templates, TemplateMatcher):
            raise IngestConfigError("templates", templates, "must be a TemplateMatcher (TemplateMatcher.from_jsonl)")
        if templates is not None:
            phrase_set = templates.phrase_set
        if not isinstance(phrase_set, PhraseSet):
            raise IngestConfigError("phrase_set", phrase_set, "must be a PhraseSet (PhraseSet.from_jsonl / from_records)")
        if protected is not None and not isinstance(protected, DeniedText):
            raise IngestConfigError("protected", protected, "must be a DeniedText (the deny entries' phrases) or None")
        self.phrase_set = phrase_set
        self.config = config
        self.protected = protected or None
        # One matcher interface from here on (find_match_results, document_scopes, span_ids, ...).
        self.matcher = templates.matching(config.match, config.min_length) if templates is not None else \
            PhraseMatcher(phrase_set, match=config.match, min_length=config.min_length)
        self.templates = self.matcher if templates is not None else None
        self._ids = self.matcher.span_ids
        # Matched again after a strip until a pass removes nothing, unless the matcher's spans are
        # closed under removal already and no protected phrase can be cut out of one.
        self._match_again = not self.matcher.closed_under_removal or self.protected is not None

    def _find(self, texts: list[str], scopes: list, tokens: BatchTokens | None = None) -> list[MatchResult]:
        found = self.matcher.find_match_results(texts, scopes, tokens)
        return found if self.protected is None else self.protected.uncover(texts, found)

    def _strip_all(self, texts: list[str], scopes: list, matches: list[MatchResult],
                   tokens: BatchTokens | None = None) -> tuple[list[str], list[int]]:
        """The stripped texts, and the tokens removed beyond ``matches``' spans: with template
        records or protected text each changed text is matched again until a pass removes
        nothing (the phrase matcher's spans alone are already closed under removal; a protected
        phrase cut out of a span can leave a new junction). ``tokens``: the texts' tokens, from
        which each pass's are derived (:mod:`~bloomspan.ingest.base.batch_tokens`) instead of tokenizing again.
        What a later pass can find, and where the template matcher reads its rules again: *The
        removal fixed point* in :mod:`~bloomspan.ingest.match.template_matcher`."""
        pairs = [strip_spans_with_junctions(t, m) for t, m in zip(texts, matches)]
        stripped, joins = [p[0] for p in pairs], [p[1] for p in pairs]
        extra = [0] * len(texts)
        if not self._match_again or self.config.mode == "mark":
            return stripped, extra
        todo = [i for i, m in enumerate(matches) if m.n_spans]
        rows, last = todo, list(matches)  # rows of ``tokens`` holding the texts of ``todo``, their last matches
        while todo:
            if tokens is not None:  # None: tokenized again (batch_tokens says when)
                tokens = tokens_after_strip(tokens, rows, [last[i] for i in todo], [joins[i] for i in todo])
            again = self._find([stripped[i] for i in todo], [scopes[i] for i in todo], tokens)
            nxt, nxt_rows = [], []
            for row, (i, m) in enumerate(zip(todo, again)):
                if m.n_spans:
                    stripped[i], joins[i] = strip_spans_with_junctions(stripped[i], m)
                    last[i] = m
                    extra[i] += m.covered_tokens
                    nxt.append(i)
                    nxt_rows.append(row)
            todo, rows = nxt, nxt_rows
        return stripped, extra

    def clean(self, doc: Any, doc_id: Any = None) -> CleanResult:
        """Clean one document; never raises for bad input (see :class:`CleanResult`)."""
        return self.clean_batch([doc], doc_ids=[doc_id])[0]

    def clean_batch(self, docs: Iterable[Any], doc_ids: Iterable[Any] | None = None) -> list[CleanResult]:
        """Clean documents; one :class:`CleanResult` per document, in input order, never raises
        for bad documents. ``doc_ids`` (optional) overrides ``config.id_field``."""
        docs = list(docs)
        ids = [None] * len(docs) if doc_ids is None else list(doc_ids)
        if len(ids) != len(docs):
            raise ValueError(f"doc_ids has {len(ids)} entries for {len(docs)} documents")
        results: list[CleanResult | None] = [None] * len(docs)
        todo: list[tuple[int, Any, str | None, dict[str, str]]] = []
        for i, (doc, doc_id) in enumerate(zip(docs, ids)):
            if doc_id is None and isinstance(doc, dict) and self.config.id_field is not None:
                doc_id = doc.get(self.config.id_field)
            ids[i] = doc_id
            try:
                prepared = self._prepare(doc, doc_id)
            except Exception as e:  # a bug: keep the document, report it
                results[i] = self._failed(doc, doc_id, e)
                continue
            if isinstance(prepared, CleanResult):
                results[i] = prepared
            else:
                todo.append((i, doc, *prepared))
        # Rounds of about BATCH_CHARS characters bound the token arrays held at once.
        round_: list[tuple[int, Any, str | None, dict[str, str]]] = []
        chars = 0
        for item in todo:
            round_.append(item)
            chars += sum(map(len, item[3].values()))
            if chars >= BATCH_CHARS:
                self._clean_round(round_, ids, results)
                round_, chars = [], 0
        if round_:
            self._clean_round(round_, ids, results)
        return results  # type: ignore[return-value]

    def _batch_failed(self, stage: str, todo: list, ids: list, results: list, exc: Exception) -> None:
        """A batch stage raised: a lone document fails with the error; a batch is cleaned one by one,
        so one bad document never fails the others. Called from the ``except`` block."""
        if len(todo) == 1:
            i, doc = todo[0][:2]
            results[i] = self._failed(doc, ids[i], exc)
            return
        logger.exception("batch %s failed; retrying %d documents one by one", stage, len(todo))
        for i, doc, _, _ in todo:
            results[i] = self.clean(doc, ids[i])

    def _clean_round(self, todo: list, ids: list, results: list) -> None:
        texts = [t for _, _, _, fields in todo for t in fields.values()]
        scopes = [sc for _, _, sc, fields in todo for _ in fields]
        try:
            tokens = self.matcher.tokenize(texts)  # tokenized once; later passes derive theirs
            matches = self._find(texts, scopes, tokens)
        except Exception as e:
            self._batch_failed("matching", todo, ids, results, e)
            return
        try:
            stripped, extra = self._strip_all(texts, scopes, matches, tokens)
        except Exception as e:
            self._batch_failed("stripping", todo, ids, results, e)
            return
        j = 0
        for i, doc, _, fields in todo:
            k = slice(j, j + len(fields))
            j += len(fields)
            field_matches = dict(zip(fields, matches[k]))
            try:
                results[i] = self._apply(doc, ids[i], field_matches, dict(zip(fields, stripped[k])), sum(extra[k]))
            except Exception as e:  # a bug: keep the document, report it
                results[i] = self._failed(doc, ids[i], e)

    def _failed(self, doc: Any, doc_id: Any, e: BaseException) -> CleanResult:
        logger.error("cleaning doc %r failed", doc_id, exc_info=e)
        err = CleaningFailedError(f"{type(e).__name__}: {e}", doc_id=doc_id, cause=e)
        return CleanResult(doc=doc, doc_id=doc_id, action="error", reason=str(err), error=err)

    def _error(self, doc: Any, err: DocumentError) -> CleanResult:
        logger.debug("document error: %s", err)
        return CleanResult(doc=doc, doc_id=err.doc_id, action="error", reason=str(err), error=err)

    def _prepare(self, doc: Any, doc_id: Any) -> CleanResult | tuple[Any, dict[str, str]]:
        """An error result, or ``(scope, {field: text})`` of the fields to clean (with
        templates, scope is the list of the document's scopes)."""
        cfg = self.config
        if not isinstance(doc, dict):
            return self._error(
                doc, InvalidDocumentError(f"must be a JSON object (dict), got {type(doc).__name__}", doc_id=doc_id)
            )
        scope = None
        if cfg.scope_field is not None:
            scope = doc.get(cfg.scope_field)
            if scope is not None and not isinstance(scope, str):
                return self._error(doc, FieldTypeError(f"scope must be a string, got {type(scope).__name__}",
                                                       doc_id=doc_id, field=cfg.scope_field))  # fmt: skip
        url = doc.get(cfg.url_field) if cfg.url_field is not None and self.matcher.reads_url else None
        if url is not None and not isinstance(url, str):
            return self._error(doc, FieldTypeError(f"URL must be a string, got {type(url).__name__}",
                                                   doc_id=doc_id, field=cfg.url_field))  # fmt: skip
        scope = self.matcher.document_scopes(scope, url)
        texts: dict[str, str] = {}
        for name in cfg.fields:  # validate every field before touching anything
            if name not in doc or doc[name] is None:
                if cfg.skip_missing:
                    continue
                return self._error(doc, MissingFieldError("missing (or null)", doc_id=doc_id, field=name))
            value = doc[name]
            err = _field_error(value, name, doc_id, cfg)
            if err is not None:
                return self._error(doc, err)
            if value == "":
                if cfg.skip_missing:
                    continue
                return self._error(doc, EmptyFieldError("empty string", doc_id=doc_id, field=name))
            texts[name] = value
        if cfg.meta_field is not None:
            meta = doc.get(cfg.meta_field)
            if meta is not None and not isinstance(meta, dict):
                return self._error(doc, FieldTypeError(
                    f"holds {type(meta).__name__}, but the cleaner writes its metadata object there; rename the "
                    "document's field or give another meta_field", doc_id=doc_id, field=cfg.meta_field))
        return scope, texts

    def _apply(self, doc: dict, doc_id: Any, matches: dict[str, MatchResult], stripped: dict[str, str],
               extra_covered: int) -> CleanResult:
        cfg = self.config
        result = CleanResult(doc=doc, doc_id=doc_id)
        for name, m in matches.items():
            result.fields[name] = FieldReport(m, self._ids)
            result.n_tokens += m.n_tokens
            result.covered_tokens += m.covered_tokens
        result.covered_tokens += extra_covered
        any_span = result.covered_tokens > 0
        fingerprint = cfg.fingerprint and bool(matches)
        if not matches or (cfg.meta_field is None and not any_span and cfg.chunk_size is None):
            return result  # no field to clean, or strip mode without metadata: the input object, untouched

        out = dict(doc)
        for name, text in stripped.items():
            if cfg.mode == "strip":
                out[name] = text
            elif cfg.mode == "downweight":
                out[name + cfg.clean_suffix] = text
            if cfg.chunk_size is not None:
                out[name + cfg.chunks_suffix] = [c.text for c in chunk_text(text, cfg.chunk_size, cfg.chunk_overlap)]
        if cfg.meta_field is not None:
            meta: dict[str, Any] = dict(doc.get(cfg.meta_field) or {})
            if cfg.mode == "mark":
                meta["spans"] = [{"field": name, "start": cs, "end": ce, "phrase_ids": pids}
                                 for name, rep in result.fields.items() for cs, ce, pids in rep.spans]  # fmt: skip
            meta["boilerplate_ratio"] = max(result.boilerplate_ratio, RATIO_FLOOR)
            if fingerprint:
                meta["fingerprint"] = fingerprint_b64("\n\n".join(stripped.values()))
            out[cfg.meta_field] = meta
        result.doc = out
        result.changed = True
        if cfg.max_ratio is not None and result.boilerplate_ratio > cfg.max_ratio:
            result.action = "drop"
            result.reason = f"boilerplate_ratio {result.boilerplate_ratio:.4f} > max_ratio {cfg.max_ratio}"
        return result
