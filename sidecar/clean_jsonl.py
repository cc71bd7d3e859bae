"""`bloomspan clean`: clean a JSON Lines file with a phrase set.

Nothing is lost: every input line ends up in exactly one place. A cleaned or untouched
document goes to ``out``; a document over ``max_ratio`` goes to ``over_ratio_out`` when given
(else to ``out``); a line that is not a JSON object, or a document the cleaner reports as bad,
goes to ``out`` unchanged when it is a JSON object and is described in ``errors_out`` (with its
line number and, for unparseable lines, the raw text).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class CleanSummary:
    lines: int = 0
    documents: int = 0
    cleaned: int = 0
    unchanged: int = 0
    errors: int = 0
    over_ratio: int = 0
    tokens: int = 0
    covered_tokens: int = 0
    seconds: float = 0.0
    bytes_in: int = 0
    outputs: dict = field(default_factory=dict)

    @property
    def boilerplate_share(self) -> float:
        return self.covered_tokens / self.tokens if self.tokens else 0.0


def clean_jsonl(cleaner, in_path: str, out_path: str, errors_path: str, over_ratio_path: str | None = None,
                progress: Callable[[str, int], None] | None = None, batch: int = 1000) -> CleanSummary:
    import time

    summary = CleanSummary(outputs={"out": out_path, "errors": errors_path, "over_ratio": over_ratio_path})
    t0 = time.perf_counter()
    partial = [p + ".partial" for p in (out_path, errors_path, over_ratio_path) if p]
    try:
        with open(in_path, "rb") as src, open(out_path + ".partial", "w", encoding="utf-8") as out, \
                open(errors_path + ".partial", "w", encoding="utf-8") as errs, \
                (open(over_ratio_path + ".partial", "w", encoding="utf-8") if over_ratio_path else _Null()) as over:
            docs: list = []
            linenos: list[int] = []

            def flush_batch():
                for lineno, doc, result in zip(linenos, docs, cleaner.clean_batch(docs)):
                    _write_result(summary, lineno, doc, result, out, errs, over if over_ratio_path else out)
                docs.clear()
                linenos.clear()
                if progress:
                    progress("clean", summary.documents)

            for lineno, raw in enumerate(src, 1):
                summary.lines += 1
                summary.bytes_in += len(raw)
                if not raw.strip():
                    continue
                try:
                    doc = json.loads(raw.decode("utf-8"))
                except UnicodeDecodeError as exc:
                    _error(errs, lineno, f"not valid UTF-8: {exc.reason}", raw)
                    summary.errors += 1
                    continue
                except ValueError as exc:
                    _error(errs, lineno, f"invalid JSON: {exc}", raw)
                    summary.errors += 1
                    continue
                summary.documents += 1
                docs.append(doc)
                linenos.append(lineno)
                if len(docs) >= batch:
                    flush_batch()
            if docs:
                flush_batch()
        for p in (out_path, errors_path, over_ratio_path):
            if p:
                os.replace(p + ".partial", p)
    finally:
        for p in partial:
            if os.path.exists(p):
                os.unlink(p)
    summary.seconds = time.perf_counter() - t0
    return summary


def _write_result(summary: CleanSummary, lineno: int, doc, result, out, errs, over) -> None:
    if not result.ok:
        summary.errors += 1
        _error(errs, lineno, result.reason or "error", None, result.error.to_dict() if result.error else None)
        out.write(json.dumps(doc, ensure_ascii=False) + "\n")
        return
    summary.tokens += result.n_tokens
    summary.covered_tokens += result.covered_tokens
    summary.cleaned += result.changed
    summary.unchanged += not result.changed
    line = json.dumps(result.doc, ensure_ascii=False) + "\n"
    if result.dropped:
        summary.over_ratio += 1
        over.write(line)
    else:
        out.write(line)


def _error(errs, lineno: int, reason: str, raw: bytes | None, detail: dict | None = None) -> None:
    record = {"line": lineno, "reason": reason}
    if detail:
        record["error"] = detail
    if raw is not None:
        record["raw"] = raw.decode("utf-8", errors="replace").rstrip("\n")
    errs.write(json.dumps(record, ensure_ascii=False) + "\n")


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, _):  # never called: over-ratio documents go to `out` without a file
        raise AssertionError("no over-ratio output configured")
