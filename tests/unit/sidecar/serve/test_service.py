"""`bloomspan serve`'s HTTP side without a cluster: outages answer JSON 502/503/504, the body
limit, the admin token, refusals before anything is forwarded, and no credential in output.

The "cluster" here is never a mock: it is a closed port (refused), a socket that accepts and
never answers (timeout) or one that hangs up at once (a broken connection). A request the
proxy refuses is proven unforwarded by the closed port: had it been forwarded it would be 503.
"""
from __future__ import annotations

import asyncio
import gzip
import json
import logging
import socket
import threading

import pytest
from aiohttp import web
from click.testing import CliRunner

from bloomspan.sidecar.serve.mapping_probe import accepts_fields, added_fields
from bloomspan.sidecar.serve.proxy_errors import error_middleware
from bloomspan.sidecar.serve.proxy_limits import DEFAULT_MAX_BODY_BYTES, parse_byte_size
from bloomspan.sidecar.serve.redaction import RedactingFilter, redact, split_userinfo
from bloomspan.sidecar.serve.service import RUNTIME, create_app
from bloomspan.sidecar.serve.state import ServeConfig, ServeConfigError

TOKEN = "t0ken-0123456789abcdef"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def black_hole():
    """A listening socket that never answers (connect succeeds, the read times out)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield server.getsockname()[1]
    server.close()


@pytest.fixture
def hang_up():
    """A server that accepts each connection and closes it without a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    stop = threading.Event()

    def loop():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    server.close()


def _config(port: int, **kw) -> ServeConfig:
    kw.setdefault("max_body_bytes", 10_000)
    return ServeConfig(upstream_url=f"http://127.0.0.1:{port}", upstream_timeout=kw.pop("upstream_timeout", 5.0), **kw)


async def _json(resp) -> dict:
    assert resp.headers["Content-Type"].startswith("application/json"), resp.headers
    return json.loads(await resp.read())


# ------------------------------------------------------------------ outages


async def test_refused_connection_is_a_json_503_with_one_log_line(aiohttp_client, caplog):
    client = await aiohttp_client(create_app(_config(_closed_port())))
    with caplog.at_level(logging.WARNING):
        resp = await client.post("/crawl/_doc/1?refresh=true&api_key=hidden", json={"a": 1})
    body = await _json(resp)
    assert resp.status == 503 and body["status"] == 503
    assert body["error"]["type"] == "bloomspan_upstream_unavailable" and body["error"]["root_cause"]
    lines = [r for r in caplog.records if "upstream_failure" in r.getMessage()]
    assert len(lines) == 1 and lines[0].exc_info is None
    assert "hidden" not in lines[0].getMessage() and "path=/crawl/_doc/1" in lines[0].getMessage()
    metrics = await (await client.get("/metrics")).text()
    assert 'bloomspan_proxy_upstream_errors_total{status="503"} 1.0' in metrics


async def test_a_cluster_that_never_answers_is_a_json_504(aiohttp_client, black_hole):
    client = await aiohttp_client(create_app(_config(black_hole, upstream_timeout=0.5)))
    resp = await client.get("/_cluster/health")
    assert resp.status == 504 and (await _json(resp))["error"]["type"] == "bloomspan_upstream_timeout"


async def test_a_connection_dropped_by_the_cluster_is_a_json_502(aiohttp_client, hang_up):
    client = await aiohttp_client(create_app(_config(hang_up)))
    resp = await client.post("/_bulk", data=b'{"index":{"_index":"crawl"}}\n{"a":1}\n',
                             headers={"Content-Type": "application/x-ndjson"})
    assert resp.status == 502 and (await _json(resp))["error"]["type"] == "bloomspan_upstream_error"


async def test_an_unexpected_exception_is_a_json_500_not_plain_text(aiohttp_client, caplog):
    async def broken(request):
        raise KeyError("bug")

    app = web.Application(middlewares=[error_middleware()])
    app.router.add_get("/x", broken)
    client = await aiohttp_client(app)
    with caplog.at_level(logging.ERROR):
        resp = await client.get("/x")
    assert resp.status == 500 and (await _json(resp))["error"]["type"] == "bloomspan_internal_error"
    assert all(r.exc_info is None for r in caplog.records)


