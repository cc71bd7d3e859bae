"""`serve` is not ready until its kernel warm-up has ended, and /metrics says how long it took."""
from __future__ import annotations

import asyncio
import threading

import pytest

from bloomspan.sidecar.serve.service import create_app
from bloomspan.sidecar.serve.state import ServeConfig

pytestmark = pytest.mark.integration


async def _readyz(client):
    resp = await client.get("/readyz")
    return resp.status, await resp.json()


async def test_readyz_waits_for_the_kernel_warm_up(aiohttp_client, opensearch_url):
    release, started = threading.Event(), threading.Event()

    def warm() -> int:  # a warm-up that ends when the test says so, having "compiled" 3 kernels
        started.set()
        release.wait(30)
        return 3

    client = await aiohttp_client(create_app(ServeConfig(upstream_url=opensearch_url), warm=warm))
    await asyncio.to_thread(started.wait, 10)
    status, body = await _readyz(client)
    assert status == 503 and body["problems"] == ["numba kernels still loading"]
    release.set()
    for _ in range(100):
        status, body = await _readyz(client)
        if status == 200:
            break
        await asyncio.sleep(0.05)
    assert (status, body["problems"]) == (200, [])
    metrics = await (await client.get("/metrics")).text()
    assert "bloomspan_kernel_warmup_seconds " in metrics
    assert "bloomspan_kernel_warmup_compiled_kernels 3.0" in metrics


async def test_without_a_warm_up_readyz_does_not_wait(aiohttp_client, opensearch_url):
    client = await aiohttp_client(create_app(ServeConfig(upstream_url=opensearch_url)))
    assert (await _readyz(client))[0] == 200
