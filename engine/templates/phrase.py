"""Template phrases: a :class:`~bloomspan.engine.mining.phrases.Phrase` with its kind, scope and slot positions.

The template detector (:mod:`.detector`) returns phrases of two kinds:

* ``"mcfp"``: a maximal contiguous frequent phrase from an exact miner (``mine_bloomspan``
  or ``mine_fhk``); its occurrences are all positions where its tokens occur.
* ``"block"``: one or more consecutive *whole* blocks (lines of the source text) repeated
  in at least sigma documents (:mod:`.blocks`); its occurrences are only the positions
  where it starts at a block start and ends at a block end, so a short block phrase such
  as "Prev Up Next" never matches inside a sentence.

``scope`` is the document group the phrase was mined in (e.g. a site), None for the
global pass; ``slots`` are the positions in ``tokens`` that hold the slot id
:data:`bloomspan.engine.text.slots.SLOT_ID` (any all-digit token), e.g. the year in
"© 2024 Company". ``TemplatePhrase`` subclasses ``Phrase``, so every function that takes
phrases (``sort_phrases``, reports) takes these too.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from bloomspan.engine.mining.phrases import Phrase
from bloomspan.engine.text.slots import SLOT_ID, SLOT_TOKEN

KINDS = ("mcfp", "block")
ANCHORS = (None, "start", "end")


@dataclass(frozen=True, slots=True)
class TemplatePhrase(Phrase):
    """tokens, df, occurrences as in :class:`Phrase`; df and occurrences count only the
    occurrences that are valid for the kind (block-aligned ones for ``"block"``).

    kind:     "mcfp" or "block".
    scope:    group the phrase was mined in; None = global (applies to every document).
    slots:    ascending positions i with ``tokens[i] == SLOT_ID``.
    block_lengths: for ``"block"`` phrases, the token count of each whole block (line) the
              phrase spans, in order (they sum to ``length``); () for mcfp phrases.
    anchor:   for ``"block"`` phrases, "start" (only valid as the first line of a document),
              "end" (only as the last line) or None (anywhere, block-aligned).
    """

    kind: str = "mcfp"
    scope: str | None = None
    slots: tuple[int, ...] = ()
    block_lengths: tuple[int, ...] = ()
    anchor: str | None = None

    @property
    def n_blocks(self) -> int:
        return len(self.block_lengths)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind={self.kind!r}: must be one of {', '.join(KINDS)}")
        if self.scope is not None and (not isinstance(self.scope, str) or not self.scope):
            raise ValueError(f"scope={self.scope!r}: must be a non-empty string or None (global)")
        expected = tuple(i for i, t in enumerate(self.tokens) if t == SLOT_ID)
        if self.slots != expected:
            raise ValueError(f"slots={self.slots!r}: must list the positions of SLOT_ID in tokens, {expected!r}")
        if self.kind == "block" and (not self.block_lengths or min(self.block_lengths) < 1
                                     or sum(self.block_lengths) != len(self.tokens)):
            raise ValueError(f"block_lengths={self.block_lengths!r}: a block phrase needs positive block "
                             f"lengths that sum to its {len(self.tokens)} tokens")
        if self.kind == "mcfp" and self.block_lengths:
            raise ValueError(f"block_lengths={self.block_lengths!r}: must be () for an mcfp phrase")
        if self.anchor not in ANCHORS or (self.anchor is not None and self.kind != "block"):
            raise ValueError(f"anchor={self.anchor!r}: must be None, or 'start'/'end' for a block phrase")

    @classmethod
    def from_phrase(cls, phrase: Phrase, scope: str | None = None) -> TemplatePhrase:
        """Wrap a plain (mcfp) phrase; slot positions are read from its tokens."""
        slots = tuple(i for i, t in enumerate(phrase.tokens) if t == SLOT_ID)
        return cls(phrase.tokens, phrase.df, phrase.occurrences, kind="mcfp", scope=scope, slots=slots)

    def to_record(self, token_text: Callable[[int], str]) -> dict:
        """The ``phrases.jsonl`` form read by :class:`bloomspan.ingest.records.phrase_set.PhraseSet`.

        ``id`` is "t" + 16 hex digits of BLAKE2b over text, scope, kind, anchor and line
        lengths (stable across runs). ``token_text(id)`` gives a token's string (e.g.
        ``Vocabulary.token``); slot
        positions become :data:`SLOT_TOKEN`. Extra keys ``kind``, ``slots``,
        ``block_lengths`` and ``anchor`` are ignored by plain phrase sets and used by
        :mod:`bloomspan.ingest.match.template_matcher`.
        """
        tokens = [SLOT_TOKEN if t == SLOT_ID else token_text(t) for t in self.tokens]
        key = "\x00".join([" ".join(tokens), self.scope or "", self.kind, self.anchor or "",
                           ",".join(map(str, self.block_lengths))])
        rec = {"id": "t" + hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest(),
               "text": " ".join(tokens), "tokens": tokens, "length": len(tokens), "df": self.df,
               "occurrences": self.occurrences, "kind": self.kind, "slots": list(self.slots)}
        if self.scope is not None:
            rec["scope"] = self.scope
        if self.kind == "block":
            rec["block_lengths"] = list(self.block_lengths)
            if self.anchor is not None:
                rec["anchor"] = self.anchor
        return rec


def template_order_key(p: TemplatePhrase) -> tuple:
    """psi descending, length descending, tokens ascending (as :func:`~bloomspan.engine.mining.phrases.phrase_order_key`),
    then kind, scope (global first) and anchor, so equal token lists sort deterministically."""
    return (-p.psi, -p.length, p.tokens, p.kind, p.scope is not None, p.scope or "", p.anchor or "")


def sort_template_phrases(phrases: Iterable[TemplatePhrase]) -> list[TemplatePhrase]:
    return sorted(phrases, key=template_order_key)


def kind_counts(phrases: Sequence[TemplatePhrase]) -> dict[str, int]:
    """Number of phrases per kind (every kind present, zero included)."""
    out = {k: 0 for k in KINDS}
    for p in phrases:
        out[p.kind] += 1
    return out
