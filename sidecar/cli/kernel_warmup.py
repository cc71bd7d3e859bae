"""Compile (or load from numba's cache) every kernel the product runs, ahead of the first command.

numba compiles a kernel for each distinct argument-type signature the first time it is
called, and caches the machine code per signature. So warming up means calling every kernel
through the public function a real command calls it through, on a tiny input built the way a
real run builds its own: the dtypes, and therefore the cached signatures, are the ones a later
``mine``, ``clean`` or ``serve`` asks for. Most steps simply run the product on a small
generated crawl (the same code path as the commands); the rest reach kernels that only large
inputs, the Dask workers or ``serve``'s optional features run, through their public functions.

:func:`warm_up` runs the steps in order (``progress(stage, done, total)`` after each); a step
that fails names itself. Nothing is written outside ``work_dir`` but numba's cache.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

CRAWL_DOCS = 120  # enough pages per site that the template detector finds templates
# Words per language of the crawl's vocabulary: the generator's default (400,000) costs ~1.5 CPU s
# to spell, which `serve` paid before /readyz; 120 pages draw from far fewer (product names reach
# rank 30,000). The kernels see the same dtypes whatever the vocabulary.
CRAWL_WORDS = 32_000
MIN_LENGTH = 10


class WarmupError(RuntimeError):
    """A warm-up step failed; ``step`` names it."""

    def __init__(self, step: str, reason: str):
        self.step = step
        super().__init__(f"warmup step {step!r} failed: {reason}")


def _crawl(work: Path) -> None:
    from bloomspan.corpora import TextModel, generate_web, write_jsonl

    write_jsonl(generate_web(CRAWL_DOCS, 7, model=TextModel(vocab_size=CRAWL_WORDS)), work / "crawl.jsonl")


def _mine(work: Path, engines: tuple[str, ...] = ("bloomspan",)) -> None:
    """`mine --jsonl` with site and URL fields, once per engine (auto samples the corpus shape)."""
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.run.jsonl_mining import mine_jsonl
    from bloomspan.sidecar.run.run_templates import TemplateOptions

    for engine in engines:
        mine_jsonl(str(work / "crawl.jsonl"), "text", MiningConfig(sigma=5, min_length=MIN_LENGTH, engine=engine),
                   str(work / f"mined-{engine}"), work_dir=str(work / f"store-{engine}"),
                   templates=TemplateOptions("site", "url", True, None))


def _other_engines(work: Path) -> None:
    _mine(work, ("fhk", "auto"))
    _templates(work)


def _templates(work: Path) -> None:
    """`bloomspan templates`: the detector on texts, whose lines come from the texts
    themselves (``block_offsets_from_texts``), not from a mining run's store."""
    import json

    from bloomspan.engine.templates.detector import detect_templates_in_texts

    with open(work / "crawl.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    detect_templates_in_texts([d["text"] for d in docs], [d.get("site") for d in docs], [d.get("url") for d in docs])


def _reopen_store(work: Path) -> None:
    """A cluster run reopens its corpus store (the vocabulary is read back from its text form)
    and writes snapshots of it (incremental runs); the library's window coverage of a result."""
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.engine.mining.engines import mine
    from bloomspan.engine.mining.window_coverage import window_coverage
    from bloomspan.engine.text.corpus_store import CorpusStore
    from bloomspan.sidecar.run.snapshot import STORED, TokenSource, write_snapshot

    store = CorpusStore.open(str(work / "store-bloomspan" / "store"))
    tokens, doc_offsets = np.asarray(store.tokens), np.asarray(store.doc_offsets, dtype=np.int64)
    store.vocabulary.count_documents(tokens, doc_offsets)
    n = len(doc_offsets) - 1
    keys = np.array([f"{i:08d}".encode() for i in range(n)], dtype="S8")
    meta = np.zeros((n, 4), dtype=np.int64)
    meta[:, 3] = STORED
    source = TokenSource(tokens=tokens, doc_offsets=doc_offsets,
                         remap=np.arange(len(store.vocabulary), dtype=np.uint32))
    write_snapshot(work / "snapshot", keys, meta, np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64),
                   [source], store.vocabulary, {}, with_offsets=False)
    phrases = mine(tokens, doc_offsets, MiningConfig(sigma=5, min_length=MIN_LENGTH)).phrases
    window_coverage(tokens, doc_offsets, phrases, MIN_LENGTH)


def _clean(work: Path) -> None:
    """`clean` with the mined phrases and templates: windows and whole phrases, fingerprints."""
    from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
    from bloomspan.ingest.match.loading import load_run_phrases
    from bloomspan.sidecar.cli.clean_jsonl import clean_jsonl

    loaded = load_run_phrases(str(work / "mined-bloomspan" / "phrases.jsonl"))
    for match in ("windows", "phrases"):
        config = CleanerConfig(fields=("text",), skip_missing=True, id_field=None, scope_field="site",
                               url_field="url", fingerprint=True, match=match)
        cleaner = Cleaner(loaded.phrase_set, config, templates=loaded.templates)
        out = str(work / f"clean-{match}.jsonl")
        clean_jsonl(cleaner, str(work / "crawl.jsonl"), out, out + ".errors.jsonl")


