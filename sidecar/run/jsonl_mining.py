"""`bloomspan mine --jsonl`: mine a JSON Lines file into ``phrases.jsonl`` + ``report.json``.

With a site or URL field (:class:`~.run_templates.TemplateOptions`) the template detector runs
on the same corpus and its records go to ``templates.jsonl`` next to them; ``bloomspan clean
--phrases DIR/phrases.jsonl`` applies both. Every phrase record carries the run's
``min_length``, so the cleaner matches its windows without being told.

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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.mining.report import coverage_report
from bloomspan.engine.templates.blocks import block_offsets_from_flags
from bloomspan.engine.text.corpus_store import CorpusStore
from bloomspan.sidecar.inputs import DamagedInputError, not_utf8, open_lines
from bloomspan.sidecar.inputs.parquet import ParquetInputError, check_columns, is_parquet, open_parquet, row_groups
from bloomspan.sidecar.inputs.warc import WarcRecordError

from .output_files import file_report_fields, write_outputs
from .run_templates import TEMPLATES_FILE, detect_run_templates

log = logging.getLogger(__name__)

BATCH_DOCS = 5000


class JsonlInputError(ValueError):
    """A line of the input cannot be used; ``line`` is 1-based (``None``: the file as a whole)."""

    def __init__(self, path: str, line: int | None, reason: str):
        self.path, self.line, self.reason = path, line, reason
        super().__init__(f"{path}:{line}: {reason}" if line is not None else f"{path}: {reason}")


def read_documents(path: str, field: str, id_field: str | None) -> Iterator[tuple[str, str]]:
    """Yield ``(external_id, text)`` per line; ids default to the 1-based line number (see
    :func:`read_documents_with`)."""
    for doc_id, text, _ in read_documents_with(path, field, id_field, ()):
        yield doc_id, text


def read_documents_with(path: str, field: str, id_field: str | None, extra: tuple[str, ...],
                        parquet_groups: Sequence[int] | None = None) -> Iterator[tuple[str, str, tuple]]:
    """Yield ``(external_id, text, values)`` per line; ``values`` holds each ``extra`` field's
    string value (None when absent or not a string: a page without a site has no scope).

    Blank lines are skipped. Invalid UTF-8 or JSON, nesting deeper than the JSON parser
    allows, a non-object line, a missing or non-string field, or a missing or unwritable id
    raise :class:`JsonlInputError` naming the line. Lines are read as bytes and decoded one
    by one, so the line number is the line's own (a text-mode reader decodes ahead and
    reports a later line). A line may be of any length. The file may be gzip or Zstandard
    compressed (:mod:`bloomspan.sidecar.inputs`); damage in it raises :class:`JsonlInputError`
    naming the first line that could not be read. A Parquet file gives its ``field`` column,
    row group by row group (:func:`_parquet_documents`), or only the row groups numbered in
    ``parquet_groups`` (a Dask partition's), rows numbered as in the whole file.
    """
    try:
        if is_parquet(path):
            yield from _parquet_documents(path, field, id_field, extra, parquet_groups)
        else:
            yield from _documents(path, field, id_field, extra)
    except WarcRecordError as exc:
        raise JsonlInputError(path, None, exc.detail) from None
    except DamagedInputError as exc:
        raise JsonlInputError(path, exc.line, f"{exc.reason} {exc.where} (re-download or re-compress the file)") from None
    except ParquetInputError as exc:
        raise JsonlInputError(path, None, exc.detail) from None


def _parquet_documents(path: str, field: str, id_field: str | None, extra: tuple[str, ...],
                       groups: Sequence[int] | None = None) -> Iterator[tuple[str, str, tuple]]:
    """:func:`read_documents_with` of a Parquet file: its ``field`` and ``id_field`` columns
    (a null or non-string text names its row), ids default to the 1-based row number."""
    parquet_file = open_parquet(path)
    names = parquet_file.schema_arrow.names
    check_columns(path, parquet_file.schema_arrow, {"--field": field, "--id-field": id_field or ""})
    present = [name for name in extra if name in names]
    columns = list(dict.fromkeys([field, *([id_field] if id_field else []), *present]))
    for first, table in row_groups(path, parquet_file, columns, groups):
        texts = table.column(field).to_pylist()
        ids = table.column(id_field).to_pylist() if id_field else None
        values = [table.column(name).to_pylist() if name in present else [None] * len(texts) for name in extra]
        for k, text in enumerate(texts):
            row = first + k
            if not isinstance(text, str):
                what = "null" if text is None else type(text).__name__
                raise JsonlInputError(path, None, f"row {row:,}: column {field!r} is {what}, not a string")
            if ids is None:
                doc_id = str(row)
            elif ids[k] is None:
                raise JsonlInputError(path, None, f"row {row:,}: id column {id_field!r} is null")
            else:
                doc_id = str(ids[k])
            yield doc_id, text, tuple(v if isinstance(v := col[k], str) and v else None for col in values)


def _documents(path: str, field: str, id_field: str | None, extra: tuple[str, ...]) -> Iterator[tuple[str, str, tuple]]:
    with open_lines(path) as f:
        for lineno, raw in enumerate(f, 1):
            if not raw or raw.isspace():  # isspace, unlike strip, copies nothing
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
                doc_id = obj[id_field]
                if isinstance(doc_id, float):  # maybe an integer orjson could not hold
                    doc_id = parse_line(path, lineno, raw, exact_numbers=True)[id_field]
                doc_id = str(doc_id)
                if not _encodable(doc_id):
                    raise JsonlInputError(path, lineno, f"id field {id_field!r} holds a lone surrogate "
                                                        f"({doc_id!a}); ids must be valid Unicode")
            yield doc_id, text, tuple(v if isinstance(v := obj.get(name), str) and v else None for name in extra)


def parse_line(path: str, lineno: int, raw: bytes, exact_numbers: bool = False):
    """The JSON value of one line (bytes); :class:`JsonlInputError` naming the line if it has none.

    orjson parses (it checks the UTF-8 too); whatever it refuses goes to the standard
    library, which decides: it accepts what orjson does not (NaN, escaped lone surrogates)
    and words the error for everything else. orjson reads an integer beyond 64 bits as a
    float: with ``exact_numbers`` the standard library parses every line, else the caller
    re-parses a line whose float it uses (:func:`read_documents_with` does for the id).
    """
    if not exact_numbers:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonlInputError(path, lineno, not_utf8(exc)) from None
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
               top: int = 20, templates=None) -> JsonlMiningSummary:
    """Tokenize ``path`` into a corpus store, mine it, write ``phrases.jsonl`` and ``report.json``
    (and, with ``templates`` enabled, a :class:`~.run_templates.TemplateOptions`, ``templates.jsonl``).

    ``progress(stage, count)`` is called after each batch while reading and once per stage.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--jsonl {path}: no such file")
    documents = read_documents_with(path, field, id_field, template_fields(templates))
    return mine_documents(documents, path, field, config, out_dir, work_dir, progress, top, templates)


def template_fields(templates) -> tuple[str, ...]:
    """The fields a run's template detector reads (site, URL), () when it does not run."""
    return tuple(templates.fields) if templates is not None and templates.enabled else ()


def mine_documents(documents: Iterable[tuple[str, str, tuple]], source: str, field: str, config: MiningConfig,
                   out_dir: str, work_dir: str | None = None, progress: Callable[[str, int], None] | None = None,
                   top: int = 20, templates=None) -> JsonlMiningSummary:
    """:func:`mine_jsonl` over any stream of ``(id, text, template field values)`` (a file's, or
    the documents a framework's reader yields): the same files in ``out_dir``. ``source``
    names the stream in the report and in errors; ``field`` the text's field in them."""

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
        # No fsync: the store is rebuilt from the source on every run, so a crash loses nothing.
        store = CorpusStore.create(str(store_dir), with_offsets=False, fsync=False)
        ids: list[str] = []
        texts: list[str] = []
        extra = template_fields(templates)
        values: list[tuple] = []
        for doc_id, text, vals in documents:
            ids.append(doc_id)
            texts.append(text)
            if extra:
                values.append(vals)
            if len(ids) >= BATCH_DOCS:
                store.append(ids, texts, flush=False)
                ids, texts = [], []
                if progress:
                    progress("tokenize", store.n_docs)
        if ids:
            store.append(ids, texts, flush=False)
        store.flush()
        if progress:
            progress("tokenize", store.n_docs)
        seconds_tokenize = time.perf_counter() - t0
        if store.n_docs == 0:
            raise JsonlInputError(source, None, "empty corpus: the file holds no document")
        if store.n_tokens == 0:
            raise JsonlInputError(source, None, f"empty corpus: no document has any token in field {field!r}")
        log.info("tokenized path=%s docs=%d tokens=%d vocabulary=%d seconds=%.2f", source, store.n_docs,
                 store.n_tokens, len(store.vocabulary), seconds_tokenize)
        columns = {name: [v[k] for v in values] for k, name in enumerate(extra)}
        return _mine_store(store, config, out_dir, seconds_tokenize, progress, top, source=source,
                           templates=templates if extra else None, columns=columns)
    finally:
        if own_work_dir:
            shutil.rmtree(work, ignore_errors=True)


def _mine_store(store, config: MiningConfig, out_dir: str, seconds_tokenize: float, progress, top: int,
                source: str, templates=None, columns: dict | None = None) -> JsonlMiningSummary:
    if progress:
        progress(f"mine:{config.engine}", store.n_tokens)
    t1 = time.perf_counter()
    result = mine(store.tokens, store.doc_offsets, config)
    seconds_mine = time.perf_counter() - t1
    report = coverage_report(result.coverage, store.doc_offsets, result.phrases, store.vocabulary, top=top)
    for entry in report.get("most_cluttered_docs", []):
        entry["id"] = store.external_id(int(entry["doc"]))
    report.update(file_report_fields(source, result.stats.get("engine", config.engine), config, len(store.vocabulary),
                                     len(result.phrases), seconds_tokenize, seconds_mine, store.n_tokens, result.stats))
    template_records = None
    if templates is not None:
        import numpy as np

        if progress:
            progress("templates", store.n_tokens)
        t2 = time.perf_counter()
        columns = columns or {}
        blocks = block_offsets_from_flags(np.asarray(store.line_starts).view(np.bool_), store.doc_offsets)
        template_records, stats = detect_run_templates(
            store.tokens, store.doc_offsets, blocks, store.vocabulary, columns.get(templates.site_field),
            columns.get(templates.url_field), templates, result.coverage)
        report["templates"] = {"file": TEMPLATES_FILE, **stats, "site_field": templates.site_field,
                               "url_field": templates.url_field}
        report["templates"]["seconds"] = round(time.perf_counter() - t2, 4)
    write_outputs(out_dir, result.phrases, store.vocabulary, report, template_records)
    log.info("mined engine=%s phrases=%d covered_share=%.4f seconds=%.2f out=%s", report["engine"],
             len(result.phrases), report["covered_share"], seconds_mine, out_dir)
    return JsonlMiningSummary(out_dir, int(store.n_docs), int(store.n_tokens), len(result.phrases),
                              float(report["covered_share"]), seconds_tokenize, seconds_mine, report)
