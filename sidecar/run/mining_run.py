"""One mining run against a live cluster: read, assemble, mine, publish, annotate.

``run_mining(MineConfig(...), progress=callback) -> RunSummary``. Phases (the state machine
of :mod:`.run_state`: its ``Phase`` enum, the ``TRANSITIONS`` table and the typed
``RunState``), each recorded in the run's checkpoint (``<work_dir>/run/checkpoint.json``)
so that a run killed at any moment continues where it stopped when started again with the
same work directory:

  scan      full read of the field into the corpus store (or, incremental:)
  list      keys and versions of every document        \\ only when the previous run's
  fetch     texts of new and changed documents          / snapshot can be reused
  assemble  canonical snapshot (:mod:`.snapshot`)
  mine      mine, curation filter, bitmaps (from the phrases' occurrences), templates: the mined run
            (:mod:`.mined_run`), on this node (:mod:`.local_mining`) or on Dask (:mod:`.dask_mining`,
            whose workers read the index themselves: no scan, assemble or snapshot)
  publish   report and run document (:mod:`.run_record`), write ``NAME-<run_id>``, swap the alias
  annotate  (opt-in) ratios and spans onto the source documents
  finalize  the snapshot becomes the base of the next incremental run (on Dask: the slices'
            reads the workers kept, :mod:`bloomspan.sidecar.distributed.slice_state`)

The whole run holds the cluster lease (:mod:`.lease`) and a file lock on the work
directory; the lease is checked right before the alias moves.

A run never publishes a phrase set that would silently stop the cleaning (:mod:`.run_guards`):
it refuses (:class:`~.run_guards.RunRefusedError`, naming the flag; nothing published, the alias stays where it
was, the unfinished run is discarded) when it read 0 usable documents (an empty index, a
mistyped ``--field`` or a field that holds no text), when ``--sigma`` exceeds the
documents read, or when it found 0 phrases while the alias holds a run with phrases.
``allow_empty`` (``--allow-empty``) publishes anyway.

Before publication the run's phrases are filtered by the operator's deny entries
(:mod:`bloomspan.sidecar.curation.run_filter`); the run report's ``curation`` says how many
were filtered. ``dry_run`` (``--dry-run``) publishes the run complete but leaves the alias
where it is (and annotates nothing): ``bloomspan diff`` compares it, ``bloomspan promote``
moves the alias to it.
"""
from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field as dc_field
from pathlib import Path

import numpy as np

from bloomspan.engine.text.corpus_store import CorpusStore
from bloomspan.sidecar.cluster.scroll import ScanUnit, SourceScan, pit_supported, resolve_units
from bloomspan.sidecar.distributed.doc_map import delete_staging_indices, staging_index_name
from bloomspan.sidecar.distributed.slice_state import SliceState
from bloomspan.sidecar.errors import BloomspanSidecarError, CheckpointError, ClusterConfigError, WorkDirFullError
from bloomspan.sidecar.publish.template_index import (
    PublishResult,
    new_run_id,
    physical_indices,
    physical_name,
    publish,
)

from .annotate import annotate
from .checkpoint import Checkpoint, DocLog, write_json_atomic
from .collect import collect_fetch, collect_scan
from .dask_mining import (
    DaskSession,
    annotate_on_dask,
    check_supported,
    mine_index_on_dask,
    staged_doc_map,
)
from .incremental import assemble_full, assemble_incremental, plan
from .lease import Lease, new_holder
from .local_mining import mine_on_this_node
from .mine_config import MineConfig
from .mined_run import MinedRun
from .run_guards import RunRefusedError, check_phrases, no_documents
from .run_record import now_iso, published_count, run_document, run_report, summary_fields
from .run_state import Phase, RunState, first_phase
from .snapshot import Snapshot

log = logging.getLogger(__name__)

Progress = Callable[[str, int, "int | None"], None]
MINED_PARTS = "mined-parts"  # <run_dir>/mined-parts: a Dask run's phrase documents and template records, as they come
DASK_SLICES = "dask-slices"  # <work_dir>/dask-slices: each slice's last read on Dask (incremental runs)


class _DryRunStop(Exception):
    """Raised right before the alias would move in a dry run: the run index is complete."""