async def test_unknown_method_on_a_sidecar_route_is_json(aiohttp_client):
    client = await aiohttp_client(create_app(_config(_closed_port())))
    resp = await client.delete("/healthz")
    # /healthz is GET only; the catch-all proxy takes other methods, which fail upstream as JSON.
    assert resp.status in (405, 503) and (await _json(resp))["status"] == resp.status


# ------------------------------------------------------------------ body limit


async def test_a_body_over_the_limit_is_413_before_anything_is_forwarded(aiohttp_client):
    client = await aiohttp_client(create_app(_config(_closed_port(), max_body_bytes=1000)))
    resp = await client.post("/_bulk", data=b"x" * 1001, headers={"Content-Type": "application/x-ndjson"})
    assert resp.status == 413 and (await _json(resp))["error"]["type"] == "content_too_long_exception"
    ok = await client.post("/_bulk", data=b"x" * 1000, headers={"Content-Type": "application/x-ndjson"})
    assert ok.status == 503  # within the limit: forwarded (to the closed port)


async def test_a_gzip_body_is_limited_by_what_it_inflates_to(aiohttp_client):
    client = await aiohttp_client(create_app(_config(_closed_port(), max_body_bytes=10_000)))
    bomb = gzip.compress(b"{}\n" * 100_000)
    assert len(bomb) < 10_000
    resp = await client.post("/_bulk", data=bomb, headers={"Content-Encoding": "gzip",
                                                           "Content-Type": "application/x-ndjson"})
    assert resp.status == 413


