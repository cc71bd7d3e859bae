"""The template detector's records, parsed once into what a matcher applies.

A ``templates.jsonl`` file (``bloomspan templates``, or the one ``bloomspan mine`` writes
next to ``phrases.jsonl``) and a template index hold:

* at most one ``kind="config"`` record, first: the detector's
  :class:`~bloomspan.engine.templates.detector.TemplateConfig` (``template_config``);
* phrase records (:mod:`.phrase_set`) with the extra keys ``kind`` ("mcfp", absent, or
  "block"), ``block_lengths`` (tokens per line) and ``anchor`` ("start"/"end": the first /
  last line of the page);
* ``kind="skeleton"`` records (:class:`~bloomspan.engine.templates.page_skeleton.PageSkeleton`)
  , ``kind="line_shape"`` records
  (:class:`~bloomspan.engine.templates.line_shapes.LineShapeModel`), ``kind="title_nav"``
  records (:class:`~bloomspan.engine.templates.title_nav.TitleNavModel`) and ``kind="own_facts"``
  records (:class:`~bloomspan.engine.templates.own_facts.OwnFactsModel`).

:func:`parse_template_records` validates them and returns a :class:`TemplateRecords`:
every phrase in one :class:`PhraseSet` with its rule as arrays, the page models, and the
mined configuration. Errors are :class:`PhraseSetError` naming the source and record.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bloomspan.engine.templates.line_shapes import LineShapeModel
from bloomspan.engine.templates.own_facts import OwnFactsModel
from bloomspan.engine.templates.page_skeleton import PageSkeleton
from bloomspan.engine.templates.title_nav import TitleNavModel
from bloomspan.engine.text.slots import SLOT_TOKEN

from ..base.errors import PhraseSetError
from .phrase_set import PhraseSet
from .record_kinds import CONFIG_KIND, PAGE_MODEL_KINDS, TEMPLATE_KINDS

RULE_ANY, RULE_LINE, RULE_PAIR = 0, 1, 2  # anywhere (mcfp); one whole line; a pair of lines / an edge line
ANCHOR_NONE, ANCHOR_START, ANCHOR_END = 0, 1, 2
_ANCHOR = {None: ANCHOR_NONE, "start": ANCHOR_START, "end": ANCHOR_END}


def read_records(path: str | os.PathLike) -> list[dict]:
    """The JSON objects of a ``phrases.jsonl`` / ``templates.jsonl`` file, blank lines skipped;
    a line that is not JSON is a :class:`PhraseSetError` naming the file and line."""
    source = os.fspath(path)
    records = []
    with open(source, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise PhraseSetError(f"invalid JSON: {e.msg}", source=source, line=lineno) from None
    return records


def is_template_record(obj: Any) -> bool:
    """True for records only the template matcher understands (detector config, page models,
    line-anchored blocks, slotted phrases); a file with none of them is a plain phrase set."""
    return isinstance(obj, Mapping) and (obj.get("kind") in TEMPLATE_KINDS or bool(obj.get("slots")))


def rule_of(obj: Mapping, index: int, source: str, length: int) -> tuple[int, int, int]:
    """(rule, anchor code, tokens in the first line) of one phrase record of ``length`` tokens."""
    kind = obj.get("kind", "mcfp")
    blocks = obj.get("block_lengths", [])
    anchor = obj.get("anchor")

    def err(msg: str, key: str) -> PhraseSetError:
        return PhraseSetError(msg, source=source, index=index, key=key)

    if kind == "mcfp":
        return RULE_ANY, ANCHOR_NONE, 0
    if kind != "block":
        raise err(f"kind={kind!r} must be 'mcfp' or 'block'", "kind")
    if anchor not in _ANCHOR:
        raise err(f"anchor={anchor!r} must be 'start', 'end' or absent", "anchor")
    if (not isinstance(blocks, list) or not all(isinstance(x, int) and x >= 1 for x in blocks)
            or sum(blocks) != length):
        raise err(f"block_lengths={blocks!r} must be positive line lengths summing to the {length} tokens",
                  "block_lengths")
    if len(blocks) == 1 and anchor is None:
        return RULE_LINE, ANCHOR_NONE, blocks[0]
    if (len(blocks) == 2 and anchor is None) or (len(blocks) == 1 and anchor is not None):
        return RULE_PAIR, _ANCHOR[anchor], blocks[0]
    raise err(f"block_lengths={blocks!r} with anchor={anchor!r}: block phrases span 1 line (optionally "
              "anchored) or 2 lines (not anchored)", "block_lengths")


@dataclass(frozen=True)
class TemplateRecords:
    """Parsed template records. P phrases.

    records:             the records as given (config record included), to rebuild a matcher.
    source:              where they came from (a file, an index), for error messages.
    template_config:     the detector's configuration as mined ({} without a config record).
    run_min_length:      tokens a chain of pair matches needs (TemplateConfig.run_min_length).
    slots:               number tokens of a text read as the slot token (TemplateConfig.slots).
    middle_tokens, middle_repeated, section_line_length: the detector's middle and section rules
                         (0 / False: off, as in records written before they existed).
    toc_sections:        the detector's table-of-contents rule (TemplateConfig.toc_sections; 0:
                         off, as in records written before it existed).
    exact_on_sites:      a mining run's exact phrases apply on the detector's sites too.
    phrase_set:          every phrase record (mcfp and block) in one :class:`PhraseSet`.
    is_exact:            bool (P,) a mining run's exact phrase (no ``kind``), or an operator's
                         allow entry (applies everywhere).
    rule, anchor:        int8 (P,) RULE_* and ANCHOR_* of each phrase.
    first_line, n_lines: int64 (P,) tokens of a block phrase's first line; its lines (0 for mcfp).
    skeletons, line_shapes, title_navs, own_facts: the page models, in record order.
    mined_scopes:        scopes the detector has records for (phrases or skeletons).
    """

    records: tuple
    source: str
    template_config: dict
    run_min_length: int
    slots: bool
    middle_tokens: int
    middle_repeated: bool
    section_line_length: int
    exact_on_sites: bool
    phrase_set: PhraseSet
    is_exact: np.ndarray
    rule: np.ndarray
    anchor: np.ndarray
    first_line: np.ndarray
    n_lines: np.ndarray
    skeletons: tuple[PageSkeleton, ...]
    line_shapes: tuple[LineShapeModel, ...]
    mined_scopes: frozenset
    title_navs: tuple[TitleNavModel, ...] = ()
    toc_sections: int = 0
    own_facts: tuple[OwnFactsModel, ...] = ()


def _mined_config(records: list, source: str) -> dict:
    configs = [r.get("template_config") for r in records if isinstance(r, Mapping) and r.get("kind") == CONFIG_KIND]
    if len(configs) > 1 or (configs and not isinstance(configs[0], Mapping)):
        raise PhraseSetError("expected at most one config record with a 'template_config' object", source=source)
    return dict(configs[0]) if configs else {}


def _page_models(records: list, source: str) -> tuple[list, list, list, list, list]:
    """(phrase records, skeletons, line-shape models, title-navigation models, own-fact models),
    in record order."""
    phrases, skeletons, line_shapes, title_navs, own_facts = [], [], [], [], []
    readers = dict(zip(PAGE_MODEL_KINDS, [(PageSkeleton, skeletons), (LineShapeModel, line_shapes),
                                          (TitleNavModel, title_navs), (OwnFactsModel, own_facts)], strict=True))
    for i, r in enumerate(records):
        kind = r.get("kind") if isinstance(r, Mapping) else None
        if kind == CONFIG_KIND:
            continue
        if kind not in readers:
            phrases.append(r)
            continue
        model, into = readers[kind]
        try:
            into.append(model.from_record(r, f"{source}: record {i + 1}"))
        except (ValueError, TypeError) as e:
            raise PhraseSetError(str(e), source=source, line=i + 1) from None
    return phrases, skeletons, line_shapes, title_navs, own_facts


def parse_template_records(records: Sequence[Mapping[str, Any]], run_min_length: int | None = None,
                           slots: bool | None = None, *, source: str = "records") -> TemplateRecords:
    """Validate ``records`` (module docstring). ``run_min_length`` / ``slots``: None takes the
    config record's (4 / True without one)."""
    records = list(records)
    mined = _mined_config(records, source)
    run_min_length = mined.get("run_min_length", 4) if run_min_length is None else run_min_length
    slots = mined.get("slots", True) if slots is None else slots
    if not isinstance(run_min_length, int) or isinstance(run_min_length, bool) or run_min_length < 1:
        raise ValueError(f"run_min_length={run_min_length!r}: must be an integer >= 1")
    if not isinstance(slots, bool):
        raise ValueError(f"slots={slots!r}: must be True or False (as TemplateConfig.slots when mined)")
    phrase_records, skeletons, line_shapes, title_navs, own_facts = _page_models(records, source)
    phrase_set = PhraseSet.from_records(phrase_records, source=source)
    if not slots and any(SLOT_TOKEN in p.tokens for p in phrase_set):
        raise ValueError(f"slots=False but some phrases hold the slot token {SLOT_TOKEN!r}: they were mined "
                         "with slots; pass slots=True")
    rules = [rule_of(r, i, source, p.length) for i, (r, p) in enumerate(zip(phrase_records, phrase_set))]
    rule = np.asarray([r for r, _, _ in rules], dtype=np.int8)
    first_line = np.asarray([f for _, _, f in rules], dtype=np.int64)
    length = np.asarray([p.length for p in phrase_set], dtype=np.int64)
    return TemplateRecords(
        records=tuple(records),
        source=source,
        template_config=mined,
        run_min_length=run_min_length,
        slots=slots,
        middle_tokens=int(mined.get("middle_content_tokens", 0)),
        middle_repeated=bool(mined.get("middle_repeated_lines", False)),
        section_line_length=int(mined.get("section_line_length", 0)),
        toc_sections=int(mined.get("toc_sections", 0)),
        # A mining run's exact phrases (no "kind") next to the detector's records: on pages of
        # the sites the detector mined they apply only when the run says so.
        exact_on_sites=bool(mined.get("exact_phrases_on_sites", True)),
        phrase_set=phrase_set,
        # An operator's allow entry (curation "allow") is not a mined phrase: it applies everywhere.
        is_exact=np.asarray([not (isinstance(r, Mapping) and ("kind" in r or r.get("curation") == "allow"))
                             for r in phrase_records], dtype=bool),
        rule=rule,
        anchor=np.asarray([a for _, a, _ in rules], dtype=np.int8),
        first_line=first_line,
        n_lines=np.where(rule == RULE_ANY, 0, 1 + (first_line < length)).astype(np.int64),
        skeletons=tuple(skeletons),
        line_shapes=tuple(line_shapes),
        title_navs=tuple(title_navs),
        own_facts=tuple(own_facts),
        mined_scopes=frozenset(phrase_set.scopes) | {k.scope for k in skeletons if k.scope is not None},
    )
