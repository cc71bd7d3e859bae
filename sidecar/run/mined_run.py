"""What the mine phase hands the publish phase, whichever executor mined the corpus.

A run mines on this node (:mod:`.local_mining`: the snapshot in one process) or on Dask
(:mod:`.dask_mining`: the workers read and mine the index). Both end in a :class:`MinedRun`:
the phrase documents with their bitmaps, the report's per-document figures summed
(:class:`~bloomspan.sidecar.publish.document_figures.DocumentFigures`: nothing per document,
so a Dask driver never holds an array per document), the coverage bitmaps, the engine's
stats and, with ``--templates``, the detector's records. Publication
(:mod:`.run_record`, :func:`bloomspan.sidecar.publish.template_index.publish`) reads only
this, so the two executors publish through one code path.

The mine phase saves it in the run folder (:meth:`MinedRun.save`), so a run killed while
publishing publishes again without mining again. The folder is written under a temporary
name and renamed whole: it exists complete or not at all. What grows with the corpus (the
phrase documents with their bitmaps, the template records) is read back as
record files (:class:`~.record_files.RecordFile`), a record at a time, never whole; a mine phase that
wrote them to files as they came (the Dask driver's) hands those files over as they are.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from pyroaring import BitMap

from bloomspan.engine.text.durable_writes import fsync_dir
from bloomspan.sidecar.errors import CheckpointError
from bloomspan.sidecar.publish.document_figures import DocumentFigures

from .output_files import json_value
from .record_files import CoverageFiles, RecordFile

FORMAT = "bloomspan-mined-run"
log = logging.getLogger(__name__)

VERSION = 3  # 2: the per-document figures summed (figures), no covered.npy / doc_offsets.npy / sites;
#             3: a Dask run's doc map staged in the cluster (doc_map), no doc_map folder


@dataclass
class MinedRun:
    """The corpus' mining outcome, as publication needs it.

    phrase_docs:     phrase documents in publication order (:func:`~bloomspan.sidecar.publish.phrase_records.phrase_document`):
                     a list, or a :class:`~.record_files.RecordFile` of them.
    figures:         the report's figures of the stored documents (covered tokens, histogram,
                     most cluttered documents and, with a site field, per-site sums).
    coverage:        the coverage bitmaps to publish (one of absolute positions, or chunks): a
                     list, or :class:`~.record_files.CoverageFiles`.
    engine_stats:    the ``stats.engine`` block of the run document.
    skipped:         documents skipped, by reason.
    docs_seen:       documents read (stored and skipped).
    curation:        the report's ``curation`` block (what deny entries filtered).
    template_docs:   ``(_id, source)`` of the detector's records (``--templates``; a list, or a
                     :class:`~.record_files.RecordFile` of ``[_id, source]``), else None.
    template_stats:  the run document's ``templates`` block, else None.
    doc_map:         a Dask run's doc map, staged in the cluster by the workers
                     (:meth:`bloomspan.sidecar.distributed.doc_map.StagedDocMap.to_dict`: the
                     staging index, the documents, the keys the report names), else None (the
                     snapshot holds the keys).
    """

    phrase_docs: list[dict] | RecordFile
    figures: DocumentFigures
    coverage: list[BitMap] | CoverageFiles
    engine_stats: dict
    skipped: dict[str, int]
    docs_seen: int
    curation: dict
    template_docs: list[tuple[str, dict]] | RecordFile | None = None
    template_stats: dict | None = None
    doc_map: dict | None = None

    # The figures publication reads where it would read a snapshot's.
    @property
    def n_tokens(self) -> int:
        return self.figures.tokens

    @property
    def n_docs(self) -> int:
        return self.figures.docs

    @property
    def covered_tokens(self) -> int:
        return self.figures.covered_tokens

    def skipped_by_reason(self) -> dict[str, int]:
        return dict(self.skipped)

    # ------------------------------------------------------------------ the run folder
    def save(self, folder: str | os.PathLike) -> None:
        """Write to ``folder`` (replaced whole, never seen half-written). Records already in a
        :class:`~.record_files.RecordFile` are moved into it, not rewritten (the object then
        reads them there)."""
        folder = Path(folder)
        tmp = folder.with_name(folder.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        meta = {"format": FORMAT, "version": VERSION, "engine_stats": self.engine_stats, "skipped": self.skipped,
                "docs_seen": self.docs_seen, "curation": self.curation, "figures": self.figures.to_dict(),
                "template_stats": self.template_stats, "coverage_chunks": len(self.coverage),
                "templates": self.template_docs is not None,
                "doc_map": self.doc_map}
        moved = []
        for name, records in (("phrases.jsonl", self.phrase_docs), ("templates.jsonl", self.template_docs)):
            if isinstance(records, RecordFile):
                os.replace(records.path, tmp / name)
                moved.append((records, name))
            elif records is not None:
                with open(tmp / name, "w", encoding="utf-8") as f:
                    for record in records:
                        f.write(json.dumps(list(record) if isinstance(record, tuple) else record,
                                           ensure_ascii=False, default=json_value) + "\n")
        if isinstance(self.coverage, CoverageFiles):
            for k, path in enumerate(self.coverage.paths):
                os.replace(path, tmp / f"coverage-{k:06d}.roaring")
        else:
            for k, bm in enumerate(self.coverage):
                (tmp / f"coverage-{k:06d}.roaring").write_bytes(bm.serialize())
        with open(tmp / "meta.json", "w", encoding="utf-8") as f:
            json.dump(meta, f, ensure_ascii=False, default=json_value)
        sizes = {"phrases": 0, "templates": 0, "coverage": 0, "meta": 0}
        for path in tmp.iterdir():
            sizes[path.name.split("-")[0].split(".")[0]] += path.stat().st_size
            with open(path, "rb") as f:
                os.fsync(f.fileno())
        fsync_dir(tmp)
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(tmp, folder)
        fsync_dir(folder.parent)
        for records, name in moved:
            records.path = folder / name
        if isinstance(self.coverage, CoverageFiles):
            self.coverage.paths = [folder / f"coverage-{k:06d}.roaring" for k in range(len(self.coverage))]
        log.info("mined run saved: phrases=%d phrase_bytes=%d template_records=%d template_bytes=%d "
                 "coverage_chunks=%d coverage_bytes=%d", len(self.phrase_docs), sizes["phrases"],
                 len(self.template_docs or ()), sizes["templates"], len(self.coverage), sizes["coverage"])

    @classmethod
    def load(cls, folder: str | os.PathLike) -> MinedRun:
        """The run saved in ``folder``; CheckpointError (naming the folder and the fix) when it
        is missing or of another format."""
        folder = Path(folder)
        fix = f"delete {folder.parent} to start the run over (the source is read again)"
        try:
            with open(folder / "meta.json", encoding="utf-8") as f:
                meta = json.load(f)
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{folder}: the mined run cannot be read ({exc}); {fix}", item=str(folder)) from None
        if meta.get("format") != FORMAT or meta.get("version") != VERSION:
            raise CheckpointError(f"{folder}: mined run of format {meta.get('format')!r} version "
                                  f"{meta.get('version')!r}, this bloomspan reads {FORMAT} {VERSION}; {fix}",
                                  item=str(folder))
        phrase_docs = RecordFile(folder / "phrases.jsonl")
        template_docs = RecordFile(folder / "templates.jsonl") if meta["templates"] else None
        coverage = CoverageFiles([folder / f"coverage-{k:06d}.roaring" for k in range(meta["coverage_chunks"])])
        return cls(phrase_docs=phrase_docs, figures=DocumentFigures.from_dict(meta["figures"]), coverage=coverage,
                   engine_stats=meta["engine_stats"], skipped=meta["skipped"], docs_seen=meta["docs_seen"],
                   curation=meta["curation"], template_docs=template_docs, template_stats=meta["template_stats"],
                   doc_map=meta["doc_map"])
