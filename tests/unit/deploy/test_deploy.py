"""deploy/: validated with what this machine has, no image build and no cluster.

- compose: `docker compose config` where the compose plugin is installed; always the
  compose-spec JSON schema that check-jsonschema vendors (offline);
- Kubernetes: every manifest against the API schemas that kubernetes-validate ships (offline,
  strict: unknown fields fail), plus wiring (probes, Service, Secret references, sizing);
- systemd: `systemd-analyze verify` and `security --offline` on copies of the units whose
  binary path points at a stub, plus the hardening settings they must keep;
- Dockerfile: base, user, entrypoint, healthcheck, and that every file it copies exists and
  survives its ignore file;
- the CLI: every `bloomspan` command, flag and BLOOMSPAN_* variable these files use exists;
- serve's admin token: wherever `serve` binds beyond loopback, its token comes from a secret
  file (never a value in these files), and the config these files give `serve` starts.
Each external validator also gets a broken copy that it must reject, so none passes vacuously.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "docker" / "Dockerfile"
DOCKERIGNORE = DEPLOY / "docker" / "Dockerfile.dockerignore"
COMPOSE = DEPLOY / "docker-compose.yml"
K8S = DEPLOY / "k8s"
SYSTEMD = DEPLOY / "systemd"
README = DEPLOY / "README.md"
LOCAL_NODE_SCRIPT = DEPLOY / "local" / "opensearch.sh"

INSTALLED_BINARY = "/usr/local/bin/bloomspan"
CREDENTIALS_SECRET = "bloomspan-credentials"
# serve's admin token: the Secret's key, and the file the image reads it from.
ADMIN_TOKEN_KEY = "admin-token"
ADMIN_TOKEN_VARIABLE = "BLOOMSPAN_SERVE_ADMIN_TOKEN_FILE"
# The memory model of a mining run (deploy/README.md): bytes per corpus token, plus the
# interpreter, numpy and numba/LLVM.
BYTES_PER_TOKEN = 12
BASE_OVERHEAD = 768 * 2**20
SIZED_FOR = "bloomspan/sized-for-corpus-tokens"
# Oldest Kubernetes minor the manifests promise to work on (CronJob.spec.timeZone is GA in 1.27).
OLDEST_KUBERNETES = "1.29.0"
# BLOOMSPAN_* names in deploy/ that are not CLI settings: the OpenSearch version picked by the
# compose file's interpolation and by deploy/local/opensearch.sh.
NOT_CLI_VARIABLES = {"BLOOMSPAN_OPENSEARCH_VERSION"}
# Files the image build may leave out: byte code and numba's cache index/data.
BUILD_LEFTOVERS = {".pyc", ".nbi", ".nbc"}


def _require(module: str):
    """Import a validator from the test extra; missing: skip locally, fail in CI."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return __import__(module)
    return pytest.importorskip(module, reason=f"{module} is not installed (pip install -e '.[test]')")


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def _project_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


# ----------------------------------------------------------------------------- Dockerfile

def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    out, pending = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):  # a comment inside a continued instruction
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = (pending + stripped).strip()
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    assert not pending, "Dockerfile ends inside a continued line"
    return out


def _dockerfile_env() -> dict[str, str]:
    env = {}
    for word, rest in _dockerfile_instructions():
        if word == "ENV":
            for token in shlex.split(rest):
                key, _, value = token.partition("=")
                env[key] = value
    return env


def _dockerignore_patterns() -> list[tuple[bool, re.Pattern]]:
    """(negated, regex) per line; Docker's rules: last match wins, a match on a parent folder
    counts for everything inside it, `*` stays within a path segment, `**` spans segments."""
    patterns = []
    for line in DOCKERIGNORE.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line[1:] if negated else line
        pattern = pattern.strip("/")
        regex = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                regex += "(?:.*/)?"
                i += 3
            elif pattern.startswith("**", i):
                regex += ".*"
                i += 2
            elif pattern[i] == "*":
                regex += "[^/]*"
                i += 1
            elif pattern[i] == "?":
                regex += "[^/]"
                i += 1
            else:
                regex += re.escape(pattern[i])
                i += 1
        patterns.append((negated, re.compile(regex + r"\Z")))
    return patterns


def _docker_ignores(relpath: str, patterns) -> bool:
    parts = relpath.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for negated, regex in patterns:
        if any(regex.match(p) for p in prefixes):
            ignored = not negated
    return ignored


