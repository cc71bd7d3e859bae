"""Mappings where cleaned documents land: a composable index template for each clean-index
pattern, and the same fields added to the indices that already exist.

What bloomspan writes onto a document (``mappings/documents.json``: ``bloomspan.*``, with
``boilerplate_ratio`` a ``rank_feature`` of negative impact and ``fingerprint`` binary;
plus ``<field>_clean`` and ``<field>_chunks`` as text for each cleaned field) must be
mapped before the first document arrives: dynamic mapping makes the ratio a float and the
fingerprint text, and the README's ``rank_feature`` query then fails. For a pattern ``P``
(``setup --clean-index P``, ``setup --index P``, ``serve --clean-index P`` at startup):

1. ``PUT _component_template/bloomspan-clean-<slug>`` holds those mappings;
2. ``PUT _index_template/bloomspan-clean-<slug>``: ``index_patterns [P]``, ``composed_of``
   that component, priority 0. OpenSearch gives a new index the settings and mappings of
   ONE index template (the matching one of highest priority; composable templates beat
   legacy ones), so templates do not merge: if any index template of yours (composable or
   legacy) already matches an index name ``P`` matches, bloomspan installs no index template
   (it would replace your settings, or never apply) and says to add the component template
   to your template's ``composed_of`` instead, where it merges (your own ``template`` block
   still wins on any conflict). Priority 0, the lowest, means any template you add later
   with a higher priority replaces bloomspan's for its indices (add the component to it);
   one you add at priority 0 that overlaps is refused by OpenSearch with a message naming
   bloomspan's template.
3. the indices that match ``P`` now get the same fields with ``PUT /<index>/_mapping``, one
   call per concrete index (``<field>_clean`` takes the analyzer of ``<field>`` there). A
   pattern that matches no index touches no index: nothing is ever sent to ``_all``.

On a node without the mapper-extras module (Elasticsearch 8's integ-test distribution) the
ratios are mapped as ``float`` instead of ``rank_feature``
(:meth:`~bloomspan.sidecar.cluster.engine.ClusterEngine.adapt_mappings`) and setup says so.

The slug is the pattern, lowercased, with characters not allowed in a name replaced and a
short hash of the pattern appended when it holds a wildcard, so two patterns never share
a template.
"""
from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from bloomspan.mappings import load
from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.cluster.engine import engine_of

log = logging.getLogger(__name__)

PREFIX = "bloomspan-clean-"
PRIORITY = 0
CLEAN_SUFFIX = "_clean"    # CleanerConfig.clean_suffix
CHUNKS_SUFFIX = "_chunks"  # CleanerConfig.chunks_suffix
_COPIED_TEXT_KEYS = ("analyzer", "search_analyzer", "search_quote_analyzer")


@dataclass
class InstallReport:
    """What was installed (``lines``) and what could not be (``problems``), one line each."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def template_name(pattern: str) -> str:
    """``bloomspan-clean-<slug>`` for an index pattern (see the module docstring)."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", pattern.lower().replace("*", "")).strip("-_.") or "all"
    if "*" in pattern or slug != pattern:
        slug = f"{slug}-{hashlib.sha1(pattern.encode('utf-8')).hexdigest()[:6]}"
    return PREFIX + slug


def globs_overlap(a: str, b: str) -> bool:
    """True when some index name matches both patterns (``*`` is the only wildcard)."""

    @cache
    def meet(i: int, j: int) -> bool:
        if i == len(a) and j == len(b):
            return True
        if i < len(a) and a[i] == "*" and (meet(i + 1, j) or (j < len(b) and meet(i, j + 1))):
            return True
        if j < len(b) and b[j] == "*" and (meet(i, j + 1) or (i < len(a) and meet(i + 1, j))):
            return True
        return i < len(a) and j < len(b) and a[i] == b[j] != "*" and meet(i + 1, j + 1)

    return meet(0, 0)


def document_mappings(fields: Sequence[str]) -> dict:
    """The ``mappings`` body of the fields bloomspan writes onto documents cleaned in ``fields``."""
    mappings = load("documents")["template"]["mappings"]
    for name in fields:
        mappings["properties"][name + CLEAN_SUFFIX] = {"type": "text"}
        mappings["properties"][name + CHUNKS_SUFFIX] = {"type": "text"}
    return mappings


def _own_templates(client) -> list[tuple[str, list[str]]]:
    """``(name, index_patterns)`` of every index template bloomspan did not install, composable
    and legacy."""
    out = []
    for t in (client.indices.get_index_template(ignore=[404]) or {}).get("index_templates", []):
        body = t.get("index_template", {})
        if (body.get("_meta") or {}).get("managed_by") != "bloomspan":
            out.append((t["name"], list(body.get("index_patterns") or [])))
    for name, body in (client.indices.get_template(ignore=[404]) or {}).items():
        if isinstance(body, dict) and "index_patterns" in body:
            out.append((f"{name} (legacy)", list(body["index_patterns"])))
    return out


