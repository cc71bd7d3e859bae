"""Which search engine a cluster runs — OpenSearch or Elasticsearch, and which version — found
once per client, and the few cluster APIs whose shape depends on it.

bloomspan talks to both engines through one client, opensearch-py (see pyproject.toml). Most of
what it sends is the same request on both, and is sent unchanged: composable index templates
and component templates, ``_aliases`` (the atomic swap), ``index.blocks.write`` (the
completeness marker), ``_bulk`` and its per-item response, optimistic concurrency
(``if_seq_no``/``op_type=create``, the lease), scroll, ``slice`` (with ``max`` equal to the
number of shards, slice ``i`` is exactly shard ``i`` on both) and ``search_after`` on
``_seq_no`` (Elasticsearch adds an implicit ``_shard_doc`` tiebreaker to a point-in-time search
without ``search_after``, and accepts the one-value ``search_after`` bloomspan sends next).

What differs is routed through :class:`ClusterEngine`:

* detection: OpenSearch answers ``GET /`` with ``version.distribution: opensearch``;
  Elasticsearch (7.14 and later) marks every response with ``X-Elastic-Product:
  Elasticsearch``, and its integ-test distribution has no handler for ``GET /`` (405), so the
  version comes from ``GET /_nodes/_local``, which also lists the node's modules;
* point in time: OpenSearch ``POST /<index>/_search/point_in_time`` answers ``pit_id`` and
  ``DELETE /_search/point_in_time`` takes ``{"pit_id": [...]}``; Elasticsearch
  ``POST /<index>/_pit`` answers ``id`` and ``DELETE /_pit`` takes one ``{"id": ...}``;
  available from OpenSearch 2.4 and Elasticsearch 7.10;
* field types: ``rank_feature`` comes with the ``mapper-extras`` module, which every real
  distribution has but Elasticsearch 8's integ-test zip does not; there the ratio fields are
  mapped as ``float`` (:meth:`ClusterEngine.adapt_mappings`, one warning line);
* ingest processors: ``gsub`` (module ingest-common) and ``script`` (lang-painless), which the
  exported pipeline needs, are checked against ``GET /_nodes/ingest``
  (:meth:`ClusterEngine.missing_processors`).

:class:`EngineAwareClient` is the opensearch-py client with its two point-in-time calls routed
here, so code written against ``create_pit``/``delete_pit`` works on both engines.
"""
from __future__ import annotations

import copy
import json
import logging
import re
import threading
import weakref
from dataclasses import dataclass

from opensearchpy import OpenSearch

log = logging.getLogger(__name__)

OPENSEARCH = "opensearch"
ELASTICSEARCH = "elasticsearch"
PRODUCT_HEADER = "X-Elastic-Product"
PIT_SINCE = {OPENSEARCH: (2, 4), ELASTICSEARCH: (7, 10)}
RANK_FEATURE_MODULE = "mapper-extras"
RANK_FEATURE_FALLBACK = "float"


@dataclass(frozen=True)
class ClusterEngine:
    """The engine behind one client.

    product:    :data:`OPENSEARCH` or :data:`ELASTICSEARCH`.
    version:    ``(major, minor, patch)`` of the node that answered.
    modules:    names of the node's modules and plugins; None when the node would not list
                them (no ``cluster:monitor`` privilege): every capability is then assumed.
    processors: ingest processor types the node offers; None when unknown.
    """

    product: str
    version: tuple[int, int, int]
    modules: frozenset[str] | None = None
    processors: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.product not in (OPENSEARCH, ELASTICSEARCH):
            raise ValueError(f"product={self.product!r}: must be {OPENSEARCH!r} or {ELASTICSEARCH!r}")

    @property
    def name(self) -> str:
        """``"OpenSearch 2.19.6"`` / ``"Elasticsearch 8.17.0"``, for messages."""
        label = "OpenSearch" if self.product == OPENSEARCH else "Elasticsearch"
        return f"{label} {'.'.join(map(str, self.version))}"

    @property
    def is_elasticsearch(self) -> bool:
        return self.product == ELASTICSEARCH

    @property
    def has_pit(self) -> bool:
        return self.version[:2] >= PIT_SINCE[self.product]

    @property
    def has_rank_feature(self) -> bool:
        return self.modules is None or RANK_FEATURE_MODULE in self.modules

    # ------------------------------------------------------------------ point in time
    def open_pit(self, client, index: str, keep_alive: str) -> str:
        """Open a point in time on ``index``; returns its id."""
        if self.is_elasticsearch:
            resp = client.transport.perform_request("POST", f"/{_quote(index)}/_pit",
                                                    params={"keep_alive": keep_alive})
            return resp["id"]
        resp = client.transport.perform_request("POST", f"/{_quote(index)}/_search/point_in_time",
                                                params={"keep_alive": keep_alive})
        return resp["pit_id"]

    def close_pits(self, client, pit_ids) -> None:
        """Release points in time (errors propagate: the caller decides whether they matter)."""
        ids = [p for p in pit_ids if p]
        if not ids:
            return
        if self.is_elasticsearch:
            for pit in ids:  # DELETE /_pit takes one id
                client.transport.perform_request("DELETE", "/_pit", body={"id": pit})
            return
        client.transport.perform_request("DELETE", "/_search/point_in_time", body={"pit_id": ids})

    # ------------------------------------------------------------------ capabilities
    def adapt_mappings(self, mappings: dict) -> dict:
        """``mappings`` as this cluster can hold them: a copy with every ``rank_feature``
        mapped as ``float`` when the node lacks the mapper-extras module (the values are the
        same numbers; ``rank_feature`` queries then need ``function_score`` instead)."""
        if self.has_rank_feature:
            return mappings
        out = copy.deepcopy(mappings)
        replaced = _replace_rank_features(out)
        if replaced:
            log.warning("mapping rank_feature_unavailable cluster=%r fields=%s mapped_as=%s: the node has no %s "
                        "module; query the ratio with function_score/field_value_factor instead of rank_feature",
                        self.name, ",".join(replaced), RANK_FEATURE_FALLBACK, RANK_FEATURE_MODULE)
        return out

    def missing_processors(self, wanted) -> list[str]:
        """The ingest processor types of ``wanted`` this node does not offer (none when unknown)."""
        if self.processors is None:
            return []
        return [p for p in wanted if p not in self.processors]