@dataclass
class RunSummary:
    run_id: str
    physical_index: str
    template_index: str
    kind: str                   # "full" or "incremental"
    resumed: bool
    docs_seen: int
    docs_mined: int
    docs_skipped: int
    skipped_by_reason: dict
    tokens_mined: int
    covered_tokens: int
    covered_share: float
    phrases: int
    incremental: dict = dc_field(default_factory=dict)
    annotate: dict | None = None
    deleted_runs: list = dc_field(default_factory=list)
    seconds: dict = dc_field(default_factory=dict)
    templates: dict | None = None  # with --templates: phrases, skeletons, covered tokens and share
    dry_run: bool = False  # published without moving the alias
    curation: dict | None = None  # what the deny entries filtered (the run report's "curation")

    def as_dict(self) -> dict:
        """JSON-serialisable; the keys are the names ``serve``'s metrics read (sidecar/publish/run_names.py)."""
        return asdict(self)


class _WorkDirLock:
    """An exclusive flock on ``<work_dir>/.lock``: one run per work directory."""

    def __init__(self, work: Path):
        self.path = work / ".lock"
        self.fd: int | None = None

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            self.fd = None
            raise BloomspanSidecarError(f"another bloomspan run uses the work directory {self.path.parent}; "
                                        "wait for it or give another --work-dir", field="work_dir") from None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _base_snapshot(work: Path, config: MineConfig):
    """The previous run's snapshot if an incremental run can build on it, else None."""
    path = work / "base.json"
    if config.scan.full or not path.exists():
        return None
    base = json.loads(path.read_text())
    if base.get("source") != config.source_fingerprint():
        log.info("previous snapshot was made from another source/field/timestamp setting: full run")
        return None
    try:
        snap = Snapshot(work / base["snapshot"])
    except CheckpointError as exc:
        log.warning("previous snapshot unusable (%s): full run", exc)
        return None
    if config.publish.annotate and not snap.with_offsets:
        log.info("previous snapshot has no character offsets and --annotate needs them: full run")
        return None
    return snap


def _dask_base(work: Path, config: MineConfig) -> bool:
    """Can a Dask run read incrementally? Yes once a Dask run of this source finished in this
    work directory: its workers kept each slice's read under ``<work_dir>/dask-slices``
    (:mod:`bloomspan.sidecar.distributed.slice_state`; a slice whose read is not found there is
    read in full)."""
    path = work / DASK_SLICES / "base.json"
    if config.scan.full or not path.exists():
        return False
    if json.loads(path.read_text()).get("source") != config.source_fingerprint():
        log.info("the last Dask run read another source/field/timestamp setting: full run")
        return False
    return True