def _concrete_indices(client, pattern: str) -> list[str]:
    """Open, non-hidden indices that ``pattern`` names now (none for a missing exact name)."""
    resp = client.indices.get_settings(index=pattern, name="index.number_of_shards", expand_wildcards="open",
                                       ignore=[404])
    if not isinstance(resp, dict) or resp.get("status") == 404 or "error" in resp:
        return []
    return sorted(i for i in resp if not i.startswith("."))


def _with_source_analyzers(client, index: str, fields: Sequence[str], mappings: dict) -> dict:
    """``mappings`` with ``<field>_clean`` analysed as ``<field>`` is in ``index``."""
    import copy

    out = copy.deepcopy(mappings)
    if not fields:
        return out
    found = client.indices.get_field_mapping(fields=",".join(fields), index=index, ignore=[404])
    by_field = (found.get(index) or {}).get("mappings", {}) if isinstance(found, dict) else {}
    for name in fields:
        leaf = (by_field.get(name) or {}).get("mapping", {})
        spec = next(iter(leaf.values()), {}) if leaf else {}
        if spec.get("type") == "text":
            out["properties"][name + CLEAN_SUFFIX].update({k: spec[k] for k in _COPIED_TEXT_KEYS if k in spec})
    return out


def add_document_fields(client, indices: Sequence[str], fields: Sequence[str], report: InstallReport) -> None:
    """``PUT /<index>/_mapping`` of the document fields, one concrete index at a time."""
    from opensearchpy.exceptions import RequestError

    mappings = engine_of(client).adapt_mappings(document_mappings(fields))
    for index in indices:
        if not index or "*" in index or index.startswith("_"):
            raise ValueError(f"add_document_fields: {index!r} is not a concrete index name")
        try:
            client.indices.put_mapping(index=index, body=_with_source_analyzers(client, index, fields, mappings))
        except RequestError as exc:
            reason = exc.info.get("error", {}).get("reason") if isinstance(exc.info, dict) else exc.error
            report.problems.append(f"bloomspan fields NOT added to {index}: {reason}; documents written there keep "
                                   "the old mapping (reindex into a new index that the template maps)")
            continue
        report.lines.append(f"bloomspan fields -> {index}")


def install_clean_templates(client, patterns: Sequence[str], fields: Sequence[str]) -> InstallReport:
    """Steps 1-3 of the module docstring for each pattern; never touches an index the
    patterns do not name, and never raises for a template it decides not to install."""
    report = InstallReport()
    if not fields:
        raise ValueError("install_clean_templates: give the cleaned text fields")

    theirs = _own_templates(client)
    engine = engine_of(client)
    mappings = engine.adapt_mappings(document_mappings(fields))
    if not engine.has_rank_feature:
        report.lines.append(f"bloomspan.boilerplate_ratio as float, not rank_feature: {engine.name} has no "
                            "mapper-extras module; down-weight with function_score instead of a rank_feature query")
    for pattern in dict.fromkeys(patterns):  # each pattern once, in order
        name = template_name(pattern)
        meta = {"managed_by": "bloomspan", "mapping": "documents", "pattern": pattern, "fields": list(fields)}
        client.cluster.put_component_template(name=name, body={"template": {"mappings": mappings}, "_meta": meta})
        report.lines.append(f"component template {name} (bloomspan fields for {', '.join(fields)})")
        overlapping = sorted(t for t, pats in theirs if any(globs_overlap(pattern, p) for p in pats))
        if overlapping:
            report.problems.append(
                f"index template for {pattern} NOT installed: your index template(s) {', '.join(overlapping)} "
                f"already match indices of {pattern}, and a new index gets one template's mappings; add "
                f'"composed_of": ["{name}"] to yours so new indices map the bloomspan fields')
        else:
            client.indices.put_index_template(name=name, body={
                "index_patterns": [pattern], "priority": PRIORITY, "composed_of": [name], "_meta": meta})
            report.lines.append(f"index template {name} -> {pattern} (priority {PRIORITY}, composed of {name})")
        indices = _concrete_indices(client, pattern)
        if not indices:
            report.lines.append(f"no index matches {pattern} yet: new ones get the fields from the template")
        add_document_fields(client, indices, fields, report)
    for line in report.lines:
        log.info("setup %s", line)
    for line in report.problems:
        log.warning("setup %s", line)
    return report


def install_for_serve(config) -> None:
    """At ``serve`` startup: :func:`install_clean_templates` for ``--clean-index`` with the
    sidecar's own credentials. Never stops the service: a failure is one warning line (the
    proxy still cleans; run ``bloomspan setup --clean-index`` with rights to templates)."""
    if not config.clean_indices:
        return

    try:
        client = ClusterConfig(url=config.upstream_url, username=config.username, password=config.password,
                               api_key=config.api_key, ca_certs=config.ca_certs, verify_certs=config.verify_certs,
                               timeout=30.0).client()
        install_clean_templates(client, config.clean_indices, config.fields)
    except Exception as exc:  # the type and the cluster's error type only: a message may hold the URL
        log.warning("installing the clean-index templates for %s failed (%s %s); documents may get dynamic "
                    "mappings: run `bloomspan setup --clean-index PATTERN` with rights to index templates",
                    ",".join(config.clean_indices), type(exc).__name__, getattr(exc, "error", "") or "")
