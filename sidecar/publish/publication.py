"""What a run publishes: phrase documents, the doc map and the run document, from a snapshot
and a mining result. Pure functions of their inputs — the same snapshot content gives the
same documents, which is what makes incremental and resumed runs publish exactly what a
from-scratch run would.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import islice
from urllib.parse import urlsplit

import numpy as np
from opensearchpy import helpers

from bloomspan.engine.mining.engines import mine
from bloomspan.engine.mining.phrases import MiningResult, documents_of
from bloomspan.engine.mining.report import coverage_report_from_counts, covered_per_doc
from bloomspan.sidecar.cluster.document_keys import keys_array
from bloomspan.sidecar.cluster.scroll import doc_key, lookup_field
from bloomspan.sidecar.errors import BloomspanSidecarError

from .bitmaps import bitmap_from_array, coverage_bitmaps, encode_bitmap
from .phrase_records import phrase_document, phrase_document_order
from .template_index import COVERAGE_CHUNK_TOKENS

log = logging.getLogger(__name__)

EXAMPLE_IDS = 5


def mine_snapshot(snapshot, mining_config):
    """Run the configured engine on the snapshot's corpus (an empty corpus has no phrases)."""
    if snapshot.n_tokens == 0:
        return MiningResult(phrases=[], coverage=np.zeros(0, dtype=bool), stats={})
    return mine(snapshot.tokens, snapshot.doc_offsets, mining_config)


def phrase_documents_for(snapshot, result, doc_keys: list[str],
                         progress: Callable | None = None) -> tuple[list[dict], list[np.ndarray]]:
    """Phrase documents (without kind/run_id), ordered by psi desc, length desc, text asc;
    and the document numbers of each, in the same order.

    The documents of a phrase are those of its occurrences (``Phrase.starts``, positions in
    ``snapshot.tokens``, as the engine returned them): no pass over the corpus. Checks that
    they are ``df`` documents and ``occurrences`` starts; a mismatch is a bug and raises.
    """
    vocab = snapshot.vocabulary
    doc_offsets = np.asarray(snapshot.doc_offsets, dtype=np.int64)
    phrases = result.phrases
    if progress:
        progress("bitmaps", 0, len(phrases))
    out = []
    for p in phrases:
        d = _documents_of_phrase(p, doc_offsets)
        tokens = vocab.tokens(p.tokens)
        out.append((phrase_document(p, tokens, [doc_keys[i] for i in d[:EXAMPLE_IDS].tolist()],
                                    encode_bitmap(bitmap_from_array(d))), d))
    out.sort(key=lambda pair: phrase_document_order(pair[0]))
    if progress:
        progress("bitmaps", len(phrases), len(phrases))
    return [doc for doc, _ in out], [d for _, d in out]


def _documents_of_phrase(phrase, doc_offsets: np.ndarray) -> np.ndarray:
    """int64 (df,) ascending documents of ``phrase`` from its occurrence starts."""
    starts = phrase.starts
    if starts is None:
        raise BloomspanSidecarError(
            f"phrase {phrase.tokens[:8]}...: the mining result carries no occurrence starts, which publication "
            "builds the phrase bitmaps from; this is a bug, please report it", item=list(phrase.tokens))
    d = documents_of(starts, doc_offsets)
    if d.size != phrase.df or starts.size != phrase.occurrences:
        raise BloomspanSidecarError(
            f"phrase {phrase.tokens[:8]}...: engine says df={phrase.df}, occurrences={phrase.occurrences}, its "
            f"occurrence starts give df={d.size}, occurrences={starts.size}; this is a bug, please report it",
            item=list(phrase.tokens))
    return d


def coverage_for(result, n_tokens: int) -> list:
    """Coverage bitmaps: one of absolute positions, or chunks for corpora beyond 2**28 tokens."""
    if n_tokens <= COVERAGE_CHUNK_TOKENS:
        return coverage_bitmaps(result.coverage)
    return coverage_bitmaps(result.coverage, COVERAGE_CHUNK_TOKENS)


def site_clutter(site_of_doc: dict[int, str], coverage: np.ndarray, doc_offsets: np.ndarray, top: int) -> list[dict]:
    """Most cluttered sites: covered share of each site's tokens (sites with >= 1 token)."""
    return site_clutter_from_counts(site_of_doc, covered_per_doc(coverage, doc_offsets), doc_offsets, top)


