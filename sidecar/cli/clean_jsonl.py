"""`bloomspan clean`: clean a JSON Lines file with a phrase set.

Nothing is lost: every input line ends up in exactly one place.

* A cleaned document goes to ``out`` (or, over ``max_ratio``, to ``over_ratio_out`` when
  given); a document the cleaner left as it was goes to ``out`` as its original line, byte
  for byte.
* A line that holds a document the cleaner cannot handle — not an object, a field that is
  not a string, a lone surrogate (``"\\ud800"`` is valid JSON but no UTF-8 can encode it),
  nesting deeper than the JSON parser allows — goes to ``out`` unchanged, byte for byte,
  and is described in ``errors_out``.
* A line that is not JSON at all (or not UTF-8) is not a document: it is described in
  ``errors_out`` with its raw text (and its bytes, base64, when they are not UTF-8).

Each error record is ``{"line": N, "reason": ...}`` with the 1-based line number; the summary
keeps the first few as ``PATH:N: reason`` lines for the terminal. Outputs are written under
``.partial`` names and renamed into place when the whole input was read.

The input may be gzip or Zstandard compressed, and each output is written in the compression
its name asks for (:mod:`bloomspan.sidecar.inputs`). A compressed input damaged part way
(a truncated download) ends the input there: every line before it is cleaned and written as
usual, the damage is one error record, and ``summary.damaged`` holds its one-line message.
"""
from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from bloomspan.sidecar.inputs import DamagedInputError, compression_of_name, not_utf8, open_lines, open_output

SHOWN_ERRORS = 5  # error lines kept in the summary for the terminal
SHOWN_KEYS = 20  # top-level keys of the documents kept for a "fields seen" note


@dataclass
class CleanSummary:
    lines: int = 0
    documents: int = 0
    cleaned: int = 0  # written by the cleaner (its fields and the bloomspan namespace), boilerplate or not
    with_boilerplate: int = 0  # of those, documents where some boilerplate was found
    unchanged: int = 0
    errors: int = 0
    over_ratio: int = 0
    tokens: int = 0
    covered_tokens: int = 0
    seconds: float = 0.0
    bytes_in: int = 0
    outputs: dict = field(default_factory=dict)
    first_errors: list = field(default_factory=list)  # "PATH:N: reason", at most SHOWN_ERRORS
    damaged: str | None = None  # the compressed input stops part way: what and where
    # documents holding a non-null value in each watched field (the scope and URL fields)
    with_field: dict = field(default_factory=dict)
    keys_seen: list = field(default_factory=list)  # top-level keys in first-seen order, at most SHOWN_KEYS

    @property
    def boilerplate_share(self) -> float:
        return self.covered_tokens / self.tokens if self.tokens else 0.0

    def count(self, result) -> None:
        """Add one cleaned document (a ``CleanResult``): its tokens, what was covered, whether
        it changed or went over the ratio (every output format counts the same way)."""
        self.tokens += result.n_tokens
        self.covered_tokens += result.covered_tokens
        self.cleaned += result.changed
        self.with_boilerplate += result.changed and result.covered_tokens > 0
        self.unchanged += not result.changed
        self.over_ratio += result.dropped


class _Outputs:
    """The open ``.partial`` files and the bookkeeping of where each line went."""

    def __init__(self, summary: CleanSummary, in_path: str, out, errs, over):
        self.summary, self.in_path, self.out, self.errs, self.over = summary, in_path, out, errs, over

    def error(self, lineno: int, reason: str, raw: bytes | None = None, detail: dict | None = None,
              keep: bytes | None = None, shown: bool = True) -> None:
        """Describe line ``lineno`` in the errors file; ``keep`` is the line written to ``out``;
        ``shown``: among the summary's first errors (the damage of an input is said apart)."""
        self.summary.errors += 1
        if shown and len(self.summary.first_errors) < SHOWN_ERRORS:
            self.summary.first_errors.append(f"{self.in_path}:{lineno}: {reason}")
        record: dict = {"line": lineno, "reason": reason}
        if detail:
            record["error"] = detail
        if raw is not None:
            record["raw"] = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                record["raw_base64"] = base64.b64encode(raw.rstrip(b"\r\n")).decode("ascii")
        self.errs.write(_dump(record))
        if keep is not None:
            self.out.write(_line(keep))


def clean_jsonl(cleaner, in_path: str, out_path: str, errors_path: str, over_ratio_path: str | None = None,
                progress: Callable[..., None] | None = None, batch: int = 1000,
                watched_fields: tuple[str, ...] = ()) -> CleanSummary:
    """Clean ``in_path`` into ``out_path`` (module docstring); returns the counts, with how many
    documents hold each of ``watched_fields`` (``summary.with_field``)."""
    summary = CleanSummary(outputs={"out": out_path, "errors": errors_path, "over_ratio": over_ratio_path},
                           with_field=dict.fromkeys(watched_fields, 0))
    t0 = time.perf_counter()
    paths = [p for p in (out_path, errors_path, over_ratio_path) if p]
    try:
        with open_lines(in_path) as src, _partial(out_path) as out, _partial(errors_path) as errs, \
                (_partial(over_ratio_path) if over_ratio_path else _Null()) as over:
            sink = _Outputs(summary, in_path, out, errs, over if over_ratio_path else out)
            # (line number, raw bytes, parsed document or the _Unreadable reason), in input order
            pending: list[tuple[int, bytes, object]] = []

            def flush() -> None:
                docs = [doc for _, _, doc in pending if not isinstance(doc, _Unreadable)]
                results = iter(cleaner.clean_batch(docs))
                for lineno, raw, doc in pending:
                    if isinstance(doc, _Unreadable):
                        sink.error(lineno, doc.reason, raw=None if doc.keep else raw, keep=raw if doc.keep else None)
                    else:
                        _write_result(sink, lineno, raw, doc, next(results))
                pending.clear()
                if progress:
                    progress("clean", summary.documents)

            try:
                for lineno, raw in enumerate(src, 1):
                    summary.lines += 1
                    summary.bytes_in += len(raw)
                    if not raw.strip():
                        continue
                    doc = _parse(raw)
                    summary.documents += not isinstance(doc, _Unreadable)
                    if isinstance(doc, dict):
                        _count_fields(summary, doc)
                    pending.append((lineno, raw, doc))
                    if len(pending) >= batch:
                        flush()
            except DamagedInputError as exc:  # the lines before it are kept: clean them, then say where
                if pending:
                    flush()
                summary.damaged = str(exc)
                sink.error(exc.line, f"{exc.reason} {exc.where}; the input ends here", shown=False)
            if pending:
                flush()
        for p in paths:
            os.replace(p + ".partial", p)
    finally:
        for p in paths:
            if os.path.exists(p + ".partial"):
                os.unlink(p + ".partial")
    summary.seconds = time.perf_counter() - t0
    return summary


