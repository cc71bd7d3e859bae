"""Run a `bloomspan serve` application on a free loopback port in a background thread,
so synchronous clients (opensearch-py, as crawlers use it) can talk to it."""
from __future__ import annotations

import asyncio
import socket
import threading
from contextlib import contextmanager

from aiohttp import web

from bloomspan.sidecar.serve.http_errors import JsonErrorAppRunner


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_in_thread(app: web.Application, port: int | None = None):
    port = port or free_port()
    loop = asyncio.new_event_loop()
    runner = JsonErrorAppRunner(app)  # as `bloomspan serve` runs it
    started = threading.Event()
    errors: list[BaseException] = []

    def run():
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        except BaseException as exc:  # surfaced to the test below
            errors.append(exc)
            started.set()
            return
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(30)
    if errors:
        raise errors[0]
    try:
        yield f"http://127.0.0.1:{port}", loop
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
