"""A document's scopes inside an ingest pipeline: the Painless twin of
:func:`bloomspan.ingest.match.scopes.template_scopes`, and the one condition every
cleaning processor of the exported pipeline shares.

The first script processor (:data:`STATE_SCRIPT`) computes, once per document, what the
cleaner's ``_prepare`` decides before matching, and keeps it in the temporary field
:data:`STATE_FIELD` (removed at the end):

* ``ok``: the text field is a string and the scope and URL fields are strings or absent (the
  cleaner leaves a document with a wrong-typed one untouched, so the pipeline does too);
* ``scopes``: the site, and ``site/<first d folders of the URL path>`` for every d (``site/``
  for a page at the root), the URL's path read as :func:`urllib.parse.urlsplit` reads it;
* ``edge``: the text holds no :data:`~.pipeline_regex.SENTINEL` of its own, so the pipeline
  may use one to mark a page's first tokens;
* ``repeated`` (when asked for): the page repeats a line (:func:`repeats_a_line`), where the
  detector's middle rule may treat a mid-page run of site matches as content; ``repeats``: how
  many of its lines repeat an earlier one (:func:`line_repeats`), where the table-of-contents rule
  may give lines back (it needs that many headings, each a copy of an earlier line).

:func:`document_scopes` is the same computation in Python, step by step, tested against
``template_scopes`` and against the node. Every cleaning processor's ``if`` is
:data:`CONDITION` with its own params: one script source, compiled once by the node.
"""
from __future__ import annotations

STATE_FIELD = "_bloomspan_state"
SCHEME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-."

STATE_SCRIPT = """
def target = ctx[params.target];
Map st = new HashMap();
st.ok = target instanceof String;
List scopes = new ArrayList();
def site = params.scope_field == null ? null : ctx[params.scope_field];
def url = params.url_field == null ? null : ctx[params.url_field];
if (site != null && !(site instanceof String)) { st.ok = false; }
if (url != null && !(url instanceof String)) { st.ok = false; }
if (st.ok && site != null && !site.isEmpty()) {
  scopes.add(site);
  if (url != null && !url.isEmpty()) {
    StringBuilder b = new StringBuilder();
    int a = 0;
    while (a < url.length() && url.charAt(a) <= 32) { a++; }
    for (int k = a; k < url.length(); k++) {
      char c = url.charAt(k);
      if (c != 9 && c != 10 && c != 13) { b.append(c); }
    }
    String u = b.toString();
    int i = u.indexOf(':');
    if (i > 0 && ((u.charAt(0) >= 97 && u.charAt(0) <= 122) || (u.charAt(0) >= 65 && u.charAt(0) <= 90))) {
      boolean scheme = true;
      for (int k = 0; k < i; k++) { if (params.scheme_chars.indexOf(u.substring(k, k + 1)) < 0) { scheme = false; } }
      if (scheme) { u = u.substring(i + 1); }
    }
    if (u.startsWith('//')) {
      int end = u.length();
      for (String d : ['/', '?', '#']) { int w = u.indexOf(d, 2); if (w >= 0 && w < end) { end = w; } }
      String netloc = u.substring(2, end);
      if (netloc.indexOf('[') >= 0 || netloc.indexOf(']') >= 0) { st.ok = false; }
      u = u.substring(end);
    }
    int f = u.indexOf('#');
    if (f >= 0) { u = u.substring(0, f); }
    int q = u.indexOf('?');
    if (q >= 0) { u = u.substring(0, q); }
    List parts = new ArrayList();
    int from = 0;
    while (from <= u.length()) {
      int slash = u.indexOf('/', from);
      int to = slash < 0 ? u.length() : slash;
      if (to > from) { parts.add(u.substring(from, to)); }
      from = to + 1;
    }
    if (parts.size() <= 1) { scopes.add(site + '/'); }
    String section = site;
    for (int k = 0; k + 1 < parts.size(); k++) { section = section + '/' + parts.get(k); scopes.add(section); }
  }
}
st.scopes = scopes;
st.edge = st.ok && target.indexOf(params.sentinel) < 0;
if (params.repeated_lines == true && st.ok) {
  String t = java.text.Normalizer.normalize(target, java.text.Normalizer.Form.NFKC).toUpperCase(Locale.ROOT)
      .toLowerCase(Locale.ROOT);
  Set seen = new HashSet();
  boolean repeated = false;
  int repeats = 0;
  boolean content = false;
  StringBuilder key = new StringBuilder();
  int i = 0;
  while (i <= t.length()) {
    if (i == t.length() || t.charAt(i) == (char) 10) {
      if (content && !seen.add(key.toString())) { repeated = true; repeats++; }
      key = new StringBuilder();
      content = false;
      i++;
      continue;
    }
    int cp = t.codePointAt(i);
    int type = Character.getType(cp);
    if (Character.isLetter(cp)) { key.appendCodePoint(cp); content = true; }
    else if (type >= 6 && type <= 11) { content = true; }
    i += Character.charCount(cp);
  }
  st.repeated = repeated;
  st.repeats = repeats;
}
ctx[params.state] = st;
""".strip()

