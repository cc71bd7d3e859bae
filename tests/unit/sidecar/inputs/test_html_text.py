"""decode_page: a page's bytes in the encoding a browser would pick (a byte-order mark, the
declared charset of the headers, then of a <meta> tag, else UTF-8 when it decodes, else
windows-1252), so an ISO-8859-1 page keeps its accented words whole."""
from __future__ import annotations

import pytest

from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.sidecar.inputs.html_text import decode_page, html_to_text

LATIN1_PAGE = '<html><head><meta charset="iso-8859-1"></head><body><p>Précédent : café naïve</p></body></html>'


def test_a_meta_declared_iso_8859_1_page_keeps_its_accented_words_whole():
    raw = LATIN1_PAGE.encode("latin-1")
    text = html_to_text(decode_page(raw))[0]
    assert text == "Précédent : café naïve"
    assert "café" in tokenize(text) and "naïve" in tokenize(text)
    assert "\ufffd" in raw.decode("utf-8", errors="replace")  # what reading it as UTF-8 did


@pytest.mark.parametrize("meta", ['<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">',
                                  "<meta charset='latin1'>", '<META CHARSET=windows-1252>'])
def test_every_way_of_declaring_latin_1_in_a_meta_tag_is_read(meta):
    raw = f"<html><head>{meta}</head><body>déjà vu</body></html>".encode("latin-1")
    assert "déjà vu" in decode_page(raw)


def test_iso_8859_1_is_read_as_windows_1252_like_browsers_do():
    raw = '<meta charset="iso-8859-1">“quoted” – dash'.encode("windows-1252")
    assert decode_page(raw).endswith("“quoted” – dash")


def test_the_http_charset_wins_over_the_meta_tag_and_unknown_labels_are_passed_over():
    raw = '<meta charset="utf-8"><p>café</p>'.encode("latin-1")
    assert decode_page(raw, "ISO-8859-1").endswith("café</p>")
    assert decode_page(raw, "no-such-charset").endswith("caf\ufffd</p>")  # then the meta tag's utf-8
    assert decode_page("<p>café</p>".encode("koi8-r", errors="replace"), "KOI8-R") == "<p>café</p>".encode(
        "koi8-r", errors="replace").decode("koi8-r")


def test_an_undeclared_page_is_utf_8_when_it_decodes_else_windows_1252():
    assert decode_page("<p>Пред. След. café</p>".encode()) == "<p>Пред. След. café</p>"
    assert decode_page("<p>café naïve</p>".encode("latin-1")) == "<p>café naïve</p>"
    assert decode_page(b"<p>\x81</p>") == "<p>\ufffd</p>"  # a byte windows-1252 leaves undefined


def test_a_byte_order_mark_decides_before_any_declaration():
    assert decode_page(b"\xef\xbb\xbf<meta charset=latin1><p>caf\xc3\xa9</p>") == "<meta charset=latin1><p>café</p>"
    assert decode_page("\ufeff<p>café</p>".encode("utf-16-le")) == "<p>café</p>"


def test_a_meta_tag_past_the_prescan_is_not_read():
    raw = b"<html>" + b" " * 5000 + b'<meta charset="iso-8859-1"><p>caf\xc3\xa9</p>'
    assert decode_page(raw).endswith("café</p>")  # UTF-8, not windows-1252's "cafÃ©"


def test_a_head_left_open_ends_where_the_body_begins():
    page = ("<html><head><meta charset='UTF-8'><title>T</title><script>var x = 1;</script>\n"
            "<body><nav>Home</nav><main><p>The body text.</p></main></body></html>")
    text, spans, found = html_to_text(page, ["main"])
    assert text == "Home\nThe body text." and found and spans == [[0, 4]]
    assert html_to_text("<head><title>T</title><p>no body tag</p>")[0] == "no body tag"
    assert html_to_text("<head><title>T</title><noscript>x</noscript></head><p>y</p>")[0] == "y"
