"""Test harness: a session-scoped client of a REAL OpenSearch node.

``OPENSEARCH_URL`` names a node to use; otherwise the node is started with
``deploy/local/opensearch.sh start`` and stopped at the end (only if this session started
it). With ``CI=true`` a missing node fails the integration tests instead of skipping them.

Hypothesis runs the deterministic profile unless ``HYPOTHESIS_PROFILE=explore``
(tests/support/hypothesis_profiles.py); it is loaded here, before any test module is imported.
"""
from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.support import hypothesis_profiles
from tests.support.cluster_cleanup import remove_test_objects

HYPOTHESIS_PROFILE = hypothesis_profiles.load_profile()

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "deploy" / "local" / "opensearch.sh"
TEST_PREFIX = "bstest-"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _no_node(reason: str):
    if _in_ci():
        pytest.fail(f"CI=true and no OpenSearch node: {reason}", pytrace=False)
    pytest.skip(f"no OpenSearch node: {reason}")


@pytest.fixture(scope="session")
def opensearch_url():
    url = os.environ.get("OPENSEARCH_URL")
    started = False
    if not url:
        status = subprocess.run([str(SCRIPT), "status"], capture_output=True, text=True)
        proc = subprocess.run([str(SCRIPT), "start"], capture_output=True, text=True)
        if proc.returncode != 0:
            _no_node(f"deploy/local/opensearch.sh start failed:\n{proc.stderr[-3000:]}")
        url = proc.stdout.strip().splitlines()[-1]
        started = status.returncode != 0
    yield url
    if started and os.environ.get("BLOOMSPAN_KEEP_NODE") != "1":
        subprocess.run([str(SCRIPT), "stop"], capture_output=True, text=True)


@pytest.fixture(scope="session")
def os_client(opensearch_url):
    """A client of the node at ``OPENSEARCH_URL``, which may be OpenSearch or Elasticsearch (the
    matrix in CI points it at each); see ``cluster_engine``."""
    from bloomspan.sidecar.cluster.connection import ClusterConfig
    from bloomspan.sidecar.errors import ClusterUnavailableError

    try:
        client = ClusterConfig(url=opensearch_url, timeout=60).checked_client()
    except ClusterUnavailableError as exc:  # connection refused, TLS mismatch, ...
        _no_node(f"{opensearch_url} does not answer: {exc}")
    from bloomspan.sidecar.cluster.engine import engine_of

    print(f"\n{engine_of(client).name} at {opensearch_url}")
    return client


@pytest.fixture(scope="session")
def cluster_engine(os_client):
    """The :class:`~bloomspan.sidecar.cluster.engine.ClusterEngine` of the test node, for tests
    whose expectation depends on it (a rank_feature query, an ingest processor)."""
    from bloomspan.sidecar.cluster.engine import engine_of

    return engine_of(os_client)


@pytest.fixture
def index_prefix(os_client):
    """A unique prefix for every index, alias and template this test creates; all removed after."""
    prefix = f"{TEST_PREFIX}{uuid.uuid4().hex[:10]}-"
    yield prefix
    remove_test_objects(os_client, prefix)
    pipelines = os_client.ingest.get_pipeline(ignore=[404]) or {}
    for pipeline in pipelines:
        if pipeline.startswith(prefix):
            os_client.ingest.delete_pipeline(id=pipeline)


@pytest.hookimpl(trylast=True)  # after Hypothesis' own hook has marked its tests
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/integration" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.integration)
    if HYPOTHESIS_PROFILE == hypothesis_profiles.EXPLORE:
        hypothesis_profiles.widen_for_exploration(items)
