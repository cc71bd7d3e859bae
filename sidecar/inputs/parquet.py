"""Parquet crawls (FineWeb, Common Crawl derivatives, Spark exports), read and written a row
group at a time with ``pyarrow`` (the ``parquet`` extra).

A file is Parquet when it starts with ``PAR1``, whatever its name. Reading opens the footer
once (:func:`open_parquet`) and then reads only the columns a command needs, row group by row
group (:func:`row_groups`), so memory holds one row group. A footer that cannot be read is one
line naming the file; a row group that cannot be read is one line naming the file, the row
group and its rows (:class:`ParquetInputError`), after every row group before it was used.
Rows are numbered from 1 across the file, as lines are in JSON Lines.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from bloomspan.sidecar.errors import BloomspanSidecarError

PARQUET_MAGIC = b"PAR1"
WRITE_ROWS = 1000  # rows per row group written by :func:`write_parquet`


class ParquetInputError(BloomspanSidecarError, ValueError):
    """A Parquet file, or one row group of it (``row_group`` 0-based, None: the file), cannot be read."""

    def __init__(self, path: str, reason: str, row_group: int | None = None, rows: tuple[int, int] | None = None):
        self.path, self.reason, self.row_group, self.rows = path, reason, row_group, rows
        where = "" if row_group is None else f"row group {row_group}" + (f" (rows {rows[0]:,}-{rows[1]:,})" if rows else "")
        self.detail = f"{where}: {reason}" if where else reason  # the message without the path
        super().__init__(f"{path}: {self.detail}", item=path)


def is_parquet(path: str) -> bool:
    """Whether ``path`` starts with Parquet's magic bytes."""
    with open(path, "rb") as f:
        return f.read(4) == PARQUET_MAGIC


def pyarrow_or_error():
    """``pyarrow`` with its ``parquet`` and ``compute`` modules loaded; without the ``parquet``
    extra, :class:`ParquetInputError` saying how to install it."""
    try:
        import pyarrow
        import pyarrow.compute
        import pyarrow.parquet  # noqa: F401  (loaded as pyarrow.parquet)
    except ImportError:
        raise ParquetInputError("Parquet", "reading or writing Parquet needs pyarrow: "
                                "pip install 'bloomspan[parquet]'") from None
    return pyarrow


def open_parquet(path: str):
    """The ``pyarrow.parquet.ParquetFile`` of ``path``; :class:`ParquetInputError` when its
    footer cannot be read."""
    pa = pyarrow_or_error()
    try:
        return pa.parquet.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise ParquetInputError(path, f"not a readable Parquet file ({_first_line(exc)})") from None


def check_columns(path: str, schema, wanted: dict[str, str]) -> None:
    """:class:`ParquetInputError` for the first ``flag -> column`` of ``wanted`` the file lacks."""
    names = schema.names
    for flag, name in wanted.items():
        if name and name not in names:
            raise ParquetInputError(path, f"no column {name!r} (columns: {', '.join(names[:20])}); "
                                          f"name the column with {flag}")


def row_groups(path: str, parquet_file, columns: list[str] | None = None,
               groups: Sequence[int] | None = None) -> Iterator[tuple[int, object]]:
    """``(first row number, table)`` per row group (only those numbered in ``groups``, None:
    all), holding ``columns`` (None: all); :class:`ParquetInputError` names the row group that
    cannot be read. Row numbers count every group, read or not, so a Dask partition of one
    group numbers its rows as the whole file's reader does."""
    pa = pyarrow_or_error()
    first = 1
    meta = parquet_file.metadata
    wanted = None if groups is None else set(groups)
    for i in range(meta.num_row_groups):
        n = meta.row_group(i).num_rows
        if wanted is not None and i not in wanted:
            first += n
            continue
        try:
            table = parquet_file.read_row_group(i, columns=columns)
        except (pa.ArrowException, OSError) as exc:
            raise ParquetInputError(path, f"cannot be read ({_first_line(exc)}); the {first - 1:,} rows before it "
                                          "were read", row_group=i, rows=(first, first + n - 1)) from None
        yield first, table
        first += n


def write_parquet(docs: Iterable[dict], path: str) -> int:
    """Write ``docs`` to ``path`` as Parquet, :data:`WRITE_ROWS` rows per row group (the
    schema inferred from the first group); return the count."""
    pa = pyarrow_or_error()
    writer = None
    n = 0
    batch: list[dict] = []
    try:
        for doc in docs:
            batch.append(doc)
            if len(batch) >= WRITE_ROWS:
                writer = _write_batch(pa, writer, batch, path)
                n += len(batch)
                batch = []
        if batch or writer is None:
            writer = _write_batch(pa, writer, batch, path)
            n += len(batch)
    finally:
        if writer is not None:
            writer.close()
    return n


def _write_batch(pa, writer, batch: list[dict], path: str):
    if writer is None:
        table = pa.Table.from_pylist(batch)
        writer = pa.parquet.ParquetWriter(path, table.schema)
    else:
        table = pa.Table.from_pylist(batch, schema=writer.schema)
    writer.write_table(table)
    return writer


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