def test_dockerfile_base_user_entrypoint_and_healthcheck():
    instructions = _dockerfile_instructions()
    args = {}
    for word, rest in instructions:
        if word == "ARG" and "=" in rest:
            key, _, value = rest.partition("=")
            args[key] = value
    bases = [re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], rest.split()[0])
             for word, rest in instructions if word == "FROM"]
    assert bases and all(b == "python:3.11-slim" for b in bases), bases
    final_stage = instructions[max(i for i, (w, _) in enumerate(instructions) if w == "FROM"):]
    users = [rest for word, rest in final_stage if word == "USER"]
    assert users, "the runtime stage must switch to a non-root USER"
    uid = users[-1].split(":")[0]
    assert uid not in ("0", "root"), users
    entrypoint = json.loads(next(rest for word, rest in final_stage if word == "ENTRYPOINT"))
    assert entrypoint[-1] == "bloomspan", entrypoint
    healthcheck = next(rest for word, rest in final_stage if word == "HEALTHCHECK")
    assert "/healthz" in healthcheck
    env = _dockerfile_env()
    port = env["BLOOMSPAN_SERVE_PORT"]
    assert f"'{port}'" in healthcheck, "the healthcheck's default port must be the image's serve port"
    assert ("EXPOSE", port) in final_stage
    # numba writes its kernel cache at run time; with a read-only root it must point at a mount.
    assert env["NUMBA_CACHE_DIR"].startswith("/var/cache/bloomspan/")


def test_dockerfile_copies_what_the_install_needs_and_the_ignore_file_keeps_it():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needed = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    needed |= {"pyproject.toml", pyproject["project"]["readme"]}
    copied = set()
    patterns = _dockerignore_patterns()
    for word, rest in _dockerfile_instructions():
        if word != "COPY" or "--from=" in rest:
            continue
        sources = [s for s in shlex.split(rest) if not s.startswith("--")][:-1]
        for source in sources:
            rel = source.rstrip("/")
            assert (ROOT / rel).exists(), f"Dockerfile copies {source!r}, which does not exist"
            assert not _docker_ignores(rel, patterns), f"{DOCKERIGNORE.name} drops {source!r}"
            # Modules and package data (mappings/*.json, sidecar/demo/*.jsonl) must all get in.
            for path in (ROOT / rel).rglob("*") if (ROOT / rel).is_dir() else []:
                inner = path.relative_to(ROOT).as_posix()
                if path.is_file() and "__pycache__" not in inner and path.suffix not in BUILD_LEFTOVERS:
                    assert not _docker_ignores(inner, patterns), f"{DOCKERIGNORE.name} drops {inner}"
            copied.add(rel)
    # a package folder inside a copied folder (bloomspan = sidecar/api) is copied with it
    missing = {n for n in needed if not any(n == c or n.startswith(c.rstrip("/") + "/") for c in copied)}
    assert not missing, f"Dockerfile does not copy {sorted(missing)}"
    for heavy in (".git", ".venv", "tests", "bench", "engine/__pycache__/x.pyc", "bloomspan.egg-info"):
        assert _docker_ignores(heavy, patterns), f"{DOCKERIGNORE.name} lets {heavy} into the context"


# ----------------------------------------------------------------------------- compose

def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def _bloomspan_services(compose: dict) -> dict:
    return {name: s for name, s in compose["services"].items() if str(s.get("image", "")).startswith("bloomspan:")}


def test_docker_compose_config():
    probe = _run(["docker", "compose", "version"]) if shutil.which("docker") else None
    if probe is None or probe.returncode != 0:
        why = "docker is not installed" if probe is None else (probe.stderr or probe.stdout).strip().splitlines()[0]
        pytest.skip(f"docker compose plugin unavailable ({why}); the compose-spec schema test covers the file")
    res = _run(["docker", "compose", "-f", str(COMPOSE), "config", "--quiet"])
    assert res.returncode == 0, res.stderr


def _check_compose_schema(path: Path) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(path)])


def test_compose_file_matches_the_compose_spec_schema(tmp_path):
    _require("check_jsonschema")
    res = _check_compose_schema(COMPOSE)
    assert res.returncode == 0, res.stdout + res.stderr
    broken = _compose()
    broken["services"]["bloomspan"]["depends_on"]["setup"]["condition"] = "service_finished"
    (tmp_path / "broken.yml").write_text(yaml.safe_dump(broken))
    assert _check_compose_schema(tmp_path / "broken.yml").returncode != 0, "the schema check rejects nothing"