@dataclass(frozen=True)
class _Unreadable:
    """A line with no usable JSON value: why, and whether it stays in the output."""

    reason: str
    keep: bool


def _parse(raw: bytes):
    """The line's JSON value, or an :class:`_Unreadable` saying why there is none. A line too
    deeply nested for the parser may well be a valid document: it stays in the output.

    orjson parses first (it checks the UTF-8 too); the standard library decides whatever it
    refuses (NaN, escaped lone surrogates, errors worded as before) and every value holding a
    float, since orjson reads an integer beyond 64 bits as one: a cleaned document is written
    back by ``json.dumps``, so its values must be the standard library's, exactly."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    else:
        if not _holds_float(value):
            return value
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _Unreadable(not_utf8(exc), keep=False)
    try:
        return json.loads(text)
    except RecursionError:
        return _Unreadable("nested deeper than the JSON parser allows; kept unchanged", keep=True)
    except ValueError as exc:
        where = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return _Unreadable(f"invalid JSON ({getattr(exc, 'msg', exc)}{where})", keep=False)


def _holds_float(value) -> bool:
    """Whether a parsed JSON value holds a float anywhere (nested objects and arrays included).
    orjson's values are exactly dict, list, str, int, float, bool or None, so the types are
    compared by identity, and only containers are stacked (a page's span lists are long)."""
    kind = type(value)
    if kind is float:
        return True
    if kind is not dict and kind is not list:
        return False
    todo = [value]
    while todo:
        v = todo.pop()
        for x in (v.values() if type(v) is dict else v):
            kind = type(x)
            if kind is float:
                return True
            if kind is dict or kind is list:
                todo.append(x)
    return False


def _count_fields(summary: CleanSummary, doc: dict) -> None:
    for name in summary.with_field:
        summary.with_field[name] += doc.get(name) is not None
    if len(summary.keys_seen) < SHOWN_KEYS:
        summary.keys_seen.extend(k for k in doc if k not in summary.keys_seen)
        del summary.keys_seen[SHOWN_KEYS:]


def _write_result(sink: _Outputs, lineno: int, raw: bytes, doc, result) -> None:
    summary = sink.summary
    if not result.ok:
        reason = (result.reason or str(result.error) or "error") + "; kept unchanged"
        sink.error(lineno, reason, detail=result.error.to_dict() if result.error else None, keep=raw)
        return
    if result.doc is doc:  # untouched: the original bytes
        line = raw
    else:
        try:
            line = dumps_document(result.doc)
        except UnicodeEncodeError as exc:  # a lone surrogate in a field the cleaner does not read
            sink.error(lineno, f"lone surrogate {exc.object[exc.start:exc.end]!a} outside the cleaned fields; "
                               "kept unchanged", keep=raw)
            return
        except (RecursionError, ValueError) as exc:
            sink.error(lineno, f"cannot write the cleaned document ({type(exc).__name__}); kept unchanged", keep=raw)
            return
    summary.count(result)
    (sink.over if result.dropped else sink.out).write(_line(line))


def dumps_document(doc) -> bytes:
    """``json.dumps(doc, ensure_ascii=False).encode("utf-8")``, byte for byte, in about half the
    time on web pages: each top-level key and string value (the cleaned text) is spelled by
    orjson, which escapes a string as the standard library does with ``ensure_ascii=False``;
    every other value by the standard library (orjson spells some floats differently). Whatever
    that path cannot write (a lone surrogate, a key that is not a string, a NaN) goes through
    the standard library whole, so it raises or writes exactly as before."""
    if type(doc) is not dict:
        return json.dumps(doc, ensure_ascii=False).encode("utf-8")
    parts = []
    try:
        for key, value in doc.items():
            if type(key) is not str:
                raise TypeError(f"key {key!r} is not a string")
            parts.append(orjson.dumps(key) + b": " + (orjson.dumps(value) if type(value) is str
                                                      else json.dumps(value, ensure_ascii=False).encode("utf-8")))
    except Exception:  # the standard library decides: the same bytes or the same error as before
        return json.dumps(doc, ensure_ascii=False).encode("utf-8")
    return b"{" + b", ".join(parts) + b"}"


def _partial(path: str):
    """``PATH.partial``, written in the compression ``PATH``'s name asks for."""
    return open_output(path + ".partial", compression_of_name(path))


def _line(raw: bytes) -> bytes:
    return raw if raw.endswith(b"\n") else raw + b"\n"


def _dump(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", errors="backslashreplace")


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, _):  # never called: over-ratio documents go to `out` without a file
        raise AssertionError("no over-ratio output configured")