# params: scope (the document lists it), any_of / none_of (maps: some / none of the
# document's scopes is a key), edge (the text holds no sentinel of its own), repeated (the
# page repeats a line, or does not), repeats_below (fewer of the page's lines than this repeat an
# earlier one).
CONDITION = """
def st = ctx[params.state];
if (st == null || st.ok != true) { return false; }
if (params.edge == true && st.edge != true) { return false; }
if (params.repeated != null && st.repeated != params.repeated) { return false; }
if (params.repeats_below != null && (st.repeats == null || st.repeats >= params.repeats_below)) { return false; }
if (params.scope != null && !st.scopes.contains(params.scope)) { return false; }
if (params.none_of != null) { for (def s : st.scopes) { if (params.none_of.containsKey(s)) { return false; } } }
if (params.any_of != null) {
  for (def s : st.scopes) { if (params.any_of.containsKey(s)) { return true; } }
  return false;
}
return true;
""".strip()

# params: a, b: the text changed (tidying touches only a text something was removed from).
CHANGED = "def a = ctx[params.a]; return a instanceof String && a != ctx[params.b];"


def state_params(target: str, scope_field: str | None, url_field: str | None, sentinel: str,
                 repeated_lines: bool = False) -> dict:
    return {"target": target, "scope_field": scope_field, "url_field": url_field, "sentinel": sentinel,
            "scheme_chars": SCHEME_CHARS, "state": STATE_FIELD, "repeated_lines": repeated_lines}


_MARK_OR_NUMBER = {"Mn", "Mc", "Me", "Nd", "Nl", "No"}  # Character.getType 6..11


def repeats_a_line(text: str) -> bool:
    """:data:`STATE_SCRIPT`'s ``repeated`` in Python: some line of ``text`` (one holding a
    letter, digit or mark) has the same key as another, the key being its letters after NFKC
    and upper- then lower-casing. The key is coarser than the tokenizer's line identity
    (digits and separators dropped), so a page the matcher sees repeating a line always
    reads as repeating here: the pipeline then treats it as the cleaner may."""
    return line_repeats(text) > 0


def line_repeats(text: str) -> int:
    """:data:`STATE_SCRIPT`'s ``repeats`` in Python: the lines of ``text`` (those holding a
    letter, digit or mark) whose key (as :func:`repeats_a_line`) an earlier line has. With the
    coarser key, the count is never below the matcher's (its lines whose tokens an earlier line
    has): lines of one token sequence share a key."""
    import unicodedata

    seen: set[str] = set()
    repeats = 0
    for line in unicodedata.normalize("NFKC", text).upper().lower().split("\n"):
        key = "".join(c for c in line if c.isalpha() and unicodedata.category(c).startswith("L"))
        content = bool(key) or any(unicodedata.category(c) in _MARK_OR_NUMBER for c in line)
        if content:
            if key in seen:
                repeats += 1
            seen.add(key)
    return repeats


def condition(**params) -> dict:
    """The ``if`` of a cleaning processor (params of :data:`CONDITION`)."""
    return {"lang": "painless", "source": CONDITION, "params": {"state": STATE_FIELD, **params}}


def document_scopes(site: object, url: object) -> list[str] | None:
    """:data:`STATE_SCRIPT`'s scopes in Python (None where it sets ``ok`` false): what
    ``template_scopes(site, url)`` gives for string fields, and None where the cleaner
    refuses the document (a scope or URL that is not a string), and where it might (a host
    with brackets: urlsplit validates the IPv6 address in them; the pipeline leaves such a page
    as sent). Not mirrored: urlsplit's refusal of a non-ASCII host whose NFKC form holds one of
    ``/?#@:``, where the cleaner leaves the page as sent and the pipeline cleans it."""
    if (site is not None and not isinstance(site, str)) or (url is not None and not isinstance(url, str)):
        return None
    if not site:
        return []
    scopes = [site]
    if not url:
        return scopes
    a = 0
    while a < len(url) and ord(url[a]) <= 32:
        a += 1
    u = "".join(c for c in url[a:] if c not in "\t\n\r")
    i = u.find(":")
    if i > 0 and ("a" <= u[0] <= "z" or "A" <= u[0] <= "Z") and all(c in SCHEME_CHARS for c in u[:i]):
        u = u[i + 1:]
    if u.startswith("//"):
        end = min([w for w in (u.find(d, 2) for d in "/?#") if w >= 0], default=len(u))
        netloc = u[2:end]
        if "[" in netloc or "]" in netloc:  # urlsplit validates a bracketed host: not done here, so refused
            return None
        u = u[end:]
    u = u.split("#", 1)[0].split("?", 1)[0]
    parts = [p for p in u.split("/") if p]
    if len(parts) <= 1:
        scopes.append(site + "/")
    section = site
    for p in parts[:-1]:
        section = f"{section}/{p}"
        scopes.append(section)
    return scopes