def test_compose_wiring():
    compose = _compose()
    node = compose["services"]["opensearch"]
    image_default = re.fullmatch(r"opensearchproject/opensearch:\$\{BLOOMSPAN_OPENSEARCH_VERSION:-([\d.]+)\}",
                                 node["image"])
    assert image_default, node["image"]
    script_default = re.search(r'VERSION="\$\{BLOOMSPAN_OPENSEARCH_VERSION:-([\d.]+)\}"', LOCAL_NODE_SCRIPT.read_text())
    assert image_default.group(1) == script_default.group(1), "compose and deploy/local/opensearch.sh disagree"
    assert image_default.group(1).startswith("2.19.")
    assert node["environment"]["DISABLE_SECURITY_PLUGIN"] == "true"
    assert node["environment"]["discovery.type"] == "single-node"
    assert all(p.startswith("127.0.0.1:") for s in compose["services"].values() for p in s.get("ports", [])), \
        "a node without security must not be published beyond loopback"

    services = _bloomspan_services(compose)
    serve = compose["services"]["bloomspan"]
    assert serve["command"][0] == "serve"
    for name, service in services.items():
        build = service["build"]
        assert (COMPOSE.parent / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE, name
        assert service["depends_on"]["opensearch"]["condition"] == "service_healthy", name
    assert serve["depends_on"]["setup"]["condition"] == "service_completed_successfully"
    assert compose["services"]["setup"]["command"] == ["setup"]

    env = serve["environment"]
    for name, value in env.items():
        if name.endswith("_URL"):
            host = re.match(r"https?://([^:/]+)", value).group(1)
            assert host in compose["services"], f"{name}={value}: no service {host!r}"
    port = _dockerfile_env()["BLOOMSPAN_SERVE_PORT"]
    assert f"127.0.0.1:{port}:{port}" in serve["ports"]
    work_dirs = [v for k, v in _dockerfile_env().items() if k.endswith("_WORK_DIR")]
    mounts = [v.split(":")[1] for v in serve["volumes"]]
    assert work_dirs and all(any(w.startswith(m + "/") for m in mounts) for w in work_dirs), \
        "the work dirs must lie on the volume, or a restarted container cannot resume"


# ----------------------------------------------------------------------------- Kubernetes

def _kustomization() -> dict:
    return yaml.safe_load((K8S / "kustomization.yaml").read_text())


def _manifests() -> list[tuple[str, dict]]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        docs += [(path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return docs


def _pod_specs() -> list[tuple[str, dict, dict]]:
    """(workload name, pod template metadata, pod spec) of every workload."""
    out = []
    for _, doc in _manifests():
        if doc["kind"] == "Deployment":
            template = doc["spec"]["template"]
        elif doc["kind"] == "CronJob":
            template = doc["spec"]["jobTemplate"]["spec"]["template"]
        else:
            continue
        out.append((doc["metadata"]["name"], template["metadata"], template["spec"]))
    return out


def _containers(spec: dict) -> list[dict]:
    return spec.get("initContainers", []) + spec["containers"]


def test_kustomization_lists_every_manifest_and_pins_the_project_version():
    kustomization = _kustomization()
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == files
    version = _project_version()
    assert [i["newTag"] for i in kustomization["images"] if i["name"] == "bloomspan"] == [version]
    for name, _, spec in _pod_specs():
        for container in _containers(spec):
            assert container["image"] == f"bloomspan:{version}", (name, container["name"])


@pytest.mark.parametrize("version", [OLDEST_KUBERNETES, "latest"])
def test_manifests_validate_against_the_kubernetes_api_schema(version):
    kubernetes_validate = _require("kubernetes_validate")
    version = kubernetes_validate.latest_version() if version == "latest" else version
    manifests = _manifests()
    assert {doc["kind"] for _, doc in manifests} >= {"CronJob", "Deployment", "Service", "ConfigMap"}
    for filename, doc in manifests:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{filename} {doc['kind']}/{doc['metadata']['name']} (Kubernetes {version}): "
                        f"{'.'.join(map(str, exc.path))}: {exc.message}")


def test_the_kubernetes_validator_rejects_a_broken_manifest():
    kubernetes_validate = _require("kubernetes_validate")
    deployment = next(doc for _, doc in _manifests() if doc["kind"] == "Deployment")
    typo = json.loads(json.dumps(deployment))
    typo["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
    wrong_type = json.loads(json.dumps(deployment))
    wrong_type["spec"]["replicas"] = "two"
    for broken in (typo, wrong_type):
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, kubernetes_validate.latest_version(), strict=True)


def test_credentials_come_from_a_secret_reference_never_inline():
    secretish = re.compile(r"pass|token|secret|api.?key|credential", re.I)
    for filename, doc in _manifests():
        assert doc["kind"] != "Secret", f"{filename}: ship no Secret; document `kubectl create secret` instead"
        if doc["kind"] == "ConfigMap":
            for key, value in doc["data"].items():
                assert not secretish.search(key), f"{filename}: ConfigMap key {key!r} looks like a credential"
                assert "@" not in value, f"{filename}: {key} embeds credentials in a URL"
    seen = 0
    for name, _, spec in _pod_specs():
        for container in _containers(spec):
            for var in container.get("env", []):
                if secretish.search(var["name"]) or var["name"].endswith("_USERNAME"):
                    ref = var.get("valueFrom", {}).get("secretKeyRef")
                    assert ref and "value" not in var, f"{name}/{container['name']}: {var['name']} must use secretKeyRef"
                    assert ref["name"] == CREDENTIALS_SECRET
                    seen += 1
    assert seen, "no credential is wired from the Secret"
    assert f"kubectl create secret generic {CREDENTIALS_SECRET}" in README.read_text()


def test_config_map_references_resolve():
    config_maps = {doc["metadata"]["name"]: doc["data"] for _, doc in _manifests() if doc["kind"] == "ConfigMap"}
    claims = {doc["metadata"]["name"] for _, doc in _manifests() if doc["kind"] == "PersistentVolumeClaim"}
    accounts = {doc["metadata"]["name"] for _, doc in _manifests() if doc["kind"] == "ServiceAccount"}
    for name, _, spec in _pod_specs():
        assert spec["serviceAccountName"] in accounts, name
        assert spec["automountServiceAccountToken"] is False, name
        for volume in spec["volumes"]:
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims, name
        for container in _containers(spec):
            for var in container.get("env", []):
                ref = var.get("valueFrom", {}).get("configMapKeyRef")
                if ref:
                    assert ref["key"] in config_maps[ref["name"]], f"{name}: {var['name']} -> missing key {ref['key']}"


def test_serve_probes_ports_and_service():
    deployment = next(doc for _, doc in _manifests() if doc["kind"] == "Deployment")
    pod = deployment["spec"]["template"]
    serve = next(c for c in pod["spec"]["containers"] if c["args"][0] == "serve")
    port_names = {p["name"]: p["containerPort"] for p in serve["ports"]}
    assert set(port_names.values()) == {int(_dockerfile_env()["BLOOMSPAN_SERVE_PORT"])}
    assert serve["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert serve["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert serve["readinessProbe"]["httpGet"]["path"] == "/readyz"
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert serve[probe]["httpGet"]["port"] in port_names, probe
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    service = next(doc for _, doc in _manifests() if doc["kind"] == "Service")
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert all(p["targetPort"] in port_names for p in service["spec"]["ports"])
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(serve["ports"][0]["containerPort"])


_QUANTITY = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T|m)?")
_UNITS = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9,
          "T": 10**12, "m": 1e-3}


def _quantity(value) -> float:
    match = _QUANTITY.fullmatch(str(value))
    assert match, f"not a Kubernetes quantity: {value!r}"
    return float(match.group(1)) * _UNITS[match.group(2)]


def test_quantity_parser():
    assert _quantity("3Gi") == 3 * 2**30
    assert _quantity("500m") == 0.5
    assert _quantity("2") == 2
    assert _quantity("1.5G") == 1.5e9


def test_resources_follow_the_memory_model():
    sized = 0
    for name, metadata, spec in _pod_specs():
        for container in _containers(spec):
            resources = container["resources"]
            for kind in ("cpu", "memory"):
                request = _quantity(resources["requests"][kind])
                limit = _quantity(resources["limits"][kind])
                assert 0 < request <= limit, (name, container["name"], kind)
        tokens = int(metadata["annotations"][SIZED_FOR])
        main = spec["containers"][0]
        needed = BYTES_PER_TOKEN * tokens + BASE_OVERHEAD
        request = _quantity(main["resources"]["requests"]["memory"])
        assert request >= needed, (f"{name}: {SIZED_FOR}={tokens:,} needs >= {needed / 2**30:.2f} GiB "
                                   f"({BYTES_PER_TOKEN} B/token + {BASE_OVERHEAD / 2**20:.0f} MiB), requests "
                                   f"{request / 2**30:.2f} GiB")
        sized += 1
    assert sized >= 2


def test_pods_run_non_root_on_a_read_only_root_with_writable_mounts():
    env = _dockerfile_env()
    writable = [env["NUMBA_CACHE_DIR"], "/tmp"]
    for name, _, spec in _pod_specs():
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] != 0, name
        for container in _containers(spec):
            ctx = container["securityContext"]
            assert ctx["readOnlyRootFilesystem"] is True, (name, container["name"])
            assert ctx["allowPrivilegeEscalation"] is False, (name, container["name"])
            assert ctx["capabilities"]["drop"] == ["ALL"], (name, container["name"])
        main = spec["containers"][0]
        mounts = [m["mountPath"] for m in main["volumeMounts"]]
        command = main["args"][0]
        work_dir = env[f"BLOOMSPAN_{command.upper()}_WORK_DIR"]
        for path in writable + [work_dir]:
            assert any(path == m or path.startswith(m + "/") for m in mounts), f"{name}: {path} is not on a mount"


