"""The template index: a physical index per run behind an alias, swapped atomically.

Names
-----
``NAME`` is an alias; each run writes the physical index ``NAME-<run_id>`` (run ids hold
the time they were minted: ``YYYYMMDDtHHMMSSmmm-xxxx``). Physical indices are recognised by
that exact pattern, so other indices that happen to start with ``NAME-`` are never touched.
Runs are ordered by ``published_at``, the time recorded in the run document when it was
written (right before the write block and the alias swap), not by their ids: history
(:func:`list_runs`), :func:`rollback` and retention all use :func:`publication_order`.

Contents (mapping ``mappings/template-index.json``)
----------------------------------------------------
* ``kind=phrase``, ``_id`` = phrase id: text, tokens, length, df, occurrences, psi,
  example_ids (the first few documents, by canonical number), doc_bitmap;
* ``kind=docmap``, ``_id = docmap-<k>``: ``ids`` = keys of documents
  ``first_member .. first_member+len(ids)-1`` (bitmap member -> ``_id``);
* ``kind=coverage`` (only for very large corpora): coverage chunks, see ``coverage_chunks``;
* ``kind=run``, ``_id = run``: parameters, counts, report, stats, coverage_bitmap.

Publishing protocol (what makes ``kill -9`` safe)
-------------------------------------------------
1. an unfinished physical index of this run (no write block) is deleted and re-created;
2. everything is written with ``helpers.streaming_bulk``; the run document last;
3. refresh, then ``index.blocks.write=true`` — the *completeness marker*: only indices
   carrying it are ever aliased, rolled back to, or counted as runs;
4. the alias moves in ONE ``_aliases`` call (remove old + add new), so a reader of the
   alias sees the old complete set or the new complete set, never a mix or a partial one;
5. the newest ``keep_runs`` complete indices stay; older ones and unfinished leftovers of
   earlier crashed runs are deleted.
"""
from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from opensearchpy import helpers
from opensearchpy.exceptions import NotFoundError, TransportError
from opensearchpy.helpers import BulkIndexError

from bloomspan.mappings import index_template, load
from bloomspan.sidecar.errors import PublishError, RunNotFoundError

from .bitmaps import encode_bitmap
from .clean_index_template import InstallReport, install_clean_templates

log = logging.getLogger(__name__)

RUN_ID_PATTERN = r"\d{8}t\d{9}-[0-9a-f]{4}"
DOCMAP_CHUNK = 10_000           # document keys per docmap document
COVERAGE_INLINE_BYTES = 8 << 20  # larger coverage bitmaps go to kind=coverage chunks
COVERAGE_CHUNK_TOKENS = 1 << 28
RUN_SUMMARY_FIELDS = ["kind", "run_id", "status", "source_index", "field", "started_at", "finished_at", "published_at",
                      "docs_seen", "docs_skipped", "tokens_mined", "covered_tokens", "covered_share", "phrases",
                      "params", "doc_id_chunks", "coverage_chunks"]


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_run_id(now: float | None = None) -> str:
    """Sortable run id: UTC time to the millisecond plus 4 random hex digits."""
    t = time.time() if now is None else now
    dt = datetime.fromtimestamp(t, tz=UTC)
    return f"{dt:%Y%m%dt%H%M%S}{dt.microsecond // 1000:03d}-{secrets.token_hex(2)}"


def physical_name(name: str, run_id: str) -> str:
    return f"{name}-{run_id}"


def template_alias_of(physical_index: str) -> str | None:
    """The template alias a physical run index ``<alias>-<run id>`` belongs to, else None."""
    m = re.fullmatch("(.+)-" + RUN_ID_PATTERN, physical_index)
    return m.group(1) if m else None


def run_id_of(name: str, index: str) -> str | None:
    """The run id if ``index`` is a physical index of template ``name``, else None."""
    m = re.fullmatch(re.escape(name) + "-(" + RUN_ID_PATTERN + ")", index)
    return m.group(1) if m else None