def _replace_rank_features(node, path: str = "") -> list[str]:
    replaced = []
    for name, spec in (node.get("properties") or {}).items():
        here = f"{path}{name}"
        if spec.get("type") == "rank_feature":
            spec.clear()
            spec["type"] = RANK_FEATURE_FALLBACK
            replaced.append(here)
        replaced.extend(_replace_rank_features(spec, here + "."))
    return replaced


def _quote(index: str) -> str:
    from urllib.parse import quote

    return quote(index, safe=",*")


# ---------------------------------------------------------------------- detection
def parse_version(text: str) -> tuple[int, int, int]:
    """``"8.17.0"``, ``"3.0.0-beta1"`` or ``"7.17.9-SNAPSHOT"`` as ``(major, minor, patch)``."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", str(text))
    if not m:
        raise ValueError(f"{text!r} is not a version number")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def engine_from_answers(root: dict | None, headers: dict, nodes: dict | None) -> ClusterEngine:
    """The engine described by the answers to ``GET /`` (None when it was not answered),
    its response ``headers`` and ``GET /_nodes/_local`` (None when refused)."""
    product_header = {k.lower(): v for k, v in headers.items()}.get(PRODUCT_HEADER.lower())
    version_info = (root or {}).get("version") or {}
    if version_info.get("distribution") == OPENSEARCH:
        product = OPENSEARCH
    elif product_header == "Elasticsearch" or (root and version_info.get("number")):
        product = ELASTICSEARCH
    else:
        product = OPENSEARCH
    node = next(iter(((nodes or {}).get("nodes") or {}).values()), None)
    number = version_info.get("number") or (node or {}).get("version")
    if not number:
        raise ValueError("the cluster told neither GET / nor GET /_nodes/_local its version")
    modules = processors = None
    if node is not None:
        modules = frozenset(m["name"] for key in ("modules", "plugins") for m in node.get(key) or [])
        if "ingest" in node:
            processors = frozenset(p["type"] for p in (node.get("ingest") or {}).get("processors") or [])
    return ClusterEngine(product, parse_version(number), modules, processors)


NODES_FILTER = "nodes.*.version,nodes.*.modules.name,nodes.*.plugins.name,nodes.*.ingest.processors.type"


def detect_engine(client) -> ClusterEngine:
    """Ask the cluster which engine it is (two requests, no retries of their own).

    Transport errors of ``GET /`` (unreachable, 401, 403, ...) propagate for the caller to
    describe; a 404/405 there (a node without the root handler) is not an error. A refused
    ``GET /_nodes/_local`` only leaves modules and processors unknown.
    """
    from opensearchpy.exceptions import TransportError

    connection = client.transport.get_connection()
    status, headers, raw = connection.perform_request("GET", "/", ignore=(404, 405))
    root = json.loads(raw) if status == 200 and raw else None
    headers = dict(headers.items())
    try:
        _, _, raw_nodes = connection.perform_request("GET", "/_nodes/_local",
                                                     params={"filter_path": NODES_FILTER})
        nodes = json.loads(raw_nodes)
    except TransportError as exc:
        if root is None:
            raise
        log.debug("cluster engine: GET /_nodes/_local refused (%s); modules unknown", exc.status_code)
        nodes = None
    engine = engine_from_answers(root, headers, nodes)
    log.info("cluster engine=%s modules_known=%s", engine.name, engine.modules is not None)
    return engine


_ENGINES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_ENGINES_LOCK = threading.Lock()


def engine_of(client) -> ClusterEngine:
    """The engine behind ``client``, detected on first use and remembered with the client."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(client)
    if engine is None:
        engine = detect_engine(client)
        remember(client, engine)
    return engine


def remember(client, engine: ClusterEngine) -> None:
    """Record ``engine`` as the one behind ``client`` (detected elsewhere, e.g. by a probe)."""
    with _ENGINES_LOCK:
        _ENGINES[client] = engine


class EngineAwareClient(OpenSearch):
    """opensearch-py's client whose point-in-time calls follow the engine behind it.

    ``create_pit`` answers ``{"pit_id": ...}`` and ``delete_pit`` takes ``{"pit_id": [...]}``
    on both engines, as opensearch-py documents them for OpenSearch.
    """

    def create_pit(self, index, keep_alive="10m", **_request_options):  # type: ignore[override]
        return {"pit_id": engine_of(self).open_pit(self, index, keep_alive)}

    def delete_pit(self, body=None, **_request_options):  # type: ignore[override]
        ids = (body or {}).get("pit_id") or []
        ids = [ids] if isinstance(ids, str) else list(ids)
        engine_of(self).close_pits(self, ids)
        return {"pits": [{"pit_id": p, "successful": True} for p in ids]}