async def test_without_a_flag_the_limit_is_the_clusters_or_the_documented_default(aiohttp_client, caplog):
    app = create_app(_config(_closed_port(), max_body_bytes=None))
    with caplog.at_level(logging.WARNING):
        await aiohttp_client(app)
    assert app[RUNTIME].max_body_bytes == DEFAULT_MAX_BODY_BYTES
    assert any("http.max_content_length" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("text,expected", [("100mb", 100 * 2**20), ("1024", 1024), ("512kb", 512 * 1024),
                                           ("1.5gb", int(1.5 * 2**30)), ("10B", 10)])
def test_parse_byte_size(text, expected):
    assert parse_byte_size(text) == expected


def test_parse_byte_size_rejects_nonsense():
    with pytest.raises(ValueError):
        parse_byte_size("lots")


# ------------------------------------------------------------------ access rules and the admin token


async def test_a_bulk_writing_the_lease_index_is_refused_unforwarded(aiohttp_client):
    client = await aiohttp_client(create_app(_config(_closed_port(), template_index="bloomspan-templates")))
    body = b'{"index":{"_index":"crawl-1"}}\n{"a":1}\n{"delete":{"_index":"bloomspan-lease","_id":"l"}}\n'
    resp = await client.post("/_bulk", data=body, headers={"Content-Type": "application/x-ndjson"})
    error = (await _json(resp))["error"]
    assert resp.status == 403 and error["type"] == "bloomspan_forbidden" and "item 2" in error["reason"]
    assert 'bloomspan_proxy_refused_total{rule="protected_index"} 1.0' in await (await client.get("/metrics")).text()


async def test_sidecar_credentials_refuse_index_deletion(aiohttp_client, tmp_path):
    phrases = tmp_path / "phrases.jsonl"
    phrases.write_text(json.dumps({"text": "all rights reserved", "tokens": ["all", "rights", "reserved"]}) + "\n")
    config = _config(_closed_port(), forward_credentials=False, clean_indices=("crawl-*",), phrases_path=str(phrases))
    client = await aiohttp_client(create_app(config))
    resp = await client.delete("/crawl-1")
    assert resp.status == 403 and "--no-forward-credentials" in (await _json(resp))["error"]["reason"]
    assert (await client.get("/crawl-1/_search")).status == 503  # reads are forwarded


async def test_post_runs_needs_the_admin_token_and_reads_stay_open(aiohttp_client):
    started = []
    app = create_app(_config(_closed_port(), admin_token=TOKEN), mine_fn=lambda config: started.append(1) or {})
    client = await aiohttp_client(app)
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": f"Basic {TOKEN}"}):
        resp = await client.post("/runs", headers=headers)
        assert resp.status == 401 and (await _json(resp))["error"]["type"] == "bloomspan_unauthorized"
        assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    assert not started
    resp = await client.post("/runs", headers={"Authorization": f"Bearer {TOKEN}"})
    assert resp.status == 202
    for path in ("/runs", "/metrics", "/healthz"):
        assert (await client.get(path)).status == 200, path


async def test_post_runs_without_mine_index_is_409_naming_the_flag(aiohttp_client):
    client = await aiohttp_client(create_app(_config(_closed_port())))  # the sidecar's own mining run
    resp = await client.post("/runs")
    assert resp.status == 409
    error = (await _json(resp))["error"]
    assert error["type"] == "bloomspan_mining_not_configured" and "--mine-index" in error["reason"], error
    assert (await (await client.get("/runs")).json())["runs"] == []  # nothing was started


# ------------------------------------------------------------------ config and credentials


def test_url_userinfo_moves_into_the_config_and_never_into_messages():
    config = ServeConfig(upstream_url="https://admin:s3cret@search.internal:9200/")
    assert config.upstream_url == "https://search.internal:9200"
    assert (config.username, config.password) == ("admin", "s3cret")
    assert "s3cret" not in repr(config)
    with pytest.raises(ServeConfigError) as exc:
        ServeConfig(upstream_url="https://admin:s3cret@search.internal:9200", username="other")
    assert "s3cret" not in str(exc.value)
    with pytest.raises(ServeConfigError) as exc:
        ServeConfig(upstream_url="ftp://admin:s3cret@x")
    assert "s3cret" not in str(exc.value)


def test_a_non_loopback_host_needs_a_token_or_insecure_admin():
    for host in ("127.0.0.1", "::1", "localhost"):
        ServeConfig(host=host)
    with pytest.raises(ServeConfigError) as exc:
        ServeConfig(host="0.0.0.0")
    assert exc.value.field == "host" and "--admin-token" in str(exc.value) and "--insecure-admin" in str(exc.value)
    ServeConfig(host="0.0.0.0", admin_token=TOKEN)
    ServeConfig(host="0.0.0.0", insecure_admin=True)
    with pytest.raises(ServeConfigError) as exc:
        ServeConfig(admin_token="short")
    assert "short" not in str(exc.value)


def test_serve_refuses_a_public_host_without_a_token_in_one_line():
    from bloomspan.sidecar.cli.main import cli

    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"], env={"BLOOMSPAN_SERVE_ADMIN_TOKEN": ""})
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--admin-token" in result.output and "--insecure-admin" in result.output


def test_serve_prints_no_credential_of_the_upstream_url(monkeypatch, tmp_path):
    from bloomspan.sidecar.cli.main import cli
    from bloomspan.sidecar.serve import http_errors

    monkeypatch.setattr(http_errors, "run_app", lambda app, **kw: logging.getLogger("x").warning(
        "starting with https://admin:s3cret@search.internal:9200 Authorization: Basic YWRtaW46czNjcmV0"))
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    result = CliRunner().invoke(cli, ["serve", "--upstream-url", "https://admin:s3cret@search.internal:9200",
                                      "--host", "0.0.0.0", "--admin-token-file", str(token_file)])
    assert result.exit_code == 0, result.output
    assert "s3cret" not in result.output and "https://search.internal:9200" in result.output
    assert "admin token" in result.output


def test_redact_masks_userinfo_and_authorization_values():
    text = 'GET https://u:p@h:9200/x {"Authorization": "Basic abc=="} api_key=xyz'
    masked = redact(text)
    assert "u:p@" not in masked and "abc==" not in masked and "xyz" not in masked and "https://***@h:9200/x" in masked
    assert split_userinfo("http://a%40b:c@h/") == ("http://h/", "a@b", "c")
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "url=%s", ("http://u:secret@h",), None)
    RedactingFilter().filter(record)
    assert "secret" not in record.getMessage()