# ---------------------------------------------------------------------- cluster state
def aliased_indices(client, name: str) -> list[str]:
    """Indices the alias ``name`` points at now (normally zero or one)."""
    resp = client.indices.get_alias(name=name, ignore=[404])  # ignore: no warning logged for "absent"
    if not resp or "error" in resp or resp.get("status") == 404:
        return []
    return sorted(resp)


def physical_indices(client, name: str) -> dict[str, dict]:
    """Physical indices of ``name``: ``{index: {"run_id", "complete", "aliased"}}``."""
    try:
        # number_of_shards is always set: filtering on blocks.write alone would omit the
        # unfinished indices, which lack it.
        settings = client.indices.get_settings(index=f"{name}-*", name="index.blocks.write,index.number_of_shards",
                                               expand_wildcards="all")
    except NotFoundError:
        settings = {}
    aliased = set(aliased_indices(client, name))
    out = {}
    for index, body in settings.items():
        run_id = run_id_of(name, index)
        if run_id is None:
            continue
        blocked = str(body.get("settings", {}).get("index", {}).get("blocks", {}).get("write", "false"))
        out[index] = {"run_id": run_id, "complete": blocked == "true", "aliased": index in aliased}
    return out


def _check_alias_name(client, name: str) -> None:
    if client.indices.exists(index=name) and not client.indices.exists_alias(name=name):
        raise PublishError(f"{name!r} is a concrete index, but the template index name must be free for an "
                           "alias; choose another --template-index or delete that index", index=name,
                           field="template_index")


def swap_alias(client, name: str, target: str) -> list[str]:
    """Point alias ``name`` at ``target`` only, in one atomic ``_aliases`` call; returns the
    indices it pointed at before."""
    for attempt in range(3):
        previous = aliased_indices(client, name)
        actions = [{"remove": {"index": old, "alias": name}} for old in previous if old != target]
        actions.append({"add": {"index": target, "alias": name}})
        try:
            client.indices.update_aliases(body={"actions": actions})
            log.info("alias %s -> %s (was %s)", name, target, previous or "unset")
            return previous
        except NotFoundError:  # an index in `previous` vanished in between: read again
            if attempt == 2:
                raise
    return []


# ---------------------------------------------------------------------- publishing
@dataclass
class PublishResult:
    physical_index: str
    previous: list[str]
    deleted: list[str] = field(default_factory=list)
    written_docs: int = 0
    reused: bool = False


def docmap_documents(keys: Sequence[str], first_member: int, run_id: str | None = None) -> Iterator[dict]:
    """The ``kind=docmap`` actions of documents ``first_member ..`` (a multiple of
    DOCMAP_CHUNK), ``keys`` their keys in number order: one per DOCMAP_CHUNK keys. Without
    ``run_id`` the documents lack it (a Dask run's staged doc map, :mod:`bloomspan.sidecar.distributed.doc_map`)."""
    if first_member % DOCMAP_CHUNK:
        raise ValueError(f"doc map documents start at a multiple of {DOCMAP_CHUNK}, not {first_member}")
    for off in range(0, len(keys), DOCMAP_CHUNK):
        k = (first_member + off) // DOCMAP_CHUNK
        source = {"kind": "docmap", "chunk": k, "first_member": first_member + off,
                  "ids": list(keys[off:off + DOCMAP_CHUNK])}
        if run_id is not None:
            source["run_id"] = run_id
        yield {"_id": docmap_id(k), "_source": source}


def docmap_id(chunk: int) -> str:
    return f"docmap-{chunk:06d}"