# ----------------------------------------------------------------------------- systemd

def _unit_settings(path: Path) -> list[tuple[str, str, str]]:
    """(section, key, value) in file order (systemd allows repeated keys)."""
    section, out = None, []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        out.append((section, key.strip(), value.strip()))
    return out


def _values(path: Path, key: str) -> list[str]:
    return [v for _, k, v in _unit_settings(path) if k == key]


SERVICES = sorted(SYSTEMD.glob("*.service"))
UNITS = SERVICES + sorted(SYSTEMD.glob("*.timer"))


def test_unit_files_are_the_expected_set():
    assert {p.name for p in UNITS} == {"bloomspan-serve.service", "bloomspan-mine.service", "bloomspan-mine.timer"}


@pytest.mark.parametrize("unit", SERVICES, ids=lambda p: p.name)
def test_service_hardening_and_layout(unit):
    values = {k: v for _, k, v in _unit_settings(unit)}
    assert values.get("DynamicUser") == "yes" or values.get("User") not in (None, "root"), unit.name
    assert values["ProtectSystem"] == "strict"
    assert values["NoNewPrivileges"] == "yes"
    assert values["CapabilityBoundingSet"] == ""
    # numba's JIT writes machine code: MemoryDenyWriteExecute=yes would kill every run.
    assert values.get("MemoryDenyWriteExecute", "no") == "no"
    command = values["ExecStart"].split()
    assert command[0] == INSTALLED_BINARY
    state = values["StateDirectory"]
    work_dir = next(v for v in _values(unit, "Environment") if v.startswith(f"BLOOMSPAN_{command[1].upper()}_WORK_DIR="))
    assert work_dir.split("=", 1)[1] == f"%S/{state}", "the work dir must be the unit's StateDirectory"
    cache = next(v for v in _values(unit, "Environment") if v.startswith("NUMBA_CACHE_DIR="))
    assert cache.split("=", 1)[1] == f"%C/{values['CacheDirectory']}"
    env_files = _values(unit, "EnvironmentFile")
    assert any("credentials" in f for f in env_files), "credentials come from an EnvironmentFile"
    for env_file in env_files:
        name = Path(env_file.lstrip("-")).name
        assert (SYSTEMD / name).exists() or (SYSTEMD / f"{name}.example").exists(), f"no example for {env_file}"