# ------------------------------------------------------------------ strict mappings


@pytest.mark.parametrize("mapping,expected", [
    ({}, True), ({"dynamic": "true"}, True), ({"dynamic": "strict"}, False), ({"dynamic": False}, False),
    ({"dynamic": "false"}, False), ({"dynamic": "strict", "properties": {"bloomspan": {"type": "object"}}}, True),
    ({"dynamic": "strict_allow_templates"}, False),
])
def test_accepts_fields_reads_top_level_dynamic(mapping, expected):
    assert accepts_fields(mapping, added_fields(("text",), "strip")) is expected


def test_downweight_also_needs_the_clean_field_mapped():
    mapping = {"dynamic": "strict", "properties": {"bloomspan": {"type": "object"}}}
    assert not accepts_fields(mapping, added_fields(("text",), "downweight"))
    mapping["properties"]["text_clean"] = {"type": "text"}
    assert accepts_fields(mapping, added_fields(("text",), "downweight"))


async def test_a_cluster_that_stays_down_is_one_reload_line_not_a_traceback_per_reload(aiohttp_client, caplog):
    caplog.set_level(logging.INFO)
    config = _config(_closed_port(), template_index="bloomspan-templates", reload_seconds=0.05)
    await aiohttp_client(create_app(config))
    await asyncio.sleep(1.0)  # about 20 reloads, all failing
    lines = [r for r in caplog.records if r.name == "bloomspan.sidecar.serve.service" and r.levelno >= logging.WARNING]
    ours = [r for r in caplog.records if r.name.startswith("bloomspan")]  # opensearch-py logs its own retries
    assert not [r for r in ours if r.exc_info], [r.getMessage() for r in ours if r.exc_info]
    failing = [r for r in lines if "template reload" in r.getMessage()]
    assert len(failing) == 1 and "failing" in failing[0].getMessage(), [r.getMessage() for r in lines]


def test_serve_workers_share_one_port_and_stop_together(tmp_path):
    """`serve --workers 2`: two worker processes answer on one port (SO_REUSEPORT) and SIGTERM
    to the parent stops both."""
    import signal
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    from tests.support.service_thread import free_port

    port = free_port()
    exe = str(Path(sys.executable).with_name("bloomspan"))
    proc = subprocess.Popen([exe, "serve", "--port", str(port), "--workers", "2", "--upstream-url",
                             f"http://127.0.0.1:{_closed_port()}"], stdout=subprocess.DEVNULL,
                            stderr=open(tmp_path / "serve.log", "wb"))
    try:
        children: list[int] = []
        deadline = time.time() + 120
        while time.time() < deadline:
            children = [int(c) for c in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
            try:
                answers = [urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).status
                           for _ in range(4)]
            except OSError:
                answers = []
            if len(children) == 2 and answers == [200] * 4:
                break
            time.sleep(0.5)
        assert len(children) == 2 and answers == [200] * 4, (tmp_path / "serve.log").read_text()[-2000:]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        assert not any(Path(f"/proc/{c}").exists() for c in children)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_on_a_taken_port_is_one_line_not_a_traceback(tmp_path, workers):
    """A port another process listens on (a serve left running, say) was an OSError traceback."""
    import socket
    import subprocess
    import sys
    from pathlib import Path

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        exe = str(Path(sys.executable).with_name("bloomspan"))
        proc = subprocess.run([exe, "serve", "--port", str(port), "--workers", workers, "--upstream-url",
                               f"http://127.0.0.1:{_closed_port()}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr and "--port" in proc.stderr, proc.stderr