def docmap_chunks(n_docs: int) -> int:
    """The docmap documents of a run of ``n_docs`` stored documents."""
    return -(-n_docs // DOCMAP_CHUNK)


@runtime_checkable
class WrittenDocMap(Protocol):
    """A doc map whose documents publication does not stream itself: a Dask run's, staged in
    the cluster by the workers and copied into the run's index by them
    (:class:`bloomspan.sidecar.distributed.doc_map.StagedDocMap`). ``len`` is the number of
    documents; ``write_into(physical, run_id)`` writes the ``docmap_chunks(len)`` documents
    and returns how many it wrote."""

    def __len__(self) -> int: ...

    def write_into(self, physical: str, run_id: str) -> int: ...


# A bulk request's body at most (and the documents of one request are what the publishing
# process holds at once): a phrase document's bitmap grows with its documents (~600 KB for a
# phrase on 5 M pages), so a count alone would let one request of 500 of them reach hundreds of MB.
BULK_MAX_BYTES = 8 << 20


def write_documents(client, index: str, actions: Iterable[dict], bulk_docs: int, progress=None,
                    total: int | None = None) -> int:
    """Index ``actions`` (``_id``, ``_source``) into ``index`` in bulk requests of ``bulk_docs``
    (and at most :data:`BULK_MAX_BYTES`), with retries; PublishError (naming the index and the first failed item) if any fails."""
    done = 0
    try:
        for _ok, _item in helpers.streaming_bulk(client, ({"_index": index, **a} for a in actions),
                                               chunk_size=bulk_docs, max_chunk_bytes=BULK_MAX_BYTES,
                                               raise_on_error=True, max_retries=3, initial_backoff=1):
            done += 1
            if progress and done % bulk_docs == 0:
                progress("publish", done, total)
    except BulkIndexError as exc:
        first = exc.errors[0] if exc.errors else None
        raise PublishError(f"writing {index} failed for {len(exc.errors)} document(s); first: {first}",
                           index=index, item=exc.errors[:5]) from None
    except TransportError as exc:
        raise PublishError(f"writing {index} failed after {done} document(s): {exc}", index=index) from exc
    return done


def publish(client, name: str, run_id: str, *, phrase_docs: Sequence[dict], doc_keys: Sequence[str],
            coverage, run_doc: dict, keep_runs: int = 3, bulk_docs: int = 500,
            before_swap: Callable[[], None] | None = None,
            progress: Callable[[str, int, int | None], None] | None = None,
            extra_docs: Sequence[tuple[str, dict]] = ()) -> PublishResult:
    """Write run ``run_id`` to ``NAME-<run_id>`` and move alias ``name`` to it (see module doc).

    phrase_docs: phrase documents without ``kind``/``run_id`` (must hold ``phrase_id``).
    doc_keys:    key of each document number (the doc map), canonical order; or a
                 :class:`WrittenDocMap` whose documents are written by others (a Dask run's workers).
    coverage:    pyroaring BitMaps from :func:`.bitmaps.coverage_bitmaps` (one bitmap of
                 absolute positions, or chunks of COVERAGE_CHUNK_TOKENS): a list or any sized
                 iterable of them (read once, a chunk at a time).
    run_doc:     run document fields (counts, params, report, stats) without kind/run_id.
    extra_docs:  ``(_id, source)`` pairs written with the phrases (template detector records,
                 ``mine --templates``); each source holds its own ``kind``, run_id is added.
    before_swap: called right before the alias moves (the lease check); may raise.
    """
    if keep_runs < 1:
        raise ValueError(f"keep_runs={keep_runs}: must be >= 1")
    _check_alias_name(client, name)
    physical = physical_name(name, run_id)
    state = physical_indices(client, name).get(physical)
    if state and state["aliased"]:
        log.info("%s is already published (resumed after the alias swap)", physical)
        deleted = apply_retention(client, name, keep_runs, exclude=physical)
        return PublishResult(physical, [physical], deleted, 0, reused=True)
    written = 0
    if not (state and state["complete"]):
        if state:
            log.info("deleting unfinished %s left by an interrupted attempt", physical)
            client.indices.delete(index=physical)
        body = load("template-index")["template"]
        client.indices.create(index=physical, body=body)
        written_elsewhere = isinstance(doc_keys, WrittenDocMap)
        total = len(phrase_docs) + len(extra_docs) + docmap_chunks(len(doc_keys))

        def actions():
            for doc in phrase_docs:
                yield {"_id": doc["phrase_id"], "_source": {"kind": "phrase", "run_id": run_id, **doc}}
            for doc_id, doc in extra_docs:
                yield {"_id": doc_id, "_source": {**doc, "run_id": run_id}}
            if not written_elsewhere:
                yield from docmap_documents(doc_keys, 0, run_id)

        written = write_documents(client, physical, actions(), bulk_docs, progress, total)
        if written_elsewhere:
            written += doc_keys.write_into(physical, run_id)
        run_source = {"kind": "run", "run_id": run_id, "status": "complete", **run_doc,
                      "published_at": _now_iso(), "doc_id_chunks": docmap_chunks(len(doc_keys))}
        encoded = (encode_bitmap(bm) for bm in coverage)  # one chunk at a time (they may be files)
        first = next(encoded) if len(coverage) == 1 else None
        if first is not None and len(first) <= COVERAGE_INLINE_BYTES:
            run_source["coverage_bitmap"] = first
            run_source["coverage_chunks"] = 0
        else:
            run_source["coverage_chunks"] = len(coverage)
            chunks = [first] if first is not None else encoded
            written += write_documents(client, physical, ({"_id": f"coverage-{k:06d}", "_source": {
                "kind": "coverage", "run_id": run_id, "chunk": k, "first_member": k * COVERAGE_CHUNK_TOKENS,
                "coverage_bitmap": e}} for k, e in enumerate(chunks)), 1, None, None)
        client.index(index=physical, id="run", body=run_source)
        written += 1
        client.indices.refresh(index=physical)
        client.indices.put_settings(index=physical, body={"index.blocks.write": True})
        if progress:
            progress("publish", written, written)
    if before_swap is not None:
        before_swap()
    previous = swap_alias(client, name, physical)
    deleted = apply_retention(client, name, keep_runs, exclude=physical)
    return PublishResult(physical, previous, deleted, written)


def _run_documents(client, indices: Iterable[str], fields: list[str]) -> dict[str, dict]:
    """``{physical index: run document fields}`` of the indices that have a run document."""
    indices = sorted(indices)
    if not indices:
        return {}
    resp = client.search(index=",".join(indices), body={
        "size": len(indices), "query": {"term": {"kind": "run"}}, "_source": fields}, ignore_unavailable=True)
    return {hit["_index"]: hit["_source"] for hit in resp["hits"]["hits"]}


def _publication_key(doc: dict | None, run_id: str) -> tuple:
    """Sort key of a run by publication time: ``published_at``, else (runs published before
    it was recorded) ``finished_at``, then the run id; runs without a run document first."""
    when = (doc or {}).get("published_at") or (doc or {}).get("finished_at")
    if not when:
        return (0, 0.0, run_id)
    try:
        t = datetime.fromisoformat(str(when).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return (0, 0.0, run_id)
    return (1, t, run_id)


def publication_order(client, name: str, indices: dict[str, dict] | None = None,
                      docs: dict[str, dict] | None = None) -> list[str]:
    """Physical indices of ``name``, oldest publication first (:func:`_publication_key`)."""
    indices = physical_indices(client, name) if indices is None else indices
    if docs is None:
        docs = _run_documents(client, indices, ["published_at", "finished_at"])
    return sorted(indices, key=lambda i: _publication_key(docs.get(i), indices[i]["run_id"]))


def apply_retention(client, name: str, keep_runs: int, exclude: str | None = None) -> list[str]:
    """Delete complete runs beyond the newest ``keep_runs`` (by publication time) and
    unfinished leftovers.

    The aliased index and ``exclude`` (the run in progress) are never deleted.
    """
    indices = physical_indices(client, name)
    complete = [i for i in reversed(publication_order(client, name, indices)) if indices[i]["complete"]]
    keep = set(complete[:keep_runs]) | {i for i, s in indices.items() if s["aliased"]}
    if exclude:
        keep.add(exclude)
    doomed = sorted(i for i in indices if i not in keep)
    for index in doomed:
        client.indices.delete(index=index, ignore_unavailable=True)
        log.info("deleted %s (%s)", index, "old run" if indices[index]["complete"] else "unfinished")
    return doomed


def rollback(client, name: str, to_run: str | None = None) -> dict:
    """Move alias ``name`` back to an earlier complete run (default: the newest one older
    than the current). ``to_run`` is a run id or a physical index name.
    Returns ``{"from": [...], "to": physical}``."""
    indices = physical_indices(client, name)
    current = [i for i, s in indices.items() if s["aliased"]]
    complete = [i for i in publication_order(client, name, indices) if indices[i]["complete"]]
    if to_run is None:
        if not current:
            raise RunNotFoundError(f"alias {name!r} points at no run; give --to RUN_ID", index=name)
        older = complete[:complete.index(current[0])] if current[0] in complete else []
        if not older:
            raise RunNotFoundError(f"no complete run of {name!r} older than {current[0]} is kept "
                                   f"(kept: {complete}); raise --keep-runs for next time", index=name)
        target = older[-1]
    else:
        target = to_run if to_run in indices else physical_name(name, to_run)
        if target not in indices:
            raise RunNotFoundError(f"run {to_run!r} of {name!r} does not exist (kept: "
                                   f"{[indices[i]['run_id'] for i in complete]})", index=name, item=to_run)
        if not indices[target]["complete"]:
            raise RunNotFoundError(f"run {to_run!r} of {name!r} never finished publishing; it cannot be "
                                   "aliased", index=target, item=to_run)
    previous = swap_alias(client, name, target)
    return {"from": previous, "to": target, "run_id": indices[target]["run_id"]}


def list_runs(client, name: str) -> list[dict]:
    """Run history of ``name``, newest publication first: the run document's summary fields plus
    ``physical_index``, ``current`` (aliased now) and ``complete``. ``status`` is the run
    document's, ``incomplete`` for an index still being written (or abandoned mid-write), and
    ``interrupted`` for a complete run newer than the alias that is not a dry run: its
    ``mine`` stopped between writing it and moving the alias, and the next ``mine`` with the
    same work directory moves the alias to it."""
    indices = physical_indices(client, name)
    if not indices:
        return []
    docs = _run_documents(client, indices, RUN_SUMMARY_FIELDS)
    out = []
    current = [s["run_id"] for s in indices.values() if s["aliased"]]
    for index in reversed(publication_order(client, name, indices, docs)):
        s = indices[index]
        doc = docs.get(index) or {"run_id": s["run_id"], "status": "incomplete"}
        if not s["complete"]:
            doc = {**doc, "status": "incomplete"}
        elif not s["aliased"] and not (doc.get("params") or {}).get("dry_run") and all(r < s["run_id"] for r in current):
            # complete, newer than the alias and not a dry run: a run stopped before its alias
            # moved, which the next `mine` with its work directory publishes as it is
            doc = {**doc, "status": "interrupted"}
        out.append({**doc, "physical_index": index, "current": s["aliased"], "complete": s["complete"]})
    return out


def current_run_doc(client, name: str, with_bitmap: bool = False) -> dict:
    """The run document behind alias ``name`` (plus ``physical_index``)."""
    current = aliased_indices(client, name)
    if not current:
        raise RunNotFoundError(f"template index {name!r} has no published run yet; run `bloomspan mine`",
                               index=name)
    excludes = [] if with_bitmap else ["coverage_bitmap"]
    doc = client.get(index=current[0], id="run", _source_excludes=excludes)
    return {**doc["_source"], "physical_index": current[0]}


def setup(client, name: str, lease_index: str, source_index: str | None = None,
          clean_indices: Sequence[str] = (), fields: Sequence[str] = ("text",), report=None) -> list[str]:
    """Install the index templates of ``mappings/`` (template index, lease index) and, for
    ``source_index`` (the mined source, which ``--annotate`` writes onto) and each of
    ``clean_indices`` (the indices the proxy writes cleaned documents into), the document
    fields as a composable template plus a mapping on the indices that exist
    (:mod:`.clean_index_template`). Returns what was installed, as lines; what could not be
    goes to ``report.problems`` (an :class:`~.clean_index_template.InstallReport`) when given."""
    done = []
    client.indices.put_index_template(name=name, body=index_template("template-index", [f"{name}-*"]))
    done.append(f"index template {name} -> {name}-*")
    client.indices.put_index_template(name=lease_index, body=index_template("lease", [lease_index]))
    done.append(f"index template {lease_index} -> {lease_index}")
    patterns = [p for p in (source_index, *clean_indices) if p]
    if patterns:
        documents = install_clean_templates(client, patterns, fields)
        done.extend(documents.lines)
        (report if report is not None else InstallReport()).problems.extend(documents.problems)
    return done
