"""Check, before a command reads a source index, that ``--index`` names indices that exist and
``--field`` a field they hold as text: a typo is one clear line instead of a run that reads
nothing.

:func:`check_source` looks at the mappings of the indices ``index`` resolves to (a name, an
alias or a pattern). The field must be mapped with a type that holds strings (``text``,
``keyword``, ...) in at least one of them; a field that is not mapped at all (``dynamic:
false`` keeps it in ``_source`` only) passes when a sample of documents holds it as a string.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator

from bloomspan.sidecar.errors import SourceIndexError

log = logging.getLogger(__name__)

# Field types whose values are strings: what mining, dedup and collapse can read.
STRING_TYPES = frozenset({"text", "match_only_text", "search_as_you_type", "keyword", "wildcard",
                          "constant_keyword"})
TEXT_TYPES = frozenset({"text", "match_only_text", "search_as_you_type"})
SAMPLE_DOCS = 50  # documents looked at for a field no mapping names
SHOWN = 8  # names listed in a message


def check_source(client, index: str, field: str, *, cluster: str = "the cluster") -> dict[str, str | None]:
    """Raise :class:`SourceIndexError` (``index``/``field`` set, message naming the flag) when
    ``index`` matches no index or ``field`` is missing from all of them or holds no strings.

    Returns the field's mapped type per concrete index (``None`` where it is not mapped).
    """
    from opensearchpy.exceptions import NotFoundError

    try:
        mappings = client.indices.get_mapping(index=index, allow_no_indices=True, expand_wildcards="open")
    except NotFoundError:
        mappings = {}
    if not mappings:
        raise SourceIndexError(f"--index {index}: no such index on {cluster}{_existing(client)}", index=index)
    types = {name: field_type(body.get("mappings") or {}, field) for name, body in mappings.items()}
    mapped = {name: t for name, t in types.items() if t is not None}
    text_fields = sorted({f for body in mappings.values() for f in string_fields(body.get("mappings") or {})})
    hint = f" (string fields there: {_names(text_fields)})" if text_fields else ""
    if mapped:
        if not any(t in STRING_TYPES for t in mapped.values()):
            shown = ", ".join(sorted(set(mapped.values())))
            raise SourceIndexError(f"--field {field}: mapped as {shown} in {index}, not text; choose a text "
                                   f"field{hint}", index=index, field=field)
        return types
    if _sampled_as_string(client, index, field):
        log.info("source_check field=%s index=%s unmapped but present in _source", field, index)
        return types
    raise SourceIndexError(f"--field {field}: no index matching {index} has it{hint}", index=index, field=field)


def field_type(mappings: dict, path: str) -> str | None:
    """The type of the dotted ``path`` in one index's mappings (multi-fields included)."""
    props: dict = mappings.get("properties") or {}
    parts = path.split(".")
    node: dict | None = None
    i = 0
    while i < len(parts):
        node = None
        # a name may itself hold dots (``"a.b": {...}``): try the longest name first
        for j in range(len(parts), i, -1):
            name = ".".join(parts[i:j])
            if name in props:
                node, i = props[name], j
                break
        if node is None:
            return None
        props = {**(node.get("properties") or {}), **(node.get("fields") or {})}
    if node is None:
        return None
    return node.get("type") or ("object" if "properties" in node else None)


def string_fields(mappings: dict, prefix: str = "") -> Iterator[str]:
    """Dotted names of the fields mapped with a :data:`STRING_TYPES` type (not multi-fields)."""
    for name, node in (mappings.get("properties") or {}).items():
        path = f"{prefix}{name}"
        if node.get("type") in STRING_TYPES:
            yield path
        if "properties" in node:
            yield from string_fields(node, prefix=path + ".")


def _sampled_as_string(client, index: str, field: str) -> bool:
    from .field_paths import MISSING, lookup_field

    res = client.search(index=index, body={"size": SAMPLE_DOCS, "_source": [field], "query": {"match_all": {}}})
    for hit in res.get("hits", {}).get("hits", []):
        value = lookup_field(hit.get("_source") or {}, field)
        if value is not MISSING and isinstance(value, str):
            return True
    return False


def _existing(client) -> str:
    """``; indices there: a, b, ...`` (not hidden or system ones), or nothing."""
    try:
        rows = client.cat.indices(format="json", h="index", expand_wildcards="open")
    except Exception:  # listing is only a hint; a user without the privilege still gets the error
        log.debug("source_check cannot list indices", exc_info=True)
        return ""
    names = sorted(r["index"] for r in rows if not r["index"].startswith("."))
    return f"; indices there: {_names(names)}" if names else "; the cluster holds no index"


def _names(names: list[str]) -> str:
    return ", ".join(names[:SHOWN]) + (f", … ({len(names)} in all)" if len(names) > SHOWN else "")
