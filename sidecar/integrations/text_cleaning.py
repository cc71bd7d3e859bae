"""Clean a batch of plain texts for a framework step: the new text and bloomspan's metadata of each.

The framework steps hold text, not documents of fields, so each text is cleaned as the one
field ``text`` of a document. A step's cleaner comes from :func:`step_cleaner` (a run, and the
step's mode); :func:`clean_texts` returns one :class:`CleanedText` per text, in order: in
``strip`` mode the text without its boilerplate, in ``mark`` mode the text as it was; in both
the metadata (:data:`METADATA_KEY`) holds the ``boilerplate_ratio`` and the ``spans`` found,
``[start, end)`` character offsets into the text as it came in with the ids of the phrases
matched inside. A text the cleaner refuses (lone surrogates, over ``max_chars``) comes back
unchanged, its metadata holding the ``error``; nothing is raised for it.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.run_cleaner import cleaner_from_run

log = logging.getLogger(__name__)

METADATA_KEY = "bloomspan"
STEP_MODES = ("strip", "mark")
TEXT = "text"


@dataclass(frozen=True)
class CleanedText:
    """text: the cleaned text (the input in ``mark`` mode or on error); metadata: what
    goes under :data:`METADATA_KEY`; changed: ``text`` differs from the input; dropped: its
    boilerplate_ratio exceeds the cleaner's ``max_ratio``."""

    text: str
    metadata: dict
    changed: bool
    dropped: bool = False


def step_cleaner(run: str | os.PathLike, client=None, mode: str = "strip", **config_fields):
    """A cleaner over ``run`` (:func:`bloomspan.cleaner_from_run`) for one-field text documents;
    ``mode`` is ``"strip"`` or ``"mark"`` (a step has no second field to down-weight into)."""
    if mode not in STEP_MODES:
        raise IngestConfigError("mode", mode, f"must be one of {', '.join(STEP_MODES)} for a pipeline step")
    return cleaner_from_run(run, client, fields=(TEXT,), mode=mode, id_field=None, skip_missing=True,
                            meta_field=METADATA_KEY, **config_fields)


def clean_texts(cleaner, texts: list[str]) -> list[CleanedText]:
    """One :class:`CleanedText` per text (module docstring); ``cleaner`` from :func:`step_cleaner`."""
    results = cleaner.clean_batch({TEXT: t} for t in texts)
    out = []
    for text, result in zip(texts, results):
        if not result.ok:
            log.warning("bloomspan left a text unchanged: %s", result.error)
            out.append(CleanedText(text, {"error": str(result.error)}, False))
            continue
        report = result.fields.get(TEXT)
        spans = [{"start": a, "end": b, "phrase_ids": list(ids)} for a, b, ids in report.spans] if report else []
        new = result.doc[TEXT] if isinstance(result.doc, dict) else text
        out.append(CleanedText(new, {"boilerplate_ratio": result.boilerplate_ratio, "spans": spans}, new != text,
                               result.dropped))
    return out
