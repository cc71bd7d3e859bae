"""WARC and WET files (Common Crawl's ``.warc.gz`` / ``.warc.wet.gz``, wget's ``--warc-file``)
as documents, one per record that holds a page, read with ``warcio``.

A file whose (decompressed) first bytes are ``WARC/`` is read as WARC, whatever its name. A
``response`` or ``resource`` record with an HTML payload gives the page's crawler text
(:func:`~bloomspan.sidecar.inputs.html_text.html_to_text`), one with a ``text/*`` payload
its text; a WET ``conversion`` record gives its text as it is. Each document is
``{"id", "url", "site", "text", "warc_type", "date"}``: the ``WARC-Record-ID``, the
``WARC-Target-URI`` and its host, and the ``WARC-Date``. Payloads are decoded as a browser
does (:func:`~bloomspan.sidecar.inputs.html_text.decode_page`: a byte-order mark, the charset the
HTTP headers name, a ``<meta>`` charset, UTF-8, then windows-1252).

:func:`warc_lines` hands the documents on as JSON Lines lines, so every command reads a WARC
file as it reads JSON Lines: line N is record N of the file, and a record that holds no page
(``warcinfo``, ``request``, ``metadata``, an image) is a blank line, which every reader skips.
A record whose headers cannot be parsed (or a file cut inside one) ends the input in one line
naming the file and the record (:class:`WarcRecordError`), after every record before it.
"""
from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from urllib.parse import urlsplit

from .compression import GZIP_MAGIC, DamagedInputError
from .html_text import decode_page, html_to_text

WARC_MAGIC = b"WARC/"
PAGE_RECORDS = ("response", "resource", "conversion")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.I)


class WarcRecordError(DamagedInputError):
    """Record ``line`` (1-based, every record counted) of a WARC file cannot be read;
    ``position`` is the byte offset in the file where it starts."""

    def __init__(self, path: str, record: int, position: int, reason: str):
        self.path, self.line, self.position, self.reason = path, record, position, reason
        self.where = f"in record {record:,} at byte {position:,} of the file"
        self.detail = f"record {record:,} (at byte {position:,}): {reason}; the {record - 1:,} records before it were read"
        ValueError.__init__(self, f"{path}: {self.detail}")
        self.index = self.field = None
        self.item = path


def is_warc(path: str) -> bool:
    """Whether ``path`` (plain or gzip) starts with a WARC record."""
    with open(path, "rb") as f:
        head = f.read(5)
    if head.startswith(GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as f:
                head = f.read(5)
        except (OSError, EOFError, zlib.error):
            return False
    return head == WARC_MAGIC


def warc_lines(path: str) -> Iterator[bytes]:
    """One JSON Lines line per record of ``path`` (module docstring).

    warcio is lenient where a user wants to know: a record whose ``Content-Length`` does not
    end where the next record starts is a warning on stderr (here: an error naming the record),
    and a file cut inside a record ends quietly (here: the record's unread bytes are counted).
    """
    records_type = _strict_iterator()
    with open(path, "rb") as f:
        records = records_type(f)
        number, offset = 0, 0
        while True:
            try:
                record = next(records)
            except StopIteration:
                return
            except Exception as exc:  # warcio raises its own and the parsers' errors alike
                # the record that failed starts where the previous one ended (warcio has no offset for it)
                ended = sum(records.member_info) if getattr(records, "member_info", None) else offset
                raise WarcRecordError(path, number + 1, ended, _reason(exc)) from None
            if records.err_count:  # found while stepping past the previous record
                raise WarcRecordError(path, number, offset, "its Content-Length does not end where the next "
                                                            "record starts") from None
            number += 1
            try:
                doc = _document(record)
            except Exception as exc:  # a payload cut short or undecodable headers
                raise WarcRecordError(path, number, _offset(records, offset), _reason(exc)) from None
            offset = _offset(records, offset)  # after the payload: warcio reads the record to its end for it
            missing = getattr(record.raw_stream, "limit", 0)
            if missing:
                raise WarcRecordError(path, number, offset, f"the file ends {missing:,} bytes before the record's "
                                                            "end (a truncated file)") from None
            yield b"\n" if doc is None else json.dumps(doc, ensure_ascii=False).encode("utf-8") + b"\n"


def _strict_iterator():
    from warcio.archiveiterator import ArchiveIterator

    class StrictIterator(ArchiveIterator):
        INC_RECORD = ""  # warcio writes this warning to stderr; warc_lines raises on err_count instead

    return StrictIterator


def _document(record) -> dict | None:
    kind = record.rec_type
    if kind not in PAGE_RECORDS:
        return None
    headers = record.rec_headers
    payload = record.content_stream().read()
    if kind == "conversion":
        text = payload.decode("utf-8", errors="replace")
    else:
        content_type = (record.http_headers.get_header("Content-Type") if record.http_headers
                        else headers.get_header("Content-Type")) or ""
        if kind == "response" and record.http_headers is None:
            return None  # a response without HTTP headers (dns:, ftp:): no page
        mime = content_type.split(";", 1)[0].strip().lower()
        if not mime.startswith("text/") and mime not in ("application/xhtml+xml", ""):
            return None
        found = _CHARSET.search(content_type)
        text = decode_page(payload, found.group(1) if found else None)
        if mime in ("text/html", "application/xhtml+xml", ""):
            text = html_to_text(text)[0]
    url = headers.get_header("WARC-Target-URI")
    return {"id": headers.get_header("WARC-Record-ID"), "url": url, "site": _host(url), "text": text,
            "warc_type": kind, "date": headers.get_header("WARC-Date")}


def _host(url: str | None) -> str | None:
    try:
        return urlsplit(url).hostname if url else None
    except ValueError:
        return None


def _offset(records, default: int) -> int:
    try:
        return int(records.get_record_offset())
    except Exception:  # before the first record warcio has none
        return default


def _reason(exc: BaseException) -> str:
    text = (str(exc).strip().splitlines() or [""])[0][:200]
    return f"bad WARC record ({type(exc).__name__}{': ' + text if text else ''})"


WET_NAMES = (".wet", ".wet.gz")


def write_wet(docs, path: str, name: str) -> int:
    """Write ``docs`` as a WET file (a ``warcinfo`` record, then one ``conversion`` record per
    document: its ``text``, at its ``url``), gzip per record when ``name`` ends in ``.gz``;
    return the count. ``bloomspan corpus web --out web.warc.wet.gz`` writes one."""
    import io

    from warcio.warcwriter import WARCWriter

    n = 0
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=name.lower().endswith(".gz"))
        writer.write_record(writer.create_warcinfo_record(name, {"software": "bloomspan corpus"}))
        for doc in docs:
            writer.write_record(writer.create_warc_record(
                doc.get("url") or f"urn:bloomspan:{n + 1}", "conversion",
                payload=io.BytesIO(doc["text"].encode("utf-8")), warc_headers_dict={"Content-Type": "text/plain"}))
            n += 1
    return n
