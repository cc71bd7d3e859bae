"""A new run's phrases filtered by the curation lists before it is published.

Deny entries without a scope filter the mined phrases (and the template detector's phrase
records) by the containment rule of :mod:`bloomspan.ingest.records.curation`: a phrase that contains
a denied phrase, or lies inside one, is not published, so it stays denied after every re-mine
and ``--annotate`` never writes it onto a document. The run's coverage (its covered share,
clutter report, bitmaps and annotation) is recomputed from the phrases that remain, less
every occurrence of a globally denied phrase (a kept phrase that overlaps one's edge
covers the rest of its occurrence only), as the cleaners do (:mod:`bloomspan.ingest.clean.denied_text`). Scoped
deny entries do not filter a run (its phrases still apply to other sites); every loader
applies them (:mod:`bloomspan.sidecar.publish.template_reader`). Allow entries are not
mined phrases: they join the phrase set when it is loaded.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from bloomspan.engine.mining.coverage import coverage_mask
from bloomspan.ingest.clean.denied_text import occurrence_mask
from bloomspan.ingest.records.curation import CurationEntry, denying_entry

log = logging.getLogger(__name__)

REPORTED_PHRASES = 20  # filtered phrases named in the run report


def global_denies(entries) -> list[CurationEntry]:
    return [e for e in entries if e.action == "deny" and e.scope is None]


def coverage_of(n_tokens: int, phrases) -> np.ndarray:
    """bool (n_tokens,): True inside an occurrence of any of ``phrases`` (engine Phrases, with
    the occurrence ``starts`` every engine returns), without another pass over the corpus."""
    if not phrases or n_tokens == 0:
        return np.zeros(n_tokens, dtype=bool)
    missing = [p for p in phrases if p.starts is None or len(p.starts) != p.occurrences]
    if missing:
        raise ValueError(f"{len(missing)} phrase(s) carry no occurrence starts (or not all of them): the coverage "
                         "after curation is built from the engine's occurrences")
    starts = np.concatenate([np.asarray(p.starts, dtype=np.int64) for p in phrases])
    lengths = np.concatenate([np.full(len(p.starts), p.length, dtype=np.int64) for p in phrases])
    return coverage_mask(n_tokens, starts, lengths)


def denied_occurrences(snapshot, denies) -> np.ndarray:
    """bool (n_tokens,): the snapshot's tokens inside an occurrence of a denied phrase (whole
    tokens, inside one document); a phrase with a token the snapshot never saw occurs nowhere."""
    tokens = np.asarray(snapshot.tokens)
    vocab = snapshot.vocabulary
    patterns = [vocab.ids_of(list(e.tokens)) for e in denies if e.tokens]
    return occurrence_mask(tokens, np.asarray(snapshot.doc_offsets, dtype=np.int64), patterns)


def filter_mining_result(snapshot, result, entries, min_length: int | None = None) -> tuple[object, dict]:
    """``(result, report)``: the mining result without the globally denied phrases (its
    coverage recomputed when one was removed, and uncovered at every occurrence of a denied
    phrase), and what the run report records of it (``protected_tokens``: the covered tokens
    the denied phrases' occurrences kept). ``min_length``: the run's, the window the ingest
    matcher finds phrases by."""
    denies = global_denies(entries)
    vocab = snapshot.vocabulary
    kept, filtered = [], []
    for phrase in result.phrases:
        tokens = vocab.tokens(phrase.tokens)
        entry = denying_entry({"tokens": tokens, "min_length": min_length}, denies) if denies else None
        if entry is None:
            kept.append(phrase)
        else:
            filtered.append({"text": " ".join(tokens), "df": int(phrase.df), "entry_id": entry.id})
    report = {"filtered": len(filtered), "filtered_phrases": filtered[:REPORTED_PHRASES]}
    n_tokens = int(np.asarray(snapshot.tokens).shape[0])
    coverage = coverage_of(n_tokens, kept) if filtered else None
    if denies and n_tokens:
        denied = denied_occurrences(snapshot, denies)
        covered = coverage if coverage is not None else np.asarray(result.coverage, dtype=bool)
        report["protected_tokens"] = int(np.count_nonzero(denied & covered))
        if report["protected_tokens"]:
            coverage = covered & ~denied
    if filtered:
        log.info("curation filtered %d of %d mined phrases", len(filtered), len(result.phrases))
    if report.get("protected_tokens"):
        log.info("curation kept %d covered tokens of denied phrases", report["protected_tokens"])
    if coverage is None:
        return result, report
    return replace(result, phrases=kept, coverage=coverage), report


def filter_template_documents(template_docs: Iterable[tuple[str, dict]], entries
                              ) -> tuple[Iterable[tuple[str, dict]], int]:
    """The template detector's index documents without the globally denied phrase records,
    and how many were left out (``template_docs`` as given, not read, when nothing is denied)."""
    denies = global_denies(entries)
    if not denies:
        return template_docs, 0
    template_docs = list(template_docs)
    kept = [(doc_id, src) for doc_id, src in template_docs
            if src.get("kind") != "template" or denying_entry({**src, "id": src.get("phrase_id")}, denies) is None]
    return kept, len(template_docs) - len(kept)