def _emerging(work: Path) -> None:
    """`serve --emerging-shingle`: the emerging-shingle detector (a forgetful Bloom filter)."""
    import orjson

    from bloomspan.ingest.companions.emerging import EmergingDetector

    with open(work / "crawl.jsonl", "rb") as f:
        EmergingDetector().observe_many(orjson.loads(line)["text"] for line in f)


def _dedup(work: Path) -> None:
    """`dedup-index` and the library: paragraph deduplication (a Bloom filter)."""
    import orjson

    from bloomspan.engine.sketches.bloom_filter import BloomFilter
    from bloomspan.ingest.companions.paragraph_dedup import dedup_documents, paragraph_hash

    with open(work / "crawl.jsonl", "rb") as f:
        docs = [orjson.loads(line) for line in f]
    for _ in dedup_documents(docs, "text", spool_dir=str(work)):
        pass
    bloom = BloomFilter.for_items(len(docs), 10.0)  # the library's insert and query (screen is above)
    digests = [paragraph_hash(d["text"]) for d in docs]
    bloom.add(digests)
    bloom.contains(digests)


def _dask_workers(work: Path) -> None:
    """The Dask workers' kernels, and the partitioned filter build a large shard takes."""
    from bloomspan.engine.distributed.sharded_growth import routing_keys
    from bloomspan.engine.distributed.window_filter import (
        DIRECT_UNIT_CELLS,
        flagged_by_cells,
        unit_filter_heavy,
        window_filter,
    )
    from bloomspan.engine.mining.counting_filter import hot_any_bitmap
    from bloomspan.sidecar.distributed.shards import _Tokenizer
    from bloomspan.sidecar.distributed.tasks import warm_kernels

    warm_kernels(MIN_LENGTH)
    words = [f"w{i}" for i in range(3 * MIN_LENGTH)]
    tok = _Tokenizer()
    tok.add([" ".join(words)] * 3)
    shard = tok.corpus()
    window_filter(shard.ids, shard.token_hash, shard.doc_offsets, MIN_LENGTH, DIRECT_UNIT_CELLS + 1)  # sorted by region
    # the cut by cells the count kept (the library's variant that hashes no window twice)
    _, heavy, (cells,) = unit_filter_heavy([(shard.ids, shard.token_hash, shard.doc_offsets)], MIN_LENGTH, 64, 2,
                                           keep_cells=True)
    flagged_by_cells(shard.doc_offsets, MIN_LENGTH, cells, heavy, 64)
    routing_keys(shard.ids, shard.token_hash, shard.doc_offsets, MIN_LENGTH, 3)
    hot_any_bitmap(np.zeros(64, dtype=np.uint8), 64)


STEPS: tuple[tuple[str, Callable[[Path], None]], ...] = (
    ("crawl", _crawl),
    ("mine", _mine),
    ("engines", _other_engines),
    ("store", _reopen_store),
    ("clean", _clean),
    ("emerging", _emerging),
    ("dedup", _dedup),
    ("dask", _dask_workers),
)


def serving_steps(emerging: bool) -> tuple[str, ...]:
    """The steps whose kernels a request to `serve` can reach, which it loads before /readyz:
    cleaning (the phrases and templates of a default mining run are its input) and, with
    ``--emerging-shingle``, the emerging-shingle detector. A mining run (POST /runs, --every)
    is background work that loads its kernels when it starts; paragraph deduplication and the
    Dask workers are other commands."""
    return ("crawl", "mine", "clean") + (("emerging",) if emerging else ())


def warm_up(progress: Callable[..., None] | None = None, work_dir: str | os.PathLike | None = None,
            steps: tuple[str, ...] | None = None) -> None:
    """Run the named ``steps`` of :data:`STEPS` (all by default), in order, in a temporary
    directory (under ``work_dir`` if given), calling ``progress("warmup", done, total)`` after
    each; a failing step raises :class:`WarmupError` naming it."""
    chosen = [(name, step) for name, step in STEPS if steps is None or name in steps]
    work = Path(tempfile.mkdtemp(prefix="bloomspan-warmup-", dir=work_dir))
    try:
        for done, (name, step) in enumerate(chosen):
            if progress:
                progress("warmup", done, len(chosen))
            try:
                step(work)
            except Exception as exc:  # noqa: BLE001 - named for the user, the cause chained
                raise WarmupError(name, f"{type(exc).__name__}: {exc}") from exc
        if progress:
            progress("warmup", len(chosen), len(chosen))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def warm_serving(emerging: bool = False) -> None:
    """:func:`warm_up` of what a request to `serve` runs (:func:`serving_steps`), without progress."""
    warm_up(steps=serving_steps(emerging))
