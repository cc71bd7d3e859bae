"""`bloomspan clean` of a Parquet file: the same cleaning as :mod:`.clean_jsonl`, written as
Parquet with the input's schema plus bloomspan's columns.

Row group by row group, only the columns the cleaner reads (the text fields, the scope and URL
fields, an existing ``bloomspan`` column) become Python objects; every other column goes from
the input table to the output table as Arrow data, unconverted. A cleaned text field keeps its
column (``strip``); added columns have fixed types, so every row group has one schema:
``<field>_clean`` string (``downweight``), ``<field>_chunks`` list of strings (``--chunk-size``)
and ``bloomspan``, a struct of ``boilerplate_ratio`` (float64), ``spans`` (``mark``: list of
field, start, end, phrase_ids) and ``fingerprint`` (string). A row the cleaner leaves as it
was has nulls there.

A row the cleaner cannot handle stays in the output unchanged and is described in the errors
file as ``{"row": N, "reason": ...}`` (rows 1-based across the file). A row group that cannot
be read ends the input there: every row group before it is cleaned and written, and
``summary.damaged`` names the file and the row group.
"""
from __future__ import annotations

import json
import os
import time

from bloomspan.sidecar.inputs.parquet import (
    ParquetInputError,
    check_columns,
    open_parquet,
    pyarrow_or_error,
    row_groups,
)

from .clean_jsonl import SHOWN_ERRORS, CleanSummary


def _added_types(pa, config) -> dict:
    """Column name -> Arrow type of every column the cleaner adds (module docstring)."""
    span = pa.struct([("field", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
                      ("phrase_ids", pa.list_(pa.string()))])
    added = {}
    for name in config.fields:
        if config.mode == "downweight":
            added[name + config.clean_suffix] = pa.string()
        if config.chunk_size is not None:
            added[name + config.chunks_suffix] = pa.list_(pa.string())
    if config.meta_field is not None:
        added[config.meta_field] = pa.struct([("boilerplate_ratio", pa.float64()), ("spans", pa.list_(span)),
                                              ("fingerprint", pa.string())])
    return added


def clean_parquet(cleaner, in_path: str, out_path: str, errors_path: str, over_ratio_path: str | None = None,
                  progress=None, watched_fields: tuple[str, ...] = ()) -> CleanSummary:
    """Clean the Parquet file ``in_path`` into the Parquet file ``out_path`` (module docstring)."""
    pa = pyarrow_or_error()  # pyarrow.parquet and pyarrow.compute loaded, or one line saying how to install it
    pq = pa.parquet

    config = cleaner.config
    summary = CleanSummary(outputs={"out": out_path, "errors": errors_path, "over_ratio": over_ratio_path},
                           with_field=dict.fromkeys(watched_fields, 0))
    t0 = time.perf_counter()
    source = open_parquet(in_path)
    schema = source.schema_arrow
    for name in config.fields:
        check_columns(in_path, schema, {"--field": name})
    added = _added_types(pa, config)
    if config.meta_field in schema.names:
        raise ParquetInputError(in_path, f"already has a {config.meta_field!r} column (an output of bloomspan?): "
                                         "clean the original file")
    out_schema = pa.schema([*schema, *(pa.field(name, kind) for name, kind in added.items() if name not in schema.names)])
    read = [name for name in (*config.fields, config.scope_field, config.url_field, *watched_fields)
            if name and name in schema.names]
    read = list(dict.fromkeys(read))
    summary.keys_seen = list(schema.names[:20])
    paths = [p for p in (out_path, errors_path, over_ratio_path) if p]
    out = over = None
    try:
        out = pq.ParquetWriter(out_path + ".partial", out_schema)
        over = pq.ParquetWriter(over_ratio_path + ".partial", out_schema) if over_ratio_path else out
        with open(errors_path + ".partial", "wb") as errs:
            try:
                for first, table in row_groups(in_path, source):
                    _clean_group(pa, cleaner, table, first, read, added, out_schema, summary, out, over, errs, in_path)
                    if progress:
                        progress("clean", summary.documents)
            except ParquetInputError as exc:  # the row groups before it are written: say where it stopped
                summary.damaged = str(exc)
                errs.write(_dump({"row_group": exc.row_group, "rows": list(exc.rows or ()), "reason": exc.reason}))
                summary.errors += 1
        out.close()
        if over is not out:
            over.close()
        out = over = None
        for p in paths:
            os.replace(p + ".partial", p)
    finally:
        for writer in {id(w): w for w in (out, over) if w is not None}.values():
            writer.close()
        for p in paths:
            if os.path.exists(p + ".partial"):
                os.unlink(p + ".partial")
    summary.bytes_in = os.path.getsize(in_path)  # compressed columns: the file's size, not the texts'
    summary.seconds = time.perf_counter() - t0
    return summary


def _clean_group(pa, cleaner, table, first: int, read: list[str], added: dict, out_schema, summary: CleanSummary,
                 out, over, errs, in_path: str) -> None:
    config = cleaner.config
    docs = table.select(read).to_pylist()
    results = cleaner.clean_batch(docs)
    rows_out = []
    dropped = []
    for k, (doc, result) in enumerate(zip(docs, results)):
        row = first + k
        summary.lines += 1
        summary.documents += 1
        for name in summary.with_field:
            summary.with_field[name] += doc.get(name) is not None
        if not result.ok:
            reason = (result.reason or str(result.error) or "error") + "; kept unchanged"
            summary.errors += 1
            if len(summary.first_errors) < SHOWN_ERRORS:
                summary.first_errors.append(f"{in_path}: row {row:,}: {reason}")
            errs.write(_dump({"row": row, "reason": reason}))
            rows_out.append(doc)
            dropped.append(False)
            continue
        summary.count(result)
        rows_out.append(result.doc)
        dropped.append(bool(result.dropped))
    columns = {}
    for name in config.fields:
        if name in table.column_names and config.mode == "strip":
            columns[name] = pa.array([d.get(name) for d in rows_out], type=table.schema.field(name).type)
    for name, kind in added.items():
        columns[name] = pa.array([d.get(name) for d in rows_out], type=kind)
    merged = table
    for name, values in columns.items():
        if name in merged.column_names:
            merged = merged.set_column(merged.column_names.index(name), out_schema.field(name), values)
        else:
            merged = merged.append_column(out_schema.field(name), values)
    merged = merged.select(out_schema.names)
    if any(dropped) and over is not out:
        mask = pa.array(dropped)
        over.write_table(merged.filter(mask))
        out.write_table(merged.filter(pa.compute.invert(mask)))
    else:
        out.write_table(merged)


def _dump(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", errors="backslashreplace")
