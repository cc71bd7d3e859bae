"""Where documents come from and go to: the files every command opens.

* :mod:`.lines` — :func:`open_lines` reads any input file as lines: WARC and WET records
  (:mod:`.warc`) or JSON Lines.
* :mod:`.compression` — JSON Lines plain, gzip or Zstandard: read (detected by its magic
  bytes), and :func:`open_output` writes one in the compression its name asks for (``.gz``,
  ``.zst``), both streaming.
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
    open_output,
)
from .lines import open_lines

__all__ = ["Compression", "DamagedInputError", "compression_of_name", "detect_compression", "iter_lines",
           "not_utf8", "open_lines", "open_output"]
