"""Where documents come from and go to: the files every command opens.

* :mod:`.compression` — JSON Lines plain, gzip or Zstandard: :func:`open_lines` reads one
  (detected by its magic bytes), :func:`open_output` writes one in the compression its name
  asks for (``.gz``, ``.zst``), both streaming.
* :mod:`.parquet` — Parquet, row group by row group (``pyarrow``, the ``parquet`` extra).

Every command that reads or writes documents (``mine --jsonl``, ``clean``, ``dedup``,
``templates``, ``index``, ``corpus``) opens its files here, so a format is added once.
"""
from .compression import (
    Compression,
    DamagedInputError,
    compression_of_name,
    detect_compression,
    iter_lines,
    not_utf8,
    open_lines,
    open_output,
)

__all__ = ["Compression", "DamagedInputError", "compression_of_name", "detect_compression", "iter_lines",
           "not_utf8", "open_lines", "open_output"]
