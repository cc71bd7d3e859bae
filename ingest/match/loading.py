"""Load everything a mining run wrote to disk, for the cleaner: phrases, template records, min_length.

``bloomspan mine --jsonl ... --out DIR`` writes ``DIR/phrases.jsonl`` (exact phrases, each
with the run's ``min_length``), ``DIR/report.json`` and, when the template detector ran (a
site or URL field was given), ``DIR/templates.jsonl``. :func:`load_run_phrases` takes the
path of ``phrases.jsonl`` and returns what the cleaner needs to apply all of it:

* the template records next to it (``templates.jsonl``) join the phrases in one
  :class:`~.template_matcher.TemplateMatcher`, as a cluster run's template index does;
* every phrase ``mine`` writes records its run's ``min_length``; a hand-made phrase list
  that records none is matched whole;
* a file of template records (``bloomspan templates``) or a plain phrase list loads as
  :func:`load_phrase_file` loads it.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import PhraseSetError
from ..records.phrase_set import PhraseSet
from ..records.template_records import is_template_record, read_records
from .template_matcher import TemplateMatcher

logger = logging.getLogger(__name__)

TEMPLATES_FILE = "templates.jsonl"
REPORT_FILE = "report.json"


@dataclass
class RunPhrases:
    """What :func:`load_run_phrases` found.

    phrase_set:     the phrases (with templates: the matcher's phrases, template phrases included).
    templates:      a TemplateMatcher over phrases and template records, or None.
    min_length:     the run's min_length the phrases record (None: not known, they match whole).
    templates_path: the template file applied beside the phrases, or None.
    notes:          one line per thing a user should know (what was joined, what is missing).
    """

    phrase_set: PhraseSet
    templates: TemplateMatcher | None
    min_length: int | None
    templates_path: str | None = None
    notes: list[str] = field(default_factory=list)


def load_phrase_file(path: str | os.PathLike) -> tuple[PhraseSet, TemplateMatcher | None]:
    """A ``phrases.jsonl`` (``bloomspan mine``) or ``templates.jsonl`` (``bloomspan templates``):
    the phrase set, and a :class:`TemplateMatcher` when the file holds template records
    (:func:`is_template_record`), else None. Errors name the file and line."""
    source = os.fspath(path)
    has_templates = False
    with open(source, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if '"kind"' in line or '"slots"' in line:
                try:
                    if is_template_record(json.loads(line)):
                        has_templates = True
                        break
                except json.JSONDecodeError:
                    break  # PhraseSet.from_jsonl reports it with its line number
    if not has_templates:
        return PhraseSet.from_jsonl(source), None
    matcher = TemplateMatcher.from_jsonl(source)
    logger.info("loaded templates from %s: %d phrases, %d skeletons", source, len(matcher.phrase_set),
                len(matcher.skeletons))
    return matcher.phrase_set, matcher


def load_run_phrases(path: str | os.PathLike) -> RunPhrases:
    """Phrases and template records of the run that wrote ``path`` (module docstring)."""
    path = Path(path)
    phrase_set, templates = load_phrase_file(path)
    notes: list[str] = []
    if templates is not None:  # a template file of its own (bloomspan templates)
        return RunPhrases(phrase_set, templates, phrase_set.min_length, None, notes)
    sibling = path.with_name(TEMPLATES_FILE)
    if path.name == TEMPLATES_FILE or not sibling.is_file():
        return RunPhrases(phrase_set, None, phrase_set.min_length, None, notes)
    template_records = read_records(sibling)
    if not any(is_template_record(r) for r in template_records):
        raise PhraseSetError(f"holds no template record (expected the detector's records next to {path.name})",
                             source=os.fspath(sibling))
    configs = [r for r in template_records if isinstance(r, dict) and r.get("kind") == "config"]
    others = [r for r in template_records if not (isinstance(r, dict) and r.get("kind") == "config")]
    records = configs + phrase_set.to_records() + others
    matcher = TemplateMatcher(records, source=f"{path} + {sibling.name}")
    notes.append(f"applying {sibling} too (the template detector's records of the same run)")
    logger.info("loaded run phrases=%d templates=%s template phrases=%d skeletons=%d", len(phrase_set), sibling,
                len(matcher.phrase_set) - len(phrase_set), len(matcher.skeletons))
    return RunPhrases(matcher.phrase_set, matcher, phrase_set.min_length, os.fspath(sibling), notes)


def run_template_records(path: str | os.PathLike) -> list[dict] | None:
    """The template detector's records of the run that wrote ``path``: the file's own when it
    is a template file, else those of ``templates.jsonl`` next to it; None when there are none."""
    path = Path(path)
    own = read_records(path)
    if any(is_template_record(r) for r in own):
        return own
    sibling = path.with_name(TEMPLATES_FILE)
    if path.name != TEMPLATES_FILE and sibling.is_file():
        return read_records(sibling)
    return None
