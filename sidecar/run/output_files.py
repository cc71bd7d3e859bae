"""The directory a file run writes: ``phrases.jsonl``, ``templates.jsonl`` and ``report.json``.

Both executors of ``mine --jsonl`` (this process, :mod:`.jsonl_mining`; Dask,
:mod:`.dask_jsonl_mining`) end here: the same report fields in the same order, the same
files, written under temporary names and renamed into place with ``report.json`` last, so a
failed run never leaves output that looks complete.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from bloomspan.sidecar.publish.phrase_records import phrase_records

from .run_templates import TEMPLATES_FILE


def file_report_fields(source: str, engine: str, config, vocabulary: int, phrases: int, seconds_tokenize: float,
                       seconds_mine: float, n_tokens: int, stats: dict) -> dict:
    """The fields ``report.json`` adds to the coverage report (in this order): the source,
    the engine that ran, the run's parameters, the vocabulary and phrase counts, timings."""
    return {
        "source": source, "engine": engine, "sigma": config.sigma, "min_length": config.min_length,
        "vocabulary": int(vocabulary), "phrases": int(phrases),
        "seconds_tokenize": round(seconds_tokenize, 4), "seconds_mine": round(seconds_mine, 4),
        "ns_per_token_tokenize": round(seconds_tokenize * 1e9 / n_tokens, 2),
        "ns_per_token_mine": round(seconds_mine * 1e9 / n_tokens, 2),
        "stats": stats,
    }


def write_outputs(out_dir: str, phrases, vocabulary, report: dict, template_records: list[dict] | None = None) -> None:
    """``phrases.jsonl`` (each record with the run's ``min_length``), ``templates.jsonl`` when
    the detector ran (a stale one from an earlier run is removed), ``report.json`` last."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp_phrases = out / ".phrases.jsonl.partial"
    tmp_report = out / ".report.json.partial"
    tmp_templates = out / f".{TEMPLATES_FILE}.partial"
    min_length = report.get("min_length")
    try:
        with open(tmp_phrases, "w", encoding="utf-8") as f:
            for record in phrase_records(phrases, vocabulary):
                if min_length is not None:
                    record["min_length"] = int(min_length)
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        if template_records is not None:
            with open(tmp_templates, "w", encoding="utf-8") as f:
                for record in template_records:
                    f.write(json.dumps(record, ensure_ascii=False, default=json_value) + "\n")
        with open(tmp_report, "w", encoding="utf-8") as f:
            json.dump(report, f, ensure_ascii=False, indent=2, default=json_value)
        # report.json last: its presence means the run completed.
        for final in (out / "report.json", out / "phrases.jsonl", out / TEMPLATES_FILE):
            final.unlink(missing_ok=True)
        os.replace(tmp_phrases, out / "phrases.jsonl")
        if template_records is not None:
            os.replace(tmp_templates, out / TEMPLATES_FILE)
        os.replace(tmp_report, out / "report.json")
    finally:
        for tmp in (tmp_phrases, tmp_report, tmp_templates):
            tmp.unlink(missing_ok=True)


def json_value(value):
    """numpy scalars and arrays as JSON (the ``default`` of json.dump)."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
