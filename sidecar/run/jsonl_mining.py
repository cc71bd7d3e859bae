"""`bloomspan mine --jsonl`: mine a JSON Lines file into ``phrases.jsonl`` + ``report.json``.

The input is streamed batch by batch into the engine's mmap'd corpus store (in ``work_dir``,
a temporary directory unless given), mined with the selected engine, and the two output files
are written under temporary names and renamed into place only when everything succeeded, so
a failed run never leaves output that looks complete.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from bloomspan.engine.mining.config import MiningConfig

log = logging.getLogger(__name__)

BATCH_DOCS = 2000


class JsonlInputError(ValueError):
    """A line of the input cannot be used; ``line`` is 1-based (``None``: the file as a whole)."""

    def __init__(self, path: str, line: int | None, reason: str):
        self.path, self.line, self.reason = path, line, reason
        super().__init__(f"{path}:{line}: {reason}" if line is not None else f"{path}: {reason}")


def read_documents(path: str, field: str, id_field: str | None) -> Iterator[tuple[str, str]]:
    """Yield ``(external_id, text)`` per line; ids default to the 1-based line number.

    Blank lines are skipped. Invalid UTF-8 or JSON, nesting deeper than the JSON parser
    allows, a non-object line, a missing or non-string field, or a missing or unwritable id
    raise :class:`JsonlInputError` naming the line. Lines are read as bytes and decoded one
    by one, so the line number is the line's own (a text-mode reader decodes ahead and
    reports a later line). A line may be of any length.
    """
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            obj = parse_line(path, lineno, raw)
            if not isinstance(obj, dict):
                raise JsonlInputError(path, lineno, f"expected a JSON object, got {type(obj).__name__}")
            if field not in obj:
                raise JsonlInputError(path, lineno, f"field {field!r} is missing (choose it with --field)")
            text = obj[field]
            if not isinstance(text, str):
                raise JsonlInputError(path, lineno, f"field {field!r} is {type(text).__name__}, not a string")
            if id_field is None:
                doc_id = str(lineno)
            else:
                if id_field not in obj:
                    raise JsonlInputError(path, lineno, f"id field {id_field!r} is missing (choose it with --id-field)")
                doc_id = str(obj[id_field])
                if not _encodable(doc_id):
                    raise JsonlInputError(path, lineno, f"id field {id_field!r} holds a lone surrogate "
                                                        f"({doc_id!a}); ids must be valid Unicode")
            yield doc_id, text


def parse_line(path: str, lineno: int, raw: bytes):
    """The JSON value of one line (bytes); :class:`JsonlInputError` naming the line if it has none."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonlInputError(path, lineno, f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise JsonlInputError(path, lineno, "nested deeper than the JSON parser allows") from None
    except json.JSONDecodeError as exc:
        raise JsonlInputError(path, lineno, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python's digit limit
        raise JsonlInputError(path, lineno, f"invalid JSON ({exc})") from None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class JsonlMiningSummary:
    out_dir: str
    documents: int
    tokens: int
    phrases: int
    covered_share: float
    seconds_tokenize: float
    seconds_mine: float
    report: dict


def mine_jsonl(path: str, field: str, config: MiningConfig, out_dir: str, id_field: str | None = None,
               work_dir: str | None = None, progress: Callable[[str, int], None] | None = None,
               top: int = 20) -> JsonlMiningSummary:
    """Tokenize ``path`` into a corpus store, mine it, write ``phrases.jsonl`` and ``report.json``.

    ``progress(stage, count)`` is called after each batch while reading and once per stage.
    """
    from bloomspan.engine.text.corpus_store import CorpusStore

    if not os.path.isfile(path):
        raise FileNotFoundError(f"--jsonl {path}: no such file")
    own_work_dir = work_dir is None
    work = Path(tempfile.mkdtemp(prefix="bloomspan-work-") if own_work_dir else work_dir)
    try:
        if not own_work_dir:
            work.mkdir(parents=True, exist_ok=True)
            store_dir = work / "store"
            if store_dir.exists():
                shutil.rmtree(store_dir)
        else:
            store_dir = work / "store"
        t0 = time.perf_counter()
        store = CorpusStore.create(str(store_dir), with_offsets=False)
        ids: list[str] = []
        texts: list[str] = []
        for doc_id, text in read_documents(path, field, id_field):
            ids.append(doc_id)
            texts.append(text)
            if len(ids) >= BATCH_DOCS:
                store.append(ids, texts)
                ids, texts = [], []
                if progress:
                    progress("tokenize", store.n_docs)
        if ids:
            store.append(ids, texts)
        store.flush()
        if progress:
            progress("tokenize", store.n_docs)
        seconds_tokenize = time.perf_counter() - t0
        if store.n_docs == 0:
            raise JsonlInputError(path, None, "empty corpus: the file holds no document")
        if store.n_tokens == 0:
            raise JsonlInputError(path, None, f"empty corpus: no document has any token in field {field!r}")
        log.info("tokenized path=%s docs=%d tokens=%d vocabulary=%d seconds=%.2f", path, store.n_docs,
                 store.n_tokens, len(store.vocabulary), seconds_tokenize)
        return _mine_store(store, config, out_dir, seconds_tokenize, progress, top, source=path)
    finally:
        if own_work_dir:
            shutil.rmtree(work, ignore_errors=True)


def _mine_store(store, config: MiningConfig, out_dir: str, seconds_tokenize: float, progress, top: int,
                source: str) -> JsonlMiningSummary:
    from bloomspan.engine.mining.report import coverage_report
    from bloomspan.sidecar.run.engine_select import mine

    if progress:
        progress(f"mine:{config.engine}", store.n_tokens)
    t1 = time.perf_counter()
    result = mine(store.tokens, store.doc_offsets, config)
    seconds_mine = time.perf_counter() - t1
    report = coverage_report(result.coverage, store.doc_offsets, result.phrases, store.vocabulary, top=top)
    for entry in report.get("most_cluttered_docs", []):
        entry["id"] = store.external_id(int(entry["doc"]))
    report.update({
        "source": source,
        "engine": config.engine,
        "sigma": config.sigma,
        "min_length": config.min_length,
        "documents": int(store.n_docs),
        "tokens": int(store.n_tokens),
        "vocabulary": int(len(store.vocabulary)),
        "phrases": len(result.phrases),
        "seconds_tokenize": round(seconds_tokenize, 4),
        "seconds_mine": round(seconds_mine, 4),
        "ns_per_token_tokenize": round(seconds_tokenize * 1e9 / store.n_tokens, 2),
        "ns_per_token_mine": round(seconds_mine * 1e9 / store.n_tokens, 2),
        "stats": result.stats,
    })
    _write_outputs(out_dir, result.phrases, store.vocabulary, report)
    log.info("mined engine=%s phrases=%d covered_share=%.4f seconds=%.2f out=%s", config.engine,
             len(result.phrases), report["covered_share"], seconds_mine, out_dir)
    return JsonlMiningSummary(out_dir, int(store.n_docs), int(store.n_tokens), len(result.phrases),
                              float(report["covered_share"]), seconds_tokenize, seconds_mine, report)


def _write_outputs(out_dir: str, phrases, vocabulary, report: dict) -> None:
    from bloomspan.sidecar.publish.phrase_records import phrase_records

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp_phrases = out / ".phrases.jsonl.partial"
    tmp_report = out / ".report.json.partial"
    try:
        with open(tmp_phrases, "w", encoding="utf-8") as f:
            for record in phrase_records(phrases, vocabulary):
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        with open(tmp_report, "w", encoding="utf-8") as f:
            json.dump(report, f, ensure_ascii=False, indent=2, default=_json_default)
        # report.json last: its presence means the run completed.
        for final in (out / "report.json", out / "phrases.jsonl"):
            final.unlink(missing_ok=True)
        os.replace(tmp_phrases, out / "phrases.jsonl")
        os.replace(tmp_report, out / "report.json")
    finally:
        tmp_phrases.unlink(missing_ok=True)
        tmp_report.unlink(missing_ok=True)


def _json_default(value):
    import numpy as np

    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
