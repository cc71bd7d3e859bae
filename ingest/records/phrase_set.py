"""The phrases the ingest hook removes: token-string tuples with stable ids and optional scopes.

Input format (``phrases.jsonl``, one JSON object per line, or the same objects as a list
of dicts, e.g. read back from the template index)::

    {"id": "p17", "text": "share this article", "tokens": ["share", "this", "article"],
     "length": 3, "df": 5123, "scope": "news.example.com"}

* ``tokens``: non-empty list of non-empty strings, each a token as produced by
  :func:`bloomspan.engine.text.tokenizer.token_spans` (already lowercased, no whitespace).
* ``text``: the tokens joined by one space. At least one of ``tokens``/``text`` is
  required; when both are present they must agree.
* ``length`` (optional when ``tokens`` is given): must equal ``len(tokens)``.
* ``df`` (optional): document frequency, integer >= 0; kept for reporting only.
* ``id`` (optional): a non-empty string or an integer, unique within the set. When absent a
  stable id ``"p" + 16 hex digits`` is derived from the text and scope, so the same phrase
  gets the same id on every load and in every order.
* ``scope`` (optional): a site (or any partition key). A scoped phrase is removed only from
  documents of that scope; a phrase without scope applies to every document.
* ``min_length`` (optional): the minimum phrase length of the mining run that found the
  phrase (``bloomspan mine --min-length``), integer >= 1. Every window of that many of its
  tokens is itself frequent, so the window matcher (:mod:`~bloomspan.ingest.match.phrase_matcher`, ``match="windows"``)
  finds the phrase's windows anywhere; a phrase without it is matched whole.

Unknown keys are ignored. Every error is a :class:`~bloomspan.ingest.base.errors.PhraseSetError`
naming the file and line (1-based) or the record index (0-based) and the key.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..base.errors import PhraseSetError
from .record_kinds import NOT_PHRASE_KINDS

logger = logging.getLogger(__name__)

PhraseId = str | int


@dataclass(frozen=True, slots=True)
class PhraseRecord:
    """One phrase: ``tokens`` (lowercased token strings), ``id``, optional ``df``, ``scope``
    and ``min_length`` (of the run that mined it)."""

    id: PhraseId
    tokens: tuple[str, ...]
    df: int | None = None
    scope: str | None = None
    min_length: int | None = None

    @property
    def text(self) -> str:
        return " ".join(self.tokens)

    @property
    def length(self) -> int:
        return len(self.tokens)

    def to_dict(self) -> dict:
        """The JSONL form (round-trips through :meth:`PhraseSet.from_records`)."""
        out: dict[str, Any] = {"id": self.id, "text": self.text, "tokens": list(self.tokens), "length": self.length}
        if self.df is not None:
            out["df"] = self.df
        if self.scope is not None:
            out["scope"] = self.scope
        if self.min_length is not None:
            out["min_length"] = self.min_length
        return out


def stable_phrase_id(tokens: Sequence[str], scope: str | None) -> str:
    """Id derived from content: ``"p"`` + 16 hex digits of BLAKE2b over text and scope."""
    key = " ".join(tokens) + "\x00" + (scope if scope is not None else "")
    return "p" + hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_token(tok: Any, i: int, err) -> str:
    if not isinstance(tok, str):
        raise err(f"tokens[{i}]={tok!r} is a {type(tok).__name__}; every token must be a string", "tokens")
    if not tok:
        raise err(f"tokens[{i}] is empty; tokens are non-empty runs of letters/digits", "tokens")
    if any(c.isspace() for c in tok):
        raise err(f"tokens[{i}]={tok!r} contains whitespace; a token never does (split it)", "tokens")
    if tok.lower() != tok:
        raise err(
            f"tokens[{i}]={tok!r} is not lowercase; tokens must be as bloomspan.engine.text.tokenizer "
            f"produces them (lowercase it: {tok.lower()!r})",
            "tokens",
        )
    return tok


def _checked_tokens(tokens_raw: list | tuple, err) -> tuple[str, ...]:
    """The tokens as a tuple, each checked by :func:`_check_token`. The common case (all
    valid) is settled on the tokens joined by one space: no token is empty or holds
    whitespace exactly when splitting the join at whitespace gives the tokens back, and
    lowercasing the join lowercases each token (a space ends a word for the final-sigma rule)."""
    if all(type(t) is str for t in tokens_raw):
        joined = " ".join(tokens_raw)
        if joined.split() == list(tokens_raw) and joined.lower() == joined:
            return tuple(tokens_raw)
    return tuple(_check_token(t, i, err) for i, t in enumerate(tokens_raw))


def parse_phrase_record(
    obj: Any, *, source: str = "records", line: int | None = None, index: int | None = None
) -> PhraseRecord:
    """Validate one phrase object (see the module docstring) into a :class:`PhraseRecord`.

    ``line`` (1-based file line) or ``index`` (0-based list position) only label errors.
    """

    def err(msg: str, key: str | None = None) -> PhraseSetError:
        return PhraseSetError(msg, source=source, line=line, index=index, key=key)

    if not isinstance(obj, Mapping):
        raise err(f"expected a JSON object, got {type(obj).__name__}")
    tokens_raw = obj.get("tokens")
    text = obj.get("text")
    if tokens_raw is None and text is None:
        raise err('needs "tokens" (list of strings) or "text" (tokens joined by one space)')
    if text is not None and not isinstance(text, str):
        raise err(f"text={text!r} must be a string", "text")
    if tokens_raw is None:
        tokens_raw = text.split(" ")
        key_for_tokens = "text"
    else:
        key_for_tokens = "tokens"
        if not isinstance(tokens_raw, (list, tuple)):
            raise err(f"tokens={tokens_raw!r} must be a list of strings", "tokens")
    if len(tokens_raw) == 0:
        raise err("phrase has no tokens", key_for_tokens)

    def tok_err(msg: str, _key: str | None) -> PhraseSetError:
        return err(msg, key_for_tokens)

    tokens = _checked_tokens(tokens_raw, tok_err)
    if text is not None and text != " ".join(tokens):
        raise err(f'text={text!r} differs from the tokens joined by one space {" ".join(tokens)!r}', "text")
    length = obj.get("length")
    if length is not None and (not _is_int(length) or length != len(tokens)):
        raise err(f"length={length!r} but the phrase has {len(tokens)} tokens", "length")
    df = obj.get("df")
    if df is not None and (not _is_int(df) or df < 0):
        raise err(f"df={df!r} must be an integer >= 0", "df")
    scope = obj.get("scope")
    if scope is not None and (not isinstance(scope, str) or not scope):
        raise err(f"scope={scope!r} must be a non-empty string or absent/null (null: applies to every document)", "scope")
    min_length = obj.get("min_length")
    if min_length is not None and (not _is_int(min_length) or min_length < 1):
        raise err(f"min_length={min_length!r} must be an integer >= 1 (the mining run's --min-length) or absent",
                  "min_length")
    pid = obj.get("id")
    if pid is None:
        pid = stable_phrase_id(tokens, scope)
    elif isinstance(pid, str):
        if not pid:
            raise err("id is empty; use a non-empty string or an integer, or omit it for a derived id", "id")
    elif not _is_int(pid):
        raise err(f"id={pid!r} must be a string or an integer", "id")
    return PhraseRecord(id=pid, tokens=tokens, df=df, scope=scope, min_length=min_length)


class PhraseSet:
    """An ordered, immutable list of :class:`PhraseRecord` with unique ids.

    The position of a phrase in the set is its *phrase index* (what the matcher reports);
    ``ids[i]`` maps it back to the stable id.
    """

    __slots__ = ("_phrases", "_index", "source")

    def __init__(self, phrases: Iterable[PhraseRecord], *, source: str = "records", _lines: Sequence[int] | None = None):
        self._phrases: tuple[PhraseRecord, ...] = tuple(phrases)
        self.source = source
        self._index: dict[PhraseId, int] = {}

        def label(i: int) -> dict:
            return {"line": _lines[i]} if _lines is not None else {"index": i}

        for i, p in enumerate(self._phrases):
            if not isinstance(p, PhraseRecord):
                raise PhraseSetError(f"expected PhraseRecord, got {type(p).__name__}", source=source, **label(i))
            first = self._index.setdefault(p.id, i)
            if first != i:
                at = f"line {_lines[first]}" if _lines is not None else f"[{first}]"
                raise PhraseSetError(
                    f"duplicate id {p.id!r} (first at {at}); ids must be unique", source=source, key="id", **label(i)
                )

    # -- construction -----------------------------------------------------------------
    # (records of kind "skeleton" and "config" are skipped: see bloomspan.engine.templates.detector)
    @classmethod
    def from_records(cls, records: Iterable[Any], *, source: str = "records") -> PhraseSet:
        """Build from phrase dicts; errors name ``source`` and the 0-based record index."""
        if isinstance(records, (str, bytes, Mapping)):
            raise PhraseSetError(f"expected a list of phrase objects, got {type(records).__name__}", source=source)
        # Skeleton and config records (template detector) are not phrases: TemplateMatcher reads them.
        parsed = [parse_phrase_record(r, source=source, index=i) for i, r in enumerate(records)
                  if is_phrase_record(r)]
        return cls(parsed, source=source)

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike) -> PhraseSet:
        """Load a ``phrases.jsonl`` file (UTF-8, a byte order mark before line 1 read past as
        every command's input is, blank lines skipped); errors name the 1-based line."""
        source = os.fspath(path)
        parsed: list[PhraseRecord] = []
        lines: list[int] = []
        skipped = 0
        with open(source, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise PhraseSetError(f"not valid UTF-8 ({e.reason} at byte {e.start})", source=source, line=lineno) from None
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise PhraseSetError(f"invalid JSON: {e.msg} at column {e.colno}", source=source, line=lineno) from None
                if not is_phrase_record(obj):
                    skipped += 1
                    continue
                parsed.append(parse_phrase_record(obj, source=source, line=lineno))
                lines.append(lineno)
        out = cls(parsed, source=source, _lines=lines)
        logger.info("loaded %d phrases from %s (page-skeleton records skipped: %d)", len(out), source, skipped)
        return out

    # -- access -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._phrases)

    def __iter__(self) -> Iterator[PhraseRecord]:
        return iter(self._phrases)

    def __getitem__(self, i: int) -> PhraseRecord:
        return self._phrases[i]

    def __repr__(self) -> str:
        return f"PhraseSet({len(self)} phrases from {self.source!r})"

    @property
    def ids(self) -> list[PhraseId]:
        return [p.id for p in self._phrases]

    def index_of(self, phrase_id: PhraseId) -> int:
        """Phrase index of ``phrase_id``; KeyError if absent."""
        return self._index[phrase_id]

    @property
    def min_length(self) -> int | None:
        """The ``min_length`` the phrases were mined with when every phrase records the same
        one, else None (none recorded, or a set merged from runs with different values)."""
        found = {p.min_length for p in self._phrases}
        return found.pop() if len(found) == 1 else None

    def with_min_length(self, min_length: int) -> PhraseSet:
        """The same phrases, each recording ``min_length`` where it records none (a phrase set
        read from a source that keeps the run's parameter apart, e.g. the template index)."""
        from dataclasses import replace

        return PhraseSet([p if p.min_length is not None else replace(p, min_length=min_length) for p in self._phrases],
                         source=self.source)

    @property
    def scopes(self) -> list[str]:
        """Distinct non-null scopes, sorted."""
        return sorted({p.scope for p in self._phrases if p.scope is not None})

    def to_records(self) -> list[dict]:
        return [p.to_dict() for p in self._phrases]


def is_phrase_record(obj: Any) -> bool:
    """Is ``obj`` read as a phrase? Everything but the template detector's page-skeleton and
    configuration records (which :mod:`~bloomspan.ingest.match.template_matcher` reads); a record that is not a
    mapping counts as a phrase, so the parser reports it."""
    return not (isinstance(obj, Mapping) and obj.get("kind") in NOT_PHRASE_KINDS)
