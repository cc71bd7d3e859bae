"""deploy/dask/: the compose file against the compose-spec schema, the Kubernetes manifests
against the API schemas (offline, strict), and their wiring: the job reaches the scheduler's
Service, workers' Dask memory limits equal their container limits, every BLOOMSPAN_* name is
an option of `bloomspan mine`. Each validator also rejects a broken copy."""
from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
DASK = ROOT / "deploy" / "dask"
K8S = DASK / "k8s"
COMPOSE = DASK / "docker-compose.yml"


def _manifests() -> list[dict]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def _by(kind: str, component: str) -> dict:
    found = [d for d in _manifests() if d["kind"] == kind and d["metadata"]["labels"]["app.kubernetes.io/component"]
             == component]
    assert len(found) == 1, (kind, component)
    return found[0]


def _check_jsonschema(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
                           str(path)], capture_output=True, text=True)


def test_compose_file_matches_the_compose_spec(tmp_path):
    pytest.importorskip("check_jsonschema")
    ok = _check_jsonschema(COMPOSE)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    broken = yaml.safe_load(COMPOSE.read_text())
    broken["services"]["worker"]["comand"] = ["dask", "worker"]  # a misspelt key
    bad = tmp_path / "compose.yml"
    bad.write_text(yaml.safe_dump(broken))
    assert _check_jsonschema(bad).returncode != 0


def test_manifests_match_the_kubernetes_api_strictly():
    kv = pytest.importorskip("kubernetes_validate")
    version = kv.latest_version()
    docs = _manifests()
    assert {d["kind"] for d in docs} == {"Deployment", "Service", "Job"}
    for doc in docs:
        kv.validate(doc, version, strict=True)
    broken = copy.deepcopy(_by("Job", "mine"))
    broken["spec"]["template"]["spec"]["containers"][0]["resourcez"] = {}
    with pytest.raises(kv.ValidationError):
        kv.validate(broken, version, strict=True)


def test_kustomization_lists_every_manifest():
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert set(kust["resources"]) == {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}


def _gib(quantity: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(Gi|GiB|Mi|MiB)", quantity)
    assert m, quantity
    return float(m.group(1)) / (1024 if m.group(2).startswith("M") else 1)


def test_wiring_scheduler_service_and_worker_memory():
    service = _by("Service", "scheduler")
    port = {p["name"]: p["port"] for p in service["spec"]["ports"]}["comm"]
    address = f"tcp://{service['metadata']['name']}:{port}"
    job_env = {e["name"]: e for e in _by("Job", "mine")["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert job_env["BLOOMSPAN_MINE_DASK"]["value"] == address
    worker = _by("Deployment", "worker")["spec"]["template"]["spec"]["containers"][0]
    assert address in worker["args"]
    limit = worker["args"][worker["args"].index("--memory-limit") + 1]
    assert _gib(limit) == _gib(worker["resources"]["limits"]["memory"]) == _gib(worker["resources"]["requests"]["memory"])
    assert worker["args"][worker["args"].index("--nthreads") + 1] == "1"
    compose = yaml.safe_load(COMPOSE.read_text())
    cw = compose["services"]["worker"]
    limit = cw["command"][cw["command"].index("--memory-limit") + 1]
    assert _gib(limit) == _gib(cw["deploy"]["resources"]["limits"]["memory"].replace("g", "Gi"))
    assert compose["services"]["mine"]["environment"]["BLOOMSPAN_MINE_DASK"] == "tcp://scheduler:8786"


def test_every_bloomspan_variable_is_an_option_of_mine():
    from bloomspan.sidecar.cli.main import cli

    mine = cli.commands["mine"]
    known = {f"BLOOMSPAN_MINE_{p.name.upper()}" for p in mine.params if p.name}
    used = set()
    for path in DASK.rglob("*"):
        if path.is_file():
            used.update(re.findall(r"\bBLOOMSPAN_[A-Z0-9_]+\b", path.read_text()))
    assert "BLOOMSPAN_MINE_DASK" in used
    assert used <= known, used - known