def site_clutter_from_counts(site_of_doc: dict[int, str], covered: np.ndarray, doc_offsets: np.ndarray,
                             top: int) -> list[dict]:
    """:func:`site_clutter` from each document's covered tokens (int (D,)) instead of the mask."""
    lengths = np.diff(doc_offsets)
    tok = defaultdict(int)
    cov = defaultdict(int)
    docs = defaultdict(int)
    for d, site in site_of_doc.items():
        tok[site] += int(lengths[d])
        cov[site] += int(covered[d])
        docs[site] += 1
    rows = [{"site": s, "docs": docs[s], "tokens": tok[s], "covered_tokens": cov[s],
             "covered_share": cov[s] / tok[s]} for s in tok if tok[s] > 0]
    rows.sort(key=lambda r: (-r["covered_share"], -r["covered_tokens"], r["site"]))
    return rows[:top]


def read_document_fields(client, indices: list[str], fields: list[str], doc_keys: list[str],
                         batch_size: int) -> dict[str, list]:
    """``{field: [value of document 0, 1, ...]}`` for the stored documents (``doc_keys`` in
    canonical order); None where a document lacks the field or holds a non-string or empty
    value. One plain ``helpers.scan`` (scroll): the pass is short and restarts as a whole."""
    sorted_keys = keys_array([k.encode("utf-8", "surrogatepass") for k in doc_keys])
    multi = len(indices) > 1
    out: dict[str, list] = {f: [None] * len(doc_keys) for f in fields}
    for hit in helpers.scan(client, index=",".join(indices), query={"_source": list(fields)}, size=batch_size):
        key = doc_key(hit["_index"], hit["_id"], multi).encode("utf-8", "surrogatepass")
        pos = int(np.searchsorted(sorted_keys, key))
        if pos >= len(doc_keys) or sorted_keys[pos] != key:
            continue  # written after the snapshot
        source = hit.get("_source") or {}
        for f in fields:
            value = lookup_field(source, f)
            if isinstance(value, str) and value:
                out[f][pos] = value
    return out


def site_name(value: str | None) -> str | None:
    """A site field's value as a site: a URL counts as its host name."""
    if value and "://" in value:
        return urlsplit(value).hostname or value
    return value


def document_sites(site_values: list | None, url_values: list | None) -> list[str | None] | None:
    """Each document's site: its site field's value (a URL counts as its host) when a site
    field was read, else the host of its URL; None when neither field was read. Mining
    (``--site-field``, ``--url-field``) and ``explain`` both resolve sites here."""
    if site_values is not None:
        return [site_name(v) for v in site_values]
    if url_values is not None:
        return [site_name(u) if u and "://" in u else None for u in url_values]
    return None


def run_report(snapshot, result, doc_keys: list[str], phrase_docs: list[dict], top: int, bins: int) -> dict:
    """The engine's coverage report with keys for documents, and the top phrases taken from
    ``phrase_docs`` (ordered by text on ties, not by token ids, which differ between runs)."""
    return run_report_from_counts(snapshot, covered_per_doc(result.coverage, snapshot.doc_offsets), doc_keys,
                                  phrase_docs, top, bins)


def run_report_from_counts(snapshot, covered: np.ndarray, doc_keys: list[str], phrase_docs: list[dict], top: int,
                           bins: int) -> dict:
    """:func:`run_report` from each document's covered tokens (int (D,)) instead of the mask."""
    rep = coverage_report_from_counts(covered, snapshot.doc_offsets, [], None, top=top, bins=bins)
    return _with_phrases(rep, snapshot.n_tokens, snapshot.skipped_by_reason(), doc_keys, phrase_docs, top)


def run_report_from_figures(figures, skipped_by_reason: dict[str, int], doc_keys: Sequence[str],
                            phrase_docs: list[dict], top: int) -> dict:
    """:func:`run_report` from the documents' summed figures
    (:class:`~.document_figures.DocumentFigures`, what every executor's mined run holds)."""
    return _with_phrases(figures.coverage_report(), figures.tokens, skipped_by_reason, doc_keys, phrase_docs, top)


def _with_phrases(rep: dict, n_tokens: int, skipped_by_reason: dict[str, int], doc_keys: Sequence[str],
                  phrase_docs: list[dict], top: int) -> dict:
    rep["phrases"] = len(phrase_docs)
    rep["top_phrases"] = [{"rank": k, "text": p["text"], "length": p["length"], "df": p["df"],
                           "occurrences": p["occurrences"], "psi": p["psi"],
                           "psi_share": p["psi"] / n_tokens if n_tokens else 0.0}
                          for k, p in enumerate(islice(phrase_docs, top), start=1)]
    for item in rep.get("most_cluttered_docs", []):
        item["id"] = doc_keys[item["doc"]]
    rep["skipped_by_reason"] = dict(skipped_by_reason)
    return rep


def json_safe(value):
    """Stats as JSON: numpy scalars to Python, everything else kept."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