def run_mining(config: MineConfig, progress: Progress | None = None, client=None, dask=None,
               on_dashboard: Callable[[str | None], None] | None = None) -> RunSummary:
    """Run (or resume) a mining run; see the module docstring. ``dask``: a
    :class:`~bloomspan.sidecar.distributed.cluster.DaskConfig` to mine on its workers (the
    many-worker case of the same run: same phases, lease, checkpoint and publication), else
    this process mines; ``on_dashboard(link)`` is called once the Dask client is up."""
    if dask is not None:
        check_supported(config)
    work = Path(config.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    if client is None:
        client = config.cluster.checked_client()
    with _WorkDirLock(work):
        return _Run(config, client, work, progress, dask, on_dashboard).run()


class _Run:
    """One run of :func:`run_mining`: loads or makes its :class:`.run_state.RunState`, then
    calls the phase the state names until it is done (the phases and their order are in
    :mod:`.run_state`)."""

    def __init__(self, config: MineConfig, client, work: Path, progress: Progress | None, dask=None,
                 on_dashboard=None):
        self.config, self.client, self.work = config, client, work
        self.progress = progress
        self.dask = dask
        # The Dask client, opened by the mine phase, stays for the annotate phase (the shards
        # it read stay on the workers); it closes with the run.
        self.session = DaskSession(dask, on_dashboard) if dask is not None else None
        self.executor = "local" if dask is None else "dask"
        self.run_dir = work / "run"
        self.ckpt = Checkpoint(self.run_dir / "checkpoint.json")
        self.phases: dict[Phase, Callable[[], Phase]] = {
            Phase.SCAN: self.read_everything, Phase.LIST: self.list_versions, Phase.FETCH: self.fetch_changed,
            Phase.ASSEMBLE: self.assemble_snapshot, Phase.MINE: self.mine_corpus, Phase.PUBLISH: self.publish_run,
            Phase.ANNOTATE: self.annotate_sources, Phase.FINALIZE: self.finalize}

    def save(self) -> None:
        self.ckpt.save(self.state.to_checkpoint())

    def _load_state(self) -> RunState | None:
        """The unfinished run's state, or None (none, or started with other settings: discarded)."""
        saved = self.ckpt.load()
        if saved is None:
            return None
        state = RunState.from_checkpoint(saved, self.ckpt.path)
        c = self.config
        if (state.source, state.template_index, state.annotate, state.executor) != (
                c.source_fingerprint(), c.publish.template_index, c.publish.annotate, self.executor):
            log.warning("discarding the unfinished run in %s: it was started with other settings", self.run_dir)
            shutil.rmtree(self.run_dir)
            return None
        return state

    def _new_state(self, holder: str) -> RunState:
        c = self.config
        indices, units = resolve_units(self.client, c.scan.index)
        if c.scan.timestamp_field:
            found = self.client.indices.get_field_mapping(fields=c.scan.timestamp_field, index=",".join(indices))
            unmapped = [i for i in indices if not found.get(i, {}).get("mappings")]
            if unmapped:
                raise ClusterConfigError("timestamp_field", c.scan.timestamp_field,
                                         f"is not mapped in {', '.join(unmapped)}; give a date or numeric field "
                                         "that changes with every update, or leave it out to compare _seq_no")
        if not c.publish.allow_empty and self.client.count(index=",".join(indices))["count"] == 0:
            raise no_documents(c, indices)
        base = _base_snapshot(self.work, c) if self.executor == "local" else None
        mode = c.scan.scan_mode
        if mode == "auto":
            mode = "pit" if pit_supported(self.client, indices[0], c.scan.pit_keep_alive) else "scroll"
        kind = "incremental" if base is not None or (self.executor == "dask" and _dask_base(self.work, c)) \
            else "full"
        return RunState(source=c.source_fingerprint(), template_index=c.publish.template_index, annotate=c.publish.annotate,
                        run_id=new_run_id(), holder=holder, started_at=now_iso(), kind=kind,
                        base=str(base.folder.relative_to(self.work)) if base is not None else None,
                        phase=first_phase(kind, self.executor), indices=indices,
                        units=[[u.index, u.shard, u.n_shards] for u in units], scan_mode=mode,
                        executor=self.executor)

    def run(self) -> RunSummary:
        """Load or start the run, then go through its phases holding the lease. A new run's
        state is made only once the lease is held: a run the lease turns away leaves nothing
        behind to resume later. A full work directory stops the run with a
        :class:`WorkDirFullError` naming it; its checkpoint (replaced atomically) stays, so
        the same run resumes once there is space."""
        try:
            return self._run()
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            where = f" (writing {exc.filename})" if exc.filename else ""
            raise WorkDirFullError(f"no space left in the work dir {self.work}{where}: free space there, or give "
                                   "--work-dir on a larger disk, and run the same command again (it resumes "
                                   "from its checkpoint)", item=str(self.work)) from exc
        finally:
            if self.session is not None:
                self.session.close(self.client)

    def _run(self) -> RunSummary:
        c = self.config
        state = self._load_state()
        self.resumed = state is not None
        self._minted = False
        t_total = time.perf_counter()
        holder = state.holder if state is not None else new_holder()
        with Lease(self.client, c.publish.lease_index, c.publish.template_index, holder=holder, ttl=c.publish.lease_ttl,
                   run_id=state.run_id if state is not None else None) as lease:
            self.lease = lease
            if state is None:
                shutil.rmtree(self.run_dir, ignore_errors=True)
                self.run_dir.mkdir(parents=True)
                state = self._new_state(holder)
                lease.run_id = state.run_id
            else:
                log.info("resuming run %s at phase %s", state.run_id, state.phase)
            self.state = state
            self.save()
            try:
                while state.phase is not Phase.DONE:
                    phase = state.phase
                    t0 = time.perf_counter()
                    following = self.phases[phase]()
                    state.seconds[phase] = state.seconds.get(phase, 0.0) + time.perf_counter() - t0
                    state.advance(following)
                    if phase is not Phase.FINALIZE:  # finalize removed the run folder
                        self.save()
            except RunRefusedError as exc:
                log.info("run refused, nothing published: %s", exc)
                shutil.rmtree(self.run_dir, ignore_errors=True)  # the next run reads the source afresh
                raise
        state.seconds["total"] = time.perf_counter() - t_total
        return RunSummary(**{**state.summary, "seconds": state.seconds, "resumed": self.resumed})

    # ------------------------------------------------------------------ reading
    def _units(self) -> list[ScanUnit]:
        return [ScanUnit(i, s, n) for i, s, n in self.state.units]

    def _scan(self, section: str, field: str | None, store, stem: str) -> None:
        c = self.config
        sec = self.state.section(section)
        doclog = DocLog(self.run_dir, stem, sec.get("doclog"))
        try:
            total = self.client.count(index=",".join(self.state.indices))["count"]
            scan = SourceScan(self.client, self._units(), field=field, multi_index=len(self.state.indices) > 1,
                              ts_field=c.scan.timestamp_field, batch_size=c.scan.batch_size, workers=c.scan.slices,
                              keep_alive=c.scan.pit_keep_alive, mode=self.state.scan_mode,
                              positions=sec.setdefault("positions", {}), done=set(sec.get("done", [])),
                              pit_ids=sec.get("pit_ids", {}), outage_seconds=c.scan.outage_seconds)
            stats = collect_scan(scan, store, doclog, sec, self.save, checkpoint_seconds=c.scan.checkpoint_seconds,
                                 progress=self.progress, total=total, stage=section)
            sec["docs_per_second"] = stats["docs"] / stats["seconds"] if stats["seconds"] else None
        finally:
            doclog.close()

    def _store(self, name: str) -> CorpusStore:
        path = self.run_dir / name
        if (path / "manifest.json").exists():
            return CorpusStore.open(path)
        return CorpusStore.create(path, with_offsets=self.config.publish.annotate)

    def read_everything(self) -> Phase:
        """scan: every document's field into the corpus store."""
        store = self._store("store")
        try:
            self._scan("scan", self.config.scan.field, store, "scan")
        finally:
            store.close()
        return Phase.ASSEMBLE

    def list_versions(self) -> Phase:
        """list: every document's key and version (incremental runs)."""
        self._scan("list", None, None, "list")
        return Phase.FETCH

    def _plan(self):
        base = Snapshot(self.work / self.state.base)
        with DocLog(self.run_dir, "list", self.state.listing["doclog"]) as listing:
            return base, plan(listing, base, use_timestamp=self.config.scan.timestamp_field is not None)

    def fetch_changed(self) -> Phase:
        """fetch: the texts of new and changed documents (incremental runs)."""
        base, the_plan = self._plan()
        self.state.counts["incremental"] = the_plan.counts(base.n_all)
        keys = the_plan.fetch_keys
        store = self._store("delta")
        sec = self.state.section("fetch")
        doclog = DocLog(self.run_dir, "fetch", sec.get("doclog"))
        try:
            collect_fetch(self.client, keys, self.state.indices, self.config.scan.field, self.config.scan.timestamp_field,
                          store, doclog, sec, self.save, batch_size=self.config.scan.batch_size,
                          checkpoint_seconds=self.config.scan.checkpoint_seconds, progress=self.progress)
        finally:
            doclog.close()
            store.close()
        return Phase.ASSEMBLE

    def assemble_snapshot(self) -> Phase:
        """assemble: the canonical snapshot, from the scan, or from the base and the fetch."""
        c, st = self.config, self.state
        info = {"run_id": st.run_id, "source": c.source_fingerprint(), "indices": st.indices}
        out = self.run_dir / "snapshot"
        if self.progress:
            self.progress("assemble", 0, None)
        full = st.kind == "full"
        store = self._store("store" if full else "delta")
        try:
            if full:
                with DocLog(self.run_dir, "scan", st.scan["doclog"]) as doclog:
                    snap = assemble_full(out, doclog, store, info, c.publish.annotate)
            else:
                base, the_plan = self._plan()
                with DocLog(self.run_dir, "fetch", st.fetch["doclog"]) as fetch_log:
                    snap = assemble_incremental(out, the_plan, base, fetch_log, store, info, c.publish.annotate)
        finally:
            store.close()
        if self.progress:
            self.progress("assemble", snap.n_all, snap.n_all)
        return Phase.MINE

    # ------------------------------------------------------------------ mining and publishing
    def mine_corpus(self) -> Phase:
        """mine: the corpus mined on this node (the snapshot) or on Dask (the workers read the
        index), the curation filter, the bitmaps and the templates, saved as the run folder's
        mined run (:class:`.mined_run.MinedRun`) for the publish phase."""
        c, st = self.config, self.state
        if st.executor == "dask":
            staging = staging_index_name(c.publish.template_index, st.run_id)
            # earlier runs' staged doc maps (the lease lets this run alone mine the template index)
            delete_staging_indices(self.client, c.publish.template_index, keep=staging)
            mined = mine_index_on_dask(c, self.client, self.session, st.indices, self._units(), st.scan_mode,
                                       st.seconds, staging, self.run_dir / MINED_PARTS, self.progress,
                                       self._slice_state())
            if st.kind == "incremental":
                st.counts["incremental"] = self.session.incremental
        else:
            snap = Snapshot(self.run_dir / "snapshot")
            mined, coverage = mine_on_this_node(c, self.client, snap, st.indices, st.seconds, self.progress)
            if c.publish.annotate:
                np.save(self.run_dir / "coverage.npy", np.packbits(coverage))
        mined.save(self.run_dir / "mined")
        return Phase.PUBLISH

    def _slice_state(self) -> SliceState:
        """Where a Dask run's workers keep each slice's last read (see :func:`_dask_base`)."""
        return SliceState(str(self.work / DASK_SLICES), self.config.scan.timestamp_field,
                          fresh=self.state.kind == "full")

    def _doc_keys(self, mined: MinedRun) -> Sequence[str]:
        if self.state.executor == "dask":  # staged in the cluster by the workers, copied by them
            return staged_doc_map(mined, self.session, self.config.cluster)
        return Snapshot(self.run_dir / "snapshot").stored_keys()

    def publish_run(self) -> Phase:
        """publish: the report and run document from the mined run, the run index, the alias
        swap (unless a dry run)."""
        c, st = self.config, self.state
        mined = MinedRun.load(self.run_dir / "mined")
        doc_keys = self._doc_keys(mined)
        report = run_report(c, mined, doc_keys)
        incremental = st.counts.get("incremental")
        run_doc = run_document(c, mined, report, started_at=st.started_at, kind=st.kind, seconds=st.seconds,
                               incremental=incremental,
                               scan_docs_per_second=(st.scan or {}).get("docs_per_second"))
        check_phrases(c, self.client, published_count(mined))
        self._mint_publication_id()

        def before_swap() -> None:
            self.lease.check()
            if c.publish.dry_run:
                raise _DryRunStop()
            st.swap_started = st.run_id  # from here on the run may be visible: never delete it
            self.save()

        try:
            res = publish(self.client, c.publish.template_index, st.run_id, phrase_docs=mined.phrase_docs, doc_keys=doc_keys,
                          coverage=mined.coverage, run_doc=run_doc, keep_runs=c.publish.keep_runs, bulk_docs=c.publish.bulk_docs,
                          before_swap=before_swap, progress=self.progress, extra_docs=mined.template_docs or ())
        except _DryRunStop:
            res = PublishResult(physical_name(c.publish.template_index, st.run_id), [])
            log.info("dry run published %s; the alias %s stays (bloomspan promote %s moves it)",
                     res.physical_index, c.publish.template_index, st.run_id)
        if mined.doc_map is not None:  # the physical index holds the doc map now
            self.client.indices.delete(index=mined.doc_map["index"], ignore_unavailable=True)
        st.summary = summary_fields(c, mined, run_doc, run_id=st.run_id, physical_index=res.physical_index,
                                    kind=st.kind, incremental=incremental or {}, deleted_runs=res.deleted)
        log.info("run %s published %s: executor=%s docs=%d tokens=%d phrases=%d covered_share=%.4f", st.run_id,
                 res.physical_index, st.executor, mined.n_docs, mined.n_tokens, len(mined.phrase_docs),
                 run_doc["covered_share"])
        return Phase.ANNOTATE if c.publish.annotate else Phase.FINALIZE

    def _mint_publication_id(self) -> None:
        """Give the run the id it publishes under, minted now, while this process holds the
        lease, once per attempt: every run published by anyone else moved the alias before
        this lease was acquired, so this id (its time) is later than theirs. A run resumed
        after losing the lease, or turned away by it, never publishes under the id it started
        with. The exceptions are an attempt whose index the alias already points at (killed
        after the swap: it only finishes), and an attempt killed after its index was complete
        but before the alias moved, when no run was published since (the alias points at an
        older run or at none): its index is what this attempt would write, so the alias moves
        to it as it is. An earlier attempt's index that was never about to be aliased is
        deleted; one that may have been visible is left to retention."""
        if self._minted:
            return
        c, st = self.config, self.state
        old = st.run_id
        attempt = physical_name(c.publish.template_index, old)
        indices = physical_indices(self.client, c.publish.template_index)
        found = indices.get(attempt)
        if found and found["aliased"]:
            self._minted = True
            return
        if found and found["complete"] and all(s["run_id"] < old for s in indices.values() if s["aliased"]):
            log.info("%s is complete (an earlier attempt stopped before the alias moved): publishing it as it is",
                     attempt)
            self._minted = True
            return
        if found and st.swap_started != old:
            log.info("deleting %s: an earlier attempt of this run, never published", attempt)
            self.client.indices.delete(index=attempt, ignore_unavailable=True)
        st.run_id = new_run_id()
        self.lease.run_id = st.run_id
        self._minted = True
        self.save()
        if old != st.run_id:
            log.info("run %s publishes as %s", old, st.run_id)

    def annotate_sources(self) -> Phase:
        """annotate: the run's ratios and spans onto the source documents; on this node
        resumable by batch, on Dask by the workers that read the documents."""
        st = self.state
        if st.annotation is None:
            st.annotation = {"done": 0, "summary": None}
        sec = st.annotation
        if st.executor == "dask":
            summary = self._annotate_on_dask()
        else:
            snap = Snapshot(self.run_dir / "snapshot")
            coverage = np.unpackbits(np.load(self.run_dir / "coverage.npy"), count=snap.n_tokens).astype(bool)

            def on_batch(done: int) -> None:
                sec["done"] = done
                self.save()

            summary = annotate(self.client, snap, coverage, st.run_id, bulk_docs=self.config.publish.bulk_docs,
                               start=sec["done"], progress=self.progress, on_batch=on_batch)
        prior = sec.get("summary") or {"updated": 0, "noop": 0, "failed_by_reason": {}}
        merged = {"updated": prior["updated"] + summary.updated, "noop": prior["noop"] + summary.noop,
                  "failed_by_reason": {k: prior["failed_by_reason"].get(k, 0) + summary.failed_by_reason.get(k, 0)
                                       for k in set(prior["failed_by_reason"]) | set(summary.failed_by_reason)}}
        sec["summary"] = merged
        st.summary["annotate"] = merged
        return Phase.FINALIZE

    def _annotate_on_dask(self):
        """The workers annotate the shards this run's mine phase left on them. A run resumed
        at this phase (the process that mined is gone, and its shards with it) has the
        workers read and mine again first: the same documents give the same annotations, and
        the versions they read are the ones the guards then check."""
        c, st = self.config, self.state
        if self.session.to_annotate is None:
            log.info("run %s resumed at annotate on Dask: the workers read and mine the source again for its "
                     "coverage", st.run_id)
            mine_index_on_dask(c, self.client, self.session, st.indices, self._units(), st.scan_mode, {},
                               None, self.run_dir / f"{MINED_PARTS}-reread", self.progress, self._slice_state())
        return annotate_on_dask(c, self.client, self.session, st.indices, st.run_id, self.progress)

    def finalize(self) -> Phase:
        """finalize: this run's snapshot becomes the base of the next incremental run; the
        run folder goes."""
        st = self.state
        if st.executor == "dask":  # no snapshot: the workers kept each slice's read
            write_json_atomic(self.work / DASK_SLICES / "base.json", {"run_id": st.run_id, "source": st.source})
            shutil.rmtree(self.run_dir, ignore_errors=True)
            return Phase.DONE
        snaps = self.work / "snapshots"
        snaps.mkdir(exist_ok=True)
        target = snaps / st.run_id
        if (self.run_dir / "snapshot").exists():
            shutil.rmtree(target, ignore_errors=True)
            os.rename(self.run_dir / "snapshot", target)
        write_json_atomic(self.work / "base.json", {"run_id": st.run_id, "snapshot": f"snapshots/{st.run_id}",
                                                    "source": st.source})
        for old in snaps.iterdir():
            if old.name != st.run_id:
                shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(self.run_dir, ignore_errors=True)
        return Phase.DONE
