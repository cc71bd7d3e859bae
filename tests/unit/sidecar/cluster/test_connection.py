"""ClusterConfig: validation names the field, secrets never show, the client gets them."""
from __future__ import annotations

import logging

import pytest

from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.errors import ClusterConfigError, ClusterUnavailableError

SECRET = "s3cr3t-Pa55"
KEY = "QUtFWS1zZWNyZXQtYXBpLWtleQ=="


def test_defaults_and_client_kwargs_without_auth():
    c = ClusterConfig()
    kw = c.client_kwargs()
    assert kw["hosts"] == ["http://127.0.0.1:9200"] and "http_auth" not in kw and "headers" not in kw
    assert "use_ssl" not in kw and c.auth_kind == "none"


def test_basic_auth_reaches_the_client_but_never_repr():
    c = ClusterConfig(url="https://node:9200/", username="miner", password=SECRET, verify_certs=False)
    assert c.client_kwargs()["http_auth"] == ("miner", SECRET)
    assert c.client_kwargs()["use_ssl"] is True and c.client_kwargs()["verify_certs"] is False
    assert c.url == "https://node:9200" and c.auth_kind == "basic"
    for text in (repr(c), str(c), f"{c}"):
        assert SECRET not in text and "***" in text


def test_api_key_goes_to_the_authorization_header_only():
    c = ClusterConfig(url="https://node:9200", api_key=KEY)
    assert c.client_kwargs()["headers"] == {"Authorization": f"ApiKey {KEY}"}
    assert KEY not in repr(c) and c.auth_kind == "api_key"


def test_credentials_in_the_url_are_moved_out_of_it():
    c = ClusterConfig(url=f"https://miner:{SECRET}@node:9200")
    assert c.username == "miner" and c.password == SECRET
    assert c.url == "https://node:9200" == c.safe_url
    assert SECRET not in repr(c)


@pytest.mark.parametrize("kwargs, field", [
    ({"url": "ftp://node"}, "url"),
    ({"url": ""}, "url"),
    ({"url": "http://node:notaport"}, "url"),
    ({"password": SECRET}, "password"),
    ({"username": "u", "password": "p", "api_key": KEY}, "api_key"),
    ({"api_key": "  "}, "api_key"),
    ({"timeout": 0}, "timeout"),
    ({"timeout": True}, "timeout"),
    ({"verify_certs": "no"}, "verify_certs"),
    ({"url": "https://node", "ca_certs": "/nonexistent/ca.pem"}, "ca_certs"),
    ({"url": f"https://u:{SECRET}@node", "api_key": KEY}, "url"),
])
def test_invalid_settings_name_the_field_and_hide_secrets(kwargs, field):
    with pytest.raises(ClusterConfigError) as info:
        ClusterConfig(**kwargs)
    assert info.value.field == field
    assert SECRET not in str(info.value) and KEY not in str(info.value)


def test_ca_certs_only_with_https(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    assert ClusterConfig(url="https://node", ca_certs=str(ca)).client_kwargs()["ca_certs"] == str(ca)
    with pytest.raises(ClusterConfigError, match="https"):
        ClusterConfig(url="http://node", ca_certs=str(ca))


def test_unreachable_cluster_error_names_url_not_password(caplog):
    c = ClusterConfig(url="http://127.0.0.1:9", username="miner", password=SECRET, timeout=1)
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(ClusterUnavailableError) as info:
            c.checked_client()
    assert "127.0.0.1:9" in str(info.value) and SECRET not in str(info.value)
    assert SECRET not in caplog.text


def test_a_forwarded_authorization_header_replaces_the_own_credentials():
    """The proxy's near-duplicate search runs with the caller's header: one client factory for both."""
    own = ClusterConfig(url="https://node", username="miner", password=SECRET, verify_certs=False, timeout=7)
    kw = own.client_kwargs(authorization="Basic Y2FsbGVyOng=")
    assert kw["headers"] == {"Authorization": "Basic Y2FsbGVyOng="} and "http_auth" not in kw
    assert kw["verify_certs"] is False and kw["timeout"] == 7 and kw["hosts"] == ["https://node"]
    keyed = ClusterConfig(url="http://node", api_key=KEY).client_kwargs(authorization="Bearer t")
    assert keyed["headers"] == {"Authorization": "Bearer t"}
