"""What the proxy relays: never a write to its own indices, and an allow-list on its own credentials.

Two rules, checked on every proxied request before anything is forwarded:

1. **Protected indices, in every mode.** The template alias ``T``, its physical indices
   ``T-*`` and the lease index are written only by bloomspan itself, never through the
   proxy: a write whose target reaches one of them is refused — an index expression in the
   path (wildcards, ``_all``, date math and comma lists included), an alias or target index
   named in the path (``/_alias/T``, ``/_clone/T-x``), the names in an ``_aliases``,
   ``_reindex``, index-template or snapshot-restore body, and each ``_bulk`` item's
   ``_index``. A bulk with one such item is refused whole, naming the item. Reads (GET,
   HEAD, and the POST read endpoints below) of these indices stay allowed. A concrete name
   that is an alias or a data stream is checked with the indices behind it
   (:mod:`.target_resolution` asks the cluster first).
2. **With the sidecar's credentials** (``--no-forward-credentials``) the client is not
   authenticated by the cluster, so only an allow-list is relayed:

   * reads: GET, HEAD and OPTIONS (except the security plugin's API, which would show the
     sidecar's identity and users), and POST to the read endpoints of :data:`POST_READS`
     (``_search``, ``_msearch``, ``_count``, ``_mget``, ``_field_caps``,
     ``_validate/query``, ``_explain``, ``_search/scroll``, opening a point in time,
     ``_analyze``, term vectors, search templates, ``_search_shards``); DELETE of a scroll or
     a point in time;
   * document writes to a concrete index matching ``--clean-index``: ``_bulk`` (every item's
     index must match), ``PUT/POST _doc``, ``_create``, ``POST _update``, ``DELETE _doc/<id>``,
     and ``GET/POST <index>/_refresh``. An alias qualifies when it matches and every index
     behind it would; a data stream when it matches and none of its backing indices is
     protected.

   Everything else — index creation and deletion, mappings, settings, aliases, templates,
   scripts, pipelines, ``_reindex``, ``_update_by_query``/``_delete_by_query``, cluster
   settings, snapshots, wildcard or ``_all`` writes, ``_flush`` — is refused, whatever the
   method (``GET /_refresh`` and ``GET /_flush`` write as their POST twins do).

A refusal is a :class:`Refusal` (a metric label and a reason naming what was refused and
why); the service answers it with 403. The JSON these rules read is parsed the way the node
parses it where that matters: only the first object of a bulk action line counts (the node
ignores what follows it), ``/* */`` and ``//`` comments are removed first (the node accepts
them), and bytes that still do not parse are checked for protected names as they are. With
the client's own credentials rule 1 is a guard against mistakes, not a security boundary (the client could write to the cluster
directly): a script or ingest pipeline that changes a document's ``_index`` is not followed.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

from bloomspan.sidecar.serve.bulk_items import BulkBody, BulkItem, Pairs, load_lenient, parse_bulk, strip_comments
from bloomspan.sidecar.serve.bulk_proxy import IndexPatterns
from bloomspan.sidecar.serve.target_resolution import NOTHING_RESOLVED, Resolution, is_concrete

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
ANY = None  # one path segment, whatever it is
# Endpoints the node also takes as GET that write (refresh and flush): checked like the POST.
GET_WRITES: tuple[tuple[str | None, ...], ...] = (("_refresh",), ("_flush",), ("_flush", "synced"))
# POST endpoints that only read, after the optional index expression.
POST_READS: tuple[tuple[str | None, ...], ...] = (
    ("_search",), ("_msearch",), ("_count",), ("_mget",), ("_field_caps",), ("_validate", "query"),
    ("_explain", ANY), ("_search", "scroll"), ("_search", "scroll", ANY), ("_search", "point_in_time"),
    ("_analyze",), ("_termvectors",), ("_termvectors", ANY), ("_mtermvectors",), ("_search", "template"),
    ("_msearch", "template"), ("_render", "template"), ("_render", "template", ANY), ("_search_shards",),
)
# DELETEs that only release a read context.
READ_RELEASES: tuple[tuple[str | None, ...], ...] = (
    ("_search", "scroll"), ("_search", "scroll", ANY), ("_search", "point_in_time"), ("_search", "point_in_time", "_all"),
)
SECURITY_API = (("_plugins", "_security"), ("_opendistro", "_security"))
# Endpoints whose JSON body names indices or aliases, and the keys that hold them.
BODY_TARGET_ENDPOINTS = frozenset({"_aliases", "_reindex", "_index_template", "_template", "_restore"})
NAME_KEYS = frozenset({"index", "indices", "alias", "aliases", "index_patterns"})
PATH_TARGETS = {"_alias": "alias", "_aliases": "alias", "_clone": "target index", "_split": "target index",
                "_shrink": "target index", "_rollover": "new index"}
__all__ = ["AccessPolicy", "Refusal", "bulk_items", "split_path", "strip_comments"]
ALTERNATIVE_BODY_FORMATS = ("smile", "cbor", "yaml")


@dataclass(frozen=True)
class Refusal:
    """Why the proxy will not relay a request: ``rule`` labels the metric, ``reason`` is for the client."""

    rule: str
    reason: str


def split_path(raw_path: str) -> list[str]:
    """Percent-decoded path segments of a raw request path (``a%2Fb`` stays one segment)."""
    from urllib.parse import unquote

    path = raw_path.split("?", 1)[0]
    return [unquote(s) for s in path.split("/") if s]


def _matches(rest: list[str], shapes) -> bool:
    return any(len(shape) == len(rest) and all(s is ANY or s == r for s, r in zip(shape, rest)) for shape in shapes)


def _split_target(segments: list[str]) -> tuple[str | None, list[str]]:
    """``(index expression or None, the rest of the path)``."""
    index_expr = segments[0] if segments and (not segments[0].startswith("_") or segments[0] == "_all") else None
    return index_expr, (segments[1:] if index_expr is not None else segments)


def _is_read(method: str, rest: list[str]) -> bool:
    """Whether ``method`` on the path ``rest`` (after the index expression) only reads."""
    if method in READ_METHODS:
        return not (method == "GET" and _matches(rest, GET_WRITES))
    return (method == "POST" and _matches(rest, POST_READS)) or (method == "DELETE" and _matches(rest, READ_RELEASES))


@lru_cache(maxsize=4096)
def globs_intersect(a: str, b: str) -> bool:
    """True when some index name matches both ``*``-glob ``a`` and ``*``-glob ``b``."""

    @cache
    def go(i: int, j: int) -> bool:
        if i == len(a) and j == len(b):
            return True
        if i < len(a) and a[i] == "*":
            return go(i + 1, j) or (j < len(b) and go(i, j + 1))
        if j < len(b) and b[j] == "*":
            return go(i, j + 1) or (i < len(a) and go(i + 1, j))
        return i < len(a) and j < len(b) and a[i] == b[j] and go(i + 1, j + 1)

    return go(0, 0)


def expression_globs(expression: str) -> list[str]:
    """The ``*``-globs an index expression can reach: comma lists split, ``_all`` is ``*``,
    date math ``<name-{now/d}>`` is ``name-*``; exclusions (``-name``) only narrow, so they
    are left out (the check stays conservative)."""
    globs = []
    for term in expression.split(","):
        term = term.strip()
        if not term or term.startswith("-"):
            continue
        if term == "_all":
            term = "*"
        elif term.startswith("<") and term.endswith(">"):
            term, depth, out = term[1:-1], 0, []
            for ch in term:
                if ch == "{":
                    depth += 1
                    if depth == 1:
                        out.append("*")
                elif ch == "}":
                    depth = max(0, depth - 1)
                elif depth == 0:
                    out.append(ch)
            term = "".join(out)
        globs.append(term)
    return globs


def bulk_items(body: bytes, default_index: str | None) -> Iterator[BulkItem]:
    """The items the access rules check (:meth:`BulkBody.access_items` of :func:`parse_bulk`),
    for a caller that has only the body."""
    return parse_bulk(body, default_index).access_items()


def _bulk_of(body: bytes, index_expr: str | None, bulk: BulkBody | None) -> BulkBody:
    """The caller's reading of the body when it has one (for this path's index), else a new one."""
    if bulk is not None and bulk.body is body and bulk.default_index == index_expr:
        return bulk
    return parse_bulk(body, index_expr)


def _body_names(value) -> list:
    """Every value under a key of :data:`NAME_KEYS`, anywhere in a parsed JSON body."""
    found, stack = [], [value]
    while stack:
        node = stack.pop()
        if isinstance(node, Pairs):
            for key, child in node:
                if key in NAME_KEYS:
                    found.extend(child if isinstance(child, list) and not isinstance(child, Pairs) else [child])
                stack.append(child)
        elif isinstance(node, list):
            stack.extend(node)
    return found


@dataclass(frozen=True)
class AccessPolicy:
    """The two rules of the module doc for one `serve` configuration."""

    clean: IndexPatterns
    template_index: str | None
    lease_index: str | None
    sidecar_credentials: bool

    # ------------------------------------------------------------ protected indices
    @property
    def protected(self) -> tuple[tuple[str, str], ...]:
        """(glob, what it is) of every index the proxy never writes."""
        out = []
        if self.template_index:
            out += [(self.template_index, f"the template index alias {self.template_index!r}"),
                    (f"{self.template_index}-*", f"a physical template index ({self.template_index}-*)")]
        if self.lease_index:
            out.append((self.lease_index, f"the lease index {self.lease_index!r}"))
        return tuple(out)

    def protected_reached(self, expression, resolution: Resolution = NOTHING_RESOLVED) -> str | None:
        """What protected index ``expression`` (an index name or expression) can reach, or None;
        through ``resolution``, also the indices behind a name that is an alias or data stream."""
        if not isinstance(expression, str):
            return None
        for glob in expression_globs(expression):
            for pattern, what in self.protected:
                if globs_intersect(glob, pattern):
                    return what
            for index in resolution.behind(glob):
                what = self.protected_reached(index)
                if what:
                    return f"{what} (behind {glob!r}, an alias or data stream)"
        return None

    def _raw_may_name_protected(self, raw: bytes) -> bool:
        """For bytes the proxy cannot parse (nor, then, the node): do they spell a protected name?"""
        names = [p.rstrip("-*") for p, _ in self.protected]
        return any(name.encode() in raw for name in names if name)

    # ------------------------------------------------------------ the check
    def names_to_resolve(self, method: str, segments: list[str], body: bytes, bulk: BulkBody | None = None) -> list[str]:
        """The concrete names a write targets (the path's index expression, each bulk item's
        ``_index``), for :mod:`.target_resolution`; none for a read. ``bulk``: the body's
        :func:`parse_bulk`, when the caller has it (else it is parsed here)."""
        method = method.upper()
        index_expr, rest = _split_target(segments)
        if _is_read(method, rest):
            return []
        names = {term for term in (index_expr or "").split(",") if is_concrete(term)}
        if rest and rest[-1] == "_bulk":
            names.update(i for item in _bulk_of(body, index_expr, bulk).access_items() for i in item.indices
                         if is_concrete(i))
        return sorted(names)

    def check(self, method: str, segments: list[str], query: Mapping[str, str], content_type: str | None,
              body: bytes, resolution: Resolution = NOTHING_RESOLVED, bulk: BulkBody | None = None) -> Refusal | None:
        """None when the request may be relayed, else the :class:`Refusal` (see the module doc).
        ``resolution``: what the names of :meth:`names_to_resolve` are (aliases, data streams);
        ``bulk``: the body's :func:`parse_bulk`, when the caller has it (else it is parsed here)."""
        method = method.upper()
        shown = f"{method} /{'/'.join(segments)}"
        index_expr, rest = _split_target(segments)
        if method in READ_METHODS and _is_read(method, rest):
            if self.sidecar_credentials and any(tuple(segments[:2]) == api for api in SECURITY_API):
                return Refusal("not_allowed", f"{shown}: the security plugin's API is not relayed with the "
                                              "sidecar's own credentials (--no-forward-credentials)")
            return None
        if _is_read(method, rest):
            return None
        if resolution.failed and self.sidecar_credentials:
            return Refusal("unresolved", f"{shown}: the proxy could not learn which indices the targets are "
                                         f"({resolution.failed}); with the sidecar's own credentials it relays "
                                         "no write it cannot check")
        if "source" in query:
            return Refusal("body_in_query", f"{shown}: a write with its body in the `source` query parameter is not "
                                            "relayed; send the body as the request body")
        if body and content_type and any(f in content_type.lower() for f in ALTERNATIVE_BODY_FORMATS):
            return Refusal("body_format", f"{shown}: Content-Type {content_type!r}: the proxy relays JSON bodies "
                                          "only for writes (it must read them)")
        if rest and rest[-1] == "_bulk":
            bulk = _bulk_of(body, index_expr, bulk)
        refusal = self._check_protected(shown, index_expr, rest, body, resolution, bulk)
        if refusal is None and self.sidecar_credentials:
            refusal = self._check_allow_list(shown, method, index_expr, rest, resolution, bulk)
        return refusal

    def _check_protected(self, shown: str, index_expr: str | None, rest: list[str], body: bytes,
                         resolution: Resolution, bulk: BulkBody | None) -> Refusal | None:
        targets = [("index", index_expr)] if index_expr is not None else []
        if len(rest) >= 2 and rest[0] in PATH_TARGETS:
            targets.append((PATH_TARGETS[rest[0]], rest[1]))
        for kind, expression in targets:
            what = self.protected_reached(expression, resolution)
            if what:
                return Refusal("protected_index", f"{shown}: the {kind} {expression!r} reaches {what}, which the "
                                                  "proxy never writes (bloomspan maintains it)")
        if rest and rest[-1] == "_bulk":
            for item in bulk.access_items():
                if not item.parsed:
                    if self._raw_may_name_protected(bulk.raw(item.action_span)):
                        return Refusal("protected_index", f"{shown}: bulk line {item.line} is not JSON the proxy can "
                                                          "read and may name an index it never writes")
                    continue
                for index in item.indices:
                    what = self.protected_reached(index, resolution)
                    if what:
                        return Refusal("protected_index", f"{shown}: bulk item {item.number} (line {item.line}, "
                                                          f"{item.verbs[0]}) targets {index!r}, {what}, which the "
                                                          "proxy never writes; nothing of this request was forwarded")
        elif body and (set(rest) & BODY_TARGET_ENDPOINTS):
            try:
                names = _body_names(load_lenient(body))
            except (ValueError, UnicodeDecodeError):
                if self._raw_may_name_protected(body):
                    return Refusal("protected_index", f"{shown}: the body is not JSON the proxy can read and may "
                                                      "name an index it never writes")
                return None
            for name in names:
                what = self.protected_reached(name)
                if what:
                    return Refusal("protected_index", f"{shown}: the body names {name!r}, which reaches {what}; "
                                                      "the proxy never changes it")
        return None

    # ------------------------------------------------------------ the allow-list
    def clean_target(self, index, resolution: Resolution = NOTHING_RESOLVED) -> bool:
        """A concrete name that matches ``--clean-index`` and is not protected; an alias only when
        every index behind it is such a name too, a data stream when none of its backing indices
        is protected."""
        if not (isinstance(index, str) and not any(c in index for c in "*,<>?\"\\/| ")
                and not index.startswith(("_", "-", "+")) and self.clean.matches(index)
                and self.protected_reached(index) is None):
            return False
        if index in resolution.aliases:
            return all(self.clean_target(behind) for behind in resolution.aliases[index])
        return not any(self.protected_reached(behind) for behind in resolution.data_streams.get(index, ()))

    def _check_allow_list(self, shown: str, method: str, index_expr: str | None, rest: list[str],
                          resolution: Resolution, bulk: BulkBody | None) -> Refusal | None:
        patterns = ", ".join(self.clean.patterns) or "(no --clean-index pattern)"
        why = ("with the sidecar's own credentials (--no-forward-credentials) the proxy relays only reads "
               f"and document writes to indices matching {patterns}")
        if rest == ["_bulk"] and method in ("POST", "PUT"):
            if index_expr is not None and not self.clean_target(index_expr, resolution):
                return Refusal("not_allowed", f"{shown}: index {index_expr!r} does not match; {why}")
            for item in bulk.access_items():
                if not item.parsed:
                    return Refusal("not_allowed", f"{shown}: bulk line {item.line} is not an action line the proxy "
                                                  f"can check; {why}")
                if not item.indices:
                    return Refusal("not_allowed", f"{shown}: bulk item {item.number} (line {item.line}) names no "
                                                  f"index; {why}")
                for index in item.indices:
                    if not self.clean_target(index, resolution):
                        return Refusal("not_allowed", f"{shown}: bulk item {item.number} (line {item.line}, "
                                                      f"{item.verbs[0]}) targets {index!r}; {why}")
            return None
        if index_expr is not None and self.clean_target(index_expr, resolution):
            if (method in ("PUT", "POST") and len(rest) == 2 and rest[0] in ("_doc", "_create")) \
                    or (method == "POST" and rest == ["_doc"]) or (method in ("GET", "POST") and rest == ["_refresh"]) \
                    or (method == "POST" and len(rest) == 2 and rest[0] == "_update") \
                    or (method == "DELETE" and len(rest) == 2 and rest[0] == "_doc"):
                return None
        return Refusal("not_allowed", f"{shown}: not a read or a document write; {why}")
