"""Check, before a command reads a source index, that ``--index`` names indices that exist and
``--field`` a field they hold as text: a typo is one clear line instead of a run that reads
nothing.

:func:`check_source` looks at the mappings of the indices ``index`` resolves to (a name, an
alias or a pattern). The field must be mapped with a type that holds strings (``text``,
``keyword``, ...) in at least one of them; a field that is not mapped at all (``dynamic:
false`` keeps it in ``_source`` only) passes when a sample of documents holds it as a string.
:func:`check_fields_present` does the same for the optional fields a run reads beside it
(``--site-field``, ``--url-field``): mapped anywhere, or held by a sampled document.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator

from bloomspan.sidecar.errors import SourceIndexError

from .field_paths import MISSING, lookup_field

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


def check_fields_present(client, index: str, flags: dict[str, str | None]) -> None:
    """Raise :class:`SourceIndexError` for the first ``flag -> field name`` of ``flags`` that no
    index matching ``index`` maps and no sampled document holds: ``--site-field sitex`` is a
    typo, not a corpus without sites (the run would detect no template, without a word)."""
    from opensearchpy.exceptions import NotFoundError

    wanted = {flag: name for flag, name in flags.items() if name}
    if not wanted:
        return
    try:
        mappings = client.indices.get_mapping(index=index, allow_no_indices=True, expand_wildcards="open")
    except NotFoundError:
        return  # check_source names a missing index
    bodies = [body.get("mappings") or {} for body in mappings.values()]
    for flag, name in wanted.items():
        if any(field_type(body, name) is not None for body in bodies):
            continue
        if _sampled(client, index, name, lambda value: value is not None):
            continue
        seen = sorted({f for body in bodies for f in mapped_fields(body)}, key=lambda f: (f.startswith("bloomspan."), f))
        raise SourceIndexError(f"{flag} {name}: no index matching {index} has this field (fields seen: "
                               f"{_names(seen) or 'none mapped'}); name the field that holds it",
                               index=index, field=name)


def mapped_fields(mappings: dict, prefix: str = "") -> Iterator[str]:
    """Dotted names of every field mapped with a type (objects opened, multi-fields left out)."""
    for name, node in (mappings.get("properties") or {}).items():
        path = f"{prefix}{name}"
        if "type" in node and node["type"] != "object":
            yield path
        if "properties" in node:
            yield from mapped_fields(node, prefix=path + ".")


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
    return _sampled(client, index, field, lambda value: isinstance(value, str))


def _sampled(client, index: str, field: str, accept) -> bool:
    """Whether one of :data:`SAMPLE_DOCS` documents holds ``field`` with a value ``accept`` takes."""
    res = client.search(index=index, body={"size": SAMPLE_DOCS, "_source": [field], "query": {"match_all": {}}})
    for hit in res.get("hits", {}).get("hits", []):
        value = lookup_field(hit.get("_source") or {}, field)
        if value is not MISSING and accept(value):
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
