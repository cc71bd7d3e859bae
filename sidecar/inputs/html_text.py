"""A page's text as a simple crawler sees it, from its HTML (WARC pages, the real-site corpus).

Every visible text node is kept (navigation, headers, footers and sidebars included);
``script``, ``style``, ``template``, ``svg`` and everything in ``head`` are dropped (a head
left open ends at the first element a head cannot hold, as browsers parse it); block
elements (``div``, ``p``, ``li``, ``tr``, headings, ...) and ``br`` end a line; whitespace
runs collapse to one space except inside ``pre``, whose line breaks are kept.

:func:`html_to_text` can also mark the text outside given *main-content* elements (compound
:class:`Selector` values: ``tag``, ``#id``, ``.class``, ``[attr=value]`` and combinations such as
``div.body[role=main]``; no combinators): the real-site corpus with known templates
(:mod:`bloomspan.corpora.real_corpus`) labels that text as template.

:func:`decode_page` turns a page's bytes into text as a browser picks the encoding: a byte-order
mark, else the charset the HTTP headers declare, else the one a ``<meta>`` tag declares in the
first :data:`META_PRESCAN_BYTES` bytes, else UTF-8 when the whole page decodes as UTF-8, else
windows-1252. Decoding an ISO-8859-1 page as UTF-8 with replacement would
split every word at its accented letters.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser

# Elements whose content a crawler never shows.
SKIP_TAGS = frozenset({"script", "style", "template", "svg", "head", "noscript", "iframe", "object", "canvas"})
# Elements that start and end a line (roughly CSS display: block/list-item/table-row).
BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog", "div",
    "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hr", "html", "legend", "li", "main", "nav", "ol", "option", "p", "pre", "section",
    "summary", "table", "tbody", "tfoot", "thead", "tr", "ul",
})
CELL_TAGS = frozenset({"td", "th"})  # separated by a space, like innerText's tab
# Elements a document's head may hold: any other start tag ends an unclosed <head> (the HTML
# parsing rules), so a page that never writes </head> still shows its body (RDoc's pages).
HEAD_TAGS = frozenset({"head", "title", "meta", "link", "script", "style", "base", "noscript", "template"})
VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                       "param", "source", "track", "wbr"})
_SPACE_RE = re.compile(r"\s+")
META_PRESCAN_BYTES = 4096  # where a page's <meta charset> must be (the HTML standard's prescan: 1024)
_META_CHARSET_RE = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]+)", re.I)
# Labels browsers read as windows-1252 (the WHATWG Encoding standard): a page that says
# ISO-8859-1 or ASCII and uses the 0x80-0x9f range means windows-1252's curly quotes and dashes.
_WINDOWS_1252_LABELS = frozenset({"iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii",
                                  "iso_8859-1", "cp819", "ibm819", "windows-1252", "cp1252", "x-cp1252"})
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_SELECTOR_RE = re.compile(r"([a-zA-Z][a-zA-Z0-9-]*)|#([\w-]+)|\.([\w-]+)|\[([\w-]+)=['\"]?([^'\"\]]*)['\"]?\]")


@dataclass(frozen=True)
class Selector:
    """One compound selector: every given part must match (classes: all must be present)."""

    tag: str | None = None
    id: str | None = None
    classes: frozenset[str] = frozenset()
    attrs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> Selector:
        """``"div#id.cls[role=main]"`` -> Selector; ValueError names what could not be parsed."""
        tag = id_ = None
        classes: set[str] = set()
        attrs: list[tuple[str, str]] = []
        pos = 0
        for m in _SELECTOR_RE.finditer(text):
            if m.start() != pos or (m.group(1) and pos != 0):
                break
            pos = m.end()
            if m.group(1):
                tag = m.group(1).lower()
            elif m.group(2):
                id_ = m.group(2)
            elif m.group(3):
                classes.add(m.group(3))
            else:
                attrs.append((m.group(4).lower(), m.group(5)))
        if pos != len(text) or not text:
            raise ValueError(f"selector={text!r}: unsupported at character {pos}; use tag, #id, .class "
                             "and [attr=value] parts without spaces or combinators")
        return cls(tag, id_, frozenset(classes), tuple(attrs))

    def matches(self, tag: str, attrs: dict[str, str]) -> bool:
        if self.tag is not None and self.tag != tag:
            return False
        if self.id is not None and attrs.get("id") != self.id:
            return False
        if self.classes and not self.classes <= set((attrs.get("class") or "").split()):
            return False
        return all(attrs.get(k) == v for k, v in self.attrs)


class _Region:
    """An open element tracked by tag name: the region ends when its end tag balances."""

    __slots__ = ("tag", "depth")

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.depth = 1


class _CrawlerText(HTMLParser):
    """Collects lines of (text, in_main) pieces; see the module docstring for the rules."""

    def __init__(self, main: Sequence[Selector], exclude: Sequence[Selector]) -> None:
        super().__init__(convert_charrefs=True)
        self.main_sel, self.exclude_sel = main, exclude
        self.lines: list[list[tuple[str, bool]]] = []
        self.line: list[tuple[str, bool]] = []
        self.skip: list[_Region] = []
        self.main: _Region | None = None
        self.excluded: _Region | None = None
        self.pre = 0
        self.found_main = False

    # -- regions -------------------------------------------------------------------------
    def _open(self, tag: str, attrs: dict[str, str]) -> None:
        for region in (self.main, self.excluded, *self.skip):
            if region is not None and region.tag == tag:
                region.depth += 1
        if tag in SKIP_TAGS:
            self.skip.append(_Region(tag))
        if self.main is None:
            if any(s.matches(tag, attrs) for s in self.main_sel):
                self.main = _Region(tag)
                self.found_main = True
        elif self.excluded is None and any(s.matches(tag, attrs) for s in self.exclude_sel):
            self.excluded = _Region(tag)

    def _close(self, tag: str) -> None:
        if self.skip and self.skip[-1].tag == tag:
            self.skip[-1].depth -= 1
            if self.skip[-1].depth == 0:
                self.skip.pop()
        for name in ("excluded", "main"):
            region = getattr(self, name)
            if region is not None and region.tag == tag:
                region.depth -= 1
                if region.depth == 0:
                    setattr(self, name, None)
                    if name == "main":  # an exclusion never outlives main
                        self.excluded = None

    # -- text ----------------------------------------------------------------------------
    def _break(self) -> None:
        while self.line and self.line[-1][0].isspace():
            self.line.pop()
        if self.line:
            self.lines.append(self.line)
        self.line = []

    def _add(self, text: str) -> None:
        flag = self.main is not None and self.excluded is None
        if self.pre:
            parts = text.split("\n")
            for k, part in enumerate(parts):
                if k:
                    self._break()
                part = part.replace("\r", "")
                if part and (self.line or not part.isspace()):
                    self.line.append((part, flag))
            return
        for k, word in enumerate(_SPACE_RE.split(text)):
            if k and self.line and self.line[-1][0] != " ":
                self.line.append((" ", flag))
            if word:
                self.line.append((word, flag))

    # -- HTMLParser callbacks ------------------------------------------------------------
    def handle_starttag(self, tag, attrs):
        attrs_d = {k: (v or "") for k, v in attrs}
        if len(self.skip) == 1 and self.skip[0].tag == "head" and tag not in HEAD_TAGS:
            self.skip.pop()  # the body began without </head>
        if tag in VOID_TAGS:
            if tag in ("br", "hr") and not self.skip:
                self._break()
            return
        self._open(tag, attrs_d)
        if self.skip:
            return
        if tag in BLOCK_TAGS:
            self._break()
        elif tag in CELL_TAGS and self.line and self.line[-1][0] != " ":
            self.line.append((" ", False))
        if tag == "pre":
            self.pre += 1

    def handle_endtag(self, tag):
        if tag in VOID_TAGS:
            return
        was_skipped = bool(self.skip)
        self._close(tag)
        if was_skipped:
            return
        if tag == "pre" and self.pre:
            self.pre -= 1
        if tag in BLOCK_TAGS:
            self._break()

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID_TAGS:
            self.handle_endtag(tag)

    def handle_data(self, data):
        if not self.skip:
            self._add(data)


def decode_page(payload: bytes, declared: str | None = None) -> str:
    """The text of a page's bytes, the encoding chosen as the module docstring says: ``declared``
    is the HTTP ``Content-Type`` charset, or None. A declared charset (header or meta) that
    Python knows is the page's, its undecodable bytes replaced, as a browser shows them; a page
    that declares none (or none Python knows) is UTF-8 when it decodes as UTF-8, else
    windows-1252 (its five undefined bytes replaced)."""
    for bom, name in _BOMS:
        if payload.startswith(bom):
            return payload.decode(name, errors="replace")
    found = _META_CHARSET_RE.search(payload[:META_PRESCAN_BYTES])
    for label in (declared, found.group(1).decode("ascii") if found else None):
        if not label:
            continue
        name = "windows-1252" if label.strip().lower() in _WINDOWS_1252_LABELS else label.strip()
        try:
            return payload.decode(name, errors="replace")
        except LookupError:  # a charset Python does not know: the next clue decides
            continue
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError:
        return payload.decode("windows-1252", errors="replace")


def html_to_text(html: str, main: Sequence[str | Selector] = (), exclude: Sequence[str | Selector] = ()
                 ) -> tuple[str, list[list[int]], bool]:
    """Crawler text of ``html`` and its template spans.

    Returns ``(text, template_spans, found_main)``: lines joined by "\\n";
    ``template_spans`` are [start, end) character spans of text outside the main element
    (or inside an excluded one), ascending, disjoint, merged when adjacent;
    ``found_main`` says whether any ``main`` selector matched.
    """
    main_s = [s if isinstance(s, Selector) else Selector.parse(s) for s in main]
    excl_s = [s if isinstance(s, Selector) else Selector.parse(s) for s in exclude]
    parser = _CrawlerText(main_s, excl_s)
    parser.feed(html)
    parser.close()
    parser._break()
    parts: list[str] = []
    spans: list[list[int]] = []
    pos = 0
    for k, line in enumerate(parser.lines):
        if k:
            parts.append("\n")
            pos += 1
        for text, in_main in line:
            if not in_main and text != " ":
                if spans and spans[-1][1] >= pos - 1 and _only_space(parts, spans[-1][1], pos):
                    spans[-1][1] = pos + len(text)
                else:
                    spans.append([pos, pos + len(text)])
            parts.append(text)
            pos += len(text)
    return "".join(parts), spans, parser.found_main


def _only_space(parts: list[str], start: int, end: int) -> bool:
    """True when the characters [start, end) just written (at most one) are whitespace."""
    if end == start:
        return True
    return end - start == 1 and parts[-1][-1:].isspace()