def test_timer_starts_the_mining_service():
    timer = SYSTEMD / "bloomspan-mine.timer"
    (unit,) = _values(timer, "Unit")
    assert (SYSTEMD / unit).exists()
    assert _values(SYSTEMD / unit, "ExecStart")[0].split()[1] == "mine"
    assert _values(timer, "Persistent") == ["true"]


def _systemd_analyze() -> str:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed")
    return tool


def _units_with_stub_binary(tmp_path: Path) -> list[Path]:
    """Copies of the units whose binary is an executable stub: verify checks ExecStart exists."""
    stub = tmp_path / "bin" / "bloomspan"
    stub.parent.mkdir()
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    copies = []
    for unit in UNITS:
        copy = tmp_path / unit.name
        copy.write_text(unit.read_text().replace(INSTALLED_BINARY, str(stub)))
        copies.append(copy)
    return copies


def test_systemd_analyze_verify(tmp_path):
    tool = _systemd_analyze()
    copies = _units_with_stub_binary(tmp_path)
    res = _run([tool, "verify", "--man=no", *map(str, copies)], cwd=tmp_path)
    # verify exits 0 on unknown keys and unparsable values; it only warns. Any output fails.
    assert res.returncode == 0 and not (res.stdout + res.stderr).strip(), res.stdout + res.stderr
    broken = copies[0]
    broken.write_text(broken.read_text().replace("ProtectSystem=strict", "ProtectSystem=strict\nProtectSytem=yes"))
    res = _run([tool, "verify", "--man=no", str(broken)], cwd=tmp_path)
    assert "ProtectSytem" in res.stdout + res.stderr, "verify reported nothing for a misspelt key"


def test_systemd_security_exposure(tmp_path):
    tool = _systemd_analyze()
    copies = [c for c in _units_with_stub_binary(tmp_path) if c.suffix == ".service"]
    for copy in copies:
        res = _run([tool, "security", "--offline=true", str(copy)], cwd=tmp_path)
        if "--offline" in res.stderr and "unrecognized" in res.stderr:
            pytest.skip("systemd-analyze security --offline needs systemd >= 250")
        match = re.search(r"Overall exposure level for \S+: ([\d.]+)", res.stdout)
        assert match, res.stdout + res.stderr
        assert float(match.group(1)) <= 2.0, f"{copy.name}: exposure {match.group(1)} (> 2.0)\n{res.stdout}"


# ----------------------------------------------------------------------------- the CLI they call

def _invocations() -> list[tuple[str, list[str]]]:
    """(where, argv after `bloomspan`) of every bloomspan invocation in deploy/."""
    found = []
    instructions = _dockerfile_instructions()
    entrypoint = json.loads(next(rest for word, rest in instructions if word == "ENTRYPOINT"))
    cmd = json.loads(next(rest for word, rest in reversed(instructions) if word == "CMD"))
    assert entrypoint[-1] == "bloomspan"
    found.append(("Dockerfile CMD", cmd))
    for word, rest in instructions:
        if word == "RUN" and rest.startswith("bloomspan "):
            found.append(("Dockerfile RUN", shlex.split(rest)[1:]))
    for name, service in _bloomspan_services(_compose()).items():
        found.append((f"compose {name}", service.get("command", cmd)))
    for name, _, spec in _pod_specs():
        for container in _containers(spec):
            if "command" in container:  # not the bloomspan entrypoint: only the kernel-cache copy
                assert container["name"] == "kernel-cache" and "numba" in " ".join(container["command"]), container
                continue
            found.append((f"k8s {name}/{container['name']}", container["args"]))
    for unit in SERVICES:
        for key in ("ExecStartPre", "ExecStart"):
            for value in _values(unit, key):
                argv = shlex.split(value)
                assert argv[0] == INSTALLED_BINARY, (unit.name, value)
                found.append((f"{unit.name} {key}", argv[1:]))
    text = README.read_text()
    for block in re.findall(r"```(?:bash|sh|console)?\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            for i, word in enumerate(words):
                if word == "bloomspan" or word.endswith("/bin/bloomspan"):
                    argv = []
                    for w in words[i + 1:]:
                        if w in ("&&", "||", "|", ";"):
                            break
                        argv.append(w)
                    if argv and "/" not in argv[0]:  # `bloomspan <path>` is an install step
                        found.append(("deploy/README.md", argv))
    return found


def _cli():
    try:
        from bloomspan.sidecar.cli.main import cli
    except ImportError as exc:  # the package must be installed (pip install -e .)
        pytest.fail(f"cannot import the CLI: {exc}")
    return cli


def _option_names(command) -> set[str]:
    import click

    names = set()
    for param in command.params:
        if isinstance(param, click.Option):
            names |= set(param.opts) | set(param.secondary_opts)
    return names


def test_every_command_and_flag_deploy_uses_exists():
    cli = _cli()
    import click

    group_opts = _option_names(cli) | {"-h", "--help"}
    problems = []
    for where, argv in _invocations():
        i = 0
        while i < len(argv) and argv[i].startswith("-"):
            if argv[i].split("=")[0] not in group_opts:
                problems.append(f"{where}: bloomspan has no global option {argv[i]}")
            i += 1
        if i == len(argv):
            continue
        name = argv[i]
        command = cli.commands.get(name)
        if command is None:
            problems.append(f"{where}: bloomspan has no command {name!r}")
            continue
        opts = _option_names(command) | {"-h", "--help"}
        if isinstance(command, click.Group):
            continue
        for word in argv[i + 1:]:
            if word.startswith("-") and word.split("=")[0] not in opts:
                problems.append(f"{where}: `bloomspan {name}` has no option {word.split('=')[0]}")
    assert not problems, "\n".join(dict.fromkeys(problems))


def _variables_used() -> dict[str, list[str]]:
    """BLOOMSPAN_* name -> the files using it, over every file in deploy/ but the local script."""
    used: dict[str, list[str]] = {}
    for path in sorted(DEPLOY.rglob("*")):
        if not path.is_file() or path.is_relative_to(DEPLOY / "local"):
            continue
        for name in dict.fromkeys(re.findall(r"\bBLOOMSPAN_[A-Z0-9][A-Z0-9_]*\b", path.read_text())):
            used.setdefault(name, []).append(path.relative_to(DEPLOY).as_posix())
    return used


def _variables_read_by_cli() -> set[str]:
    import click

    cli = _cli()
    names = set()

    def add(command, prefix):
        for param in command.params:
            if not isinstance(param, click.Option):
                continue
            explicit = param.envvar if isinstance(param.envvar, (list, tuple)) else [param.envvar]
            names.update(e for e in explicit if e)
            if param.allow_from_autoenv and param.name:
                names.add(f"{prefix}_{param.name.upper()}")
        if isinstance(command, click.Group):
            for sub_name, sub in command.commands.items():
                add(sub, f"{prefix}_{sub_name.upper().replace('-', '_')}")

    add(cli, "BLOOMSPAN")
    return names


def test_every_bloomspan_variable_deploy_sets_is_read_by_the_cli():
    used = _variables_used()
    assert "BLOOMSPAN_SERVE_UPSTREAM_URL" in used  # the scan found the files
    known = _variables_read_by_cli()
    collisions = NOT_CLI_VARIABLES & known
    assert not collisions, f"{collisions} would set a CLI option by accident"
    unknown = {n: where for n, where in used.items() if n not in known and n not in NOT_CLI_VARIABLES}
    assert not unknown, "no CLI option reads:\n" + "\n".join(
        f"  {n} ({', '.join(w)})" for n, w in sorted(unknown.items()))


# ----------------------------------------------------------------------------- serve's admin token

def _image_token_file() -> Path:
    env = _dockerfile_env()
    assert "BLOOMSPAN_SERVE_ADMIN_TOKEN" not in env, "never bake an admin token into the image"
    path = Path(env[ADMIN_TOKEN_VARIABLE])
    assert path.parent == Path("/run/secrets"), f"{ADMIN_TOKEN_VARIABLE}={path}: the token is a secret file"
    return path


def test_the_image_binds_beyond_loopback_only_with_a_token_from_a_secret_file():
    from bloomspan.sidecar.serve.state import ServeConfig, ServeConfigError

    host = _dockerfile_env()["BLOOMSPAN_SERVE_HOST"]
    _image_token_file()
    # The image's host alone is refused: it is the token file that lets serve start there.
    with pytest.raises(ServeConfigError):
        ServeConfig(host=host)
    ServeConfig(host=host, admin_token="x" * 32)


def test_serve_with_the_image_settings_refuses_a_missing_token_file_in_one_line(tmp_path):
    from click.testing import CliRunner

    env = {k: v for k, v in _dockerfile_env().items() if k.startswith("BLOOMSPAN_SERVE_")}
    env[ADMIN_TOKEN_VARIABLE] = str(tmp_path / "absent")
    result = CliRunner().invoke(_cli(), ["serve"], env=env)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--admin-token-file" in result.output and "absent" in result.output


def test_kubernetes_serve_mounts_the_admin_token_from_the_secret():
    token_file = _image_token_file()
    deployment = next(doc for _, doc in _manifests() if doc["kind"] == "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    serve = next(c for c in spec["containers"] if c["args"][0] == "serve")
    assert all(not v["name"].endswith("ADMIN_TOKEN") or "valueFrom" in v for v in serve.get("env", []))
    mount = next(m for m in serve["volumeMounts"] if m["mountPath"] == str(token_file.parent))
    assert mount.get("readOnly") is True
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    secret = volume["secret"]
    assert secret["secretName"] == CREDENTIALS_SECRET and not secret.get("optional", False), \
        "serve binds 0.0.0.0: the pod must not start without its token"
    assert {"key": ADMIN_TOKEN_KEY, "path": token_file.name} in secret["items"]
    assert secret["defaultMode"] & 0o007 == 0, "the token file must not be world-readable"
    assert f"--from-literal={ADMIN_TOKEN_KEY}=" in README.read_text()


def test_compose_serve_gets_the_admin_token_as_a_secret():
    token_file = _image_token_file()
    compose = _compose()
    serve = compose["services"]["bloomspan"]
    assert token_file.name in serve["secrets"]
    assert compose["secrets"][token_file.name]["file"].startswith("./")
    assert not any("ADMIN_TOKEN" in name and not name.endswith("_FILE") for name in serve["environment"])


def test_pods_start_with_the_images_kernel_cache_not_an_empty_one():
    """Issue 31: an emptyDir over the cache hid the image's `bloomspan warmup` cache, so every
    new pod compiled. An init container copies it into the volume the kernels are read from."""
    dockerfile = (ROOT / "deploy" / "docker" / "Dockerfile").read_text(encoding="utf-8")
    assert "NUMBA_CACHE_DIR=/var/cache/bloomspan/numba" in dockerfile and "bloomspan warmup" in dockerfile
    cases = [(spec, "/var/cache/bloomspan/numba") for name, _, spec in _pod_specs() if name == "bloomspan-serve"]
    workers = yaml.safe_load((ROOT / "deploy" / "dask" / "k8s" / "workers.yaml").read_text(encoding="utf-8"))
    cases.append((workers["spec"]["template"]["spec"], "/tmp/numba"))
    assert len(cases) == 2
    for spec, cache_dir in cases:
        main = spec["containers"][0]
        env = {e["name"]: e.get("value") for e in main.get("env", [])}
        assert env.get("NUMBA_CACHE_DIR", "/var/cache/bloomspan/numba") == cache_dir
        volume = next(m["name"] for m in main["volumeMounts"] if cache_dir.startswith(m["mountPath"].rstrip("/") + "/"))
        copy = next(c for c in spec["initContainers"] if c["name"] == "kernel-cache")
        target = next(m["mountPath"] for m in copy["volumeMounts"] if m["name"] == volume)
        script = copy["command"][-1]
        mount = next(m["mountPath"] for m in main["volumeMounts"] if m["name"] == volume)
        assert f"cp -a /var/cache/bloomspan/numba/. {target.rstrip('/')}{cache_dir[len(mount.rstrip('/')):]}/" in script


def test_the_image_caches_portable_kernels_and_ci_runs_its_build_steps():
    """Issue 31: the image's warm-up cache is keyed on no particular CPU (NUMBA_CPU_NAME=generic
    in the runtime stage, before `bloomspan warmup`), so it loads on whatever node a pod lands on;
    nothing in deploy/ sets another CPU name over it; and CI, where no Docker engine runs, runs the
    build's steps (deploy/docker/build_steps.sh, which reads the setting from the Dockerfile)."""
    dockerfile = (ROOT / "deploy" / "docker" / "Dockerfile").read_text(encoding="utf-8")
    runtime = dockerfile.split("\nFROM ")[-1]
    assert re.search(r"^\s*NUMBA_CPU_NAME=generic\b", runtime, re.MULTILINE), "the runtime stage sets NUMBA_CPU_NAME=generic"
    assert runtime.index("NUMBA_CPU_NAME=generic") < runtime.index("RUN bloomspan warmup")
    for path in DEPLOY.rglob("*"):
        if path.is_file() and path.name != "Dockerfile" and path.suffix in {".yaml", ".yml", ".env", ".service", ""}:
            assert "NUMBA_CPU_NAME" not in path.read_text(encoding="utf-8", errors="replace"), path
    script = (DEPLOY / "docker" / "build_steps.sh").read_text(encoding="utf-8")
    assert "deploy/docker/Dockerfile" in script and "NUMBA_CPU_NAME" in script and "warmup" in script
    assert "bloomspan_kernel_warmup_compiled_kernels" in script
    assert "deploy/docker/build_steps.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
