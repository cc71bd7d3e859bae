"""Requests that are not valid HTTP, or whose body cannot be read: a JSON 400, never an echo.

Two places where aiohttp itself would answer, below the routes and their middleware:

* **The HTTP parser** (a bad chunk size, an HTTP/1.0 request that sends data without a
  ``Content-Length``, a header line too long): aiohttp answers a plain-text 400 whose text
  quotes the offending bytes, which may be the client's document, and logs a traceback.
  :class:`JsonErrorAppRunner` runs the app with connections whose error answer is
  OpenSearch's JSON shape, with a fixed reason that never quotes a byte of the request, and
  one log line.
* **The body stream** (a body sent with ``Content-Encoding: gzip`` that is not gzip, a chunk
  header broken after the handler started): reading raises ``RequestPayloadError``.
  :func:`unreadable_body` answers it with a JSON 400 and closes the connection (what follows
  on it cannot be framed), without aiohttp draining the broken stream into a traceback.
"""
from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.http_exceptions import (
    BadStatusLine,
    ContentEncodingError,
    ContentLengthError,
    DecompressSizeError,
    InvalidHeader,
    InvalidURLError,
    LineTooLong,
    TransferEncodingError,
)
from aiohttp.web_protocol import RequestHandler, RequestPayloadError, _ErrInfo

from bloomspan.sidecar.errors import ListenError
from bloomspan.sidecar.serve.proxy_errors import error_response

log = logging.getLogger(__name__)

GENERIC = "the request is not valid HTTP/1.1"
# Fixed descriptions: these exceptions' own messages quote the request's bytes.
_DESCRIPTIONS: tuple[tuple[type[BaseException], str], ...] = (
    (ContentEncodingError, "the body cannot be decoded with its Content-Encoding; send it encoded that way, "
                           "or drop the header"),
    (DecompressSizeError, "the body inflates past what the proxy reads; send a smaller body"),
    (TransferEncodingError, "the chunked Transfer-Encoding of the body is broken"),
    (ContentLengthError, "the body is shorter than its Content-Length"),
    (LineTooLong, "the request line or a header is too long"),
    (InvalidHeader, "a header is not valid HTTP"),
    (BadStatusLine, "the request line is not valid HTTP"),
    (InvalidURLError, "the request URL is not valid"),
)
_DATA_AFTER_CLOSE = ("data follows the end of the request: an HTTP/1.0 request without Content-Length "
                     "has no body; send Content-Length (or use HTTP/1.1)")


def describe(exc: BaseException | None) -> str:
    """What is wrong with the request, in words that never quote its bytes."""
    while exc is not None:
        for cls, text in _DESCRIPTIONS:
            if isinstance(exc, cls):
                return text
        message = getattr(exc, "message", "")
        if isinstance(message, str) and ":\n" in message:
            # The C parser's messages: "<what>:\n\n  <the bytes>\n  ^"; only <what> is kept.
            head = message.split(":\n", 1)[0].strip()
            if head.startswith("Data after"):
                return _DATA_AFTER_CLOSE
            if head and "'" not in head and '"' not in head and len(head) <= 120:
                return head[0].lower() + head[1:]
        exc = exc.__cause__
    return GENERIC


def _error_type(status: int) -> str:
    return "parse_exception" if status == 400 else f"http_{status}"


def unreadable_body(request: web.Request, exc: BaseException) -> web.Response:
    """The answer to a request whose body stream raised ``exc`` (``RequestPayloadError``)."""
    reason = describe(exc)
    log.warning("proxy unreadable_body method=%s path=%s content_encoding=%s error=%s", request.method,
                request.path, request.headers.get("Content-Encoding", "-"),
                type(exc.__cause__ or exc).__name__)
    # The stream is broken: mark it ended so aiohttp does not read it again after the answer
    # (it would raise the same error into a traceback), and close the connection.
    request.content.feed_eof()
    response = error_response(400, "parse_exception", reason,
                              headers={"Connection": "close"})
    response.force_close()
    return response


class JsonErrorRequestHandler(RequestHandler):
    """aiohttp's connection handler, answering HTTP-level errors in JSON (see the module doc)."""

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # A framing error inside a body being read (a bad chunk size after the head): aiohttp
        # queues its error answer behind the request in flight and leaves that request's body
        # waiting for bytes that never come, so the handler hangs until the client gives up.
        # The body is ended with the error instead: the handler answers 400 at once.
        request = self._current_request
        if request is None or not self._messages or request.content.is_eof():
            return
        err_info = self._messages[-1][0]
        if isinstance(err_info, _ErrInfo):
            error = RequestPayloadError(describe(err_info.exc))
            error.__cause__ = err_info.exc
            request.content.set_exception(error)

    def handle_error(self, request, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        log.warning("proxy bad_http_request status=%d peer=%s error=%s", status, request.remote,
                    type(exc).__name__ if exc is not None else "-")
        if request.writer.output_size > 0:  # an answer has begun; nothing more can be said on it
            raise ConnectionError("response already started; cannot send the error answer")
        reason = describe(exc) if status < 500 else "the proxy failed on this request; see its log"
        response = error_response(status, _error_type(status) if status < 500 else "bloomspan_internal_error",
                                  reason)
        response.force_close()
        return response


class _JsonErrorServer(web.Server):
    def __call__(self) -> RequestHandler:
        # aiohttp's Server.__call__, with our handler class (the only change).
        return JsonErrorRequestHandler(self, loop=self._loop, **self._kwargs)


class JsonErrorAppRunner(web.AppRunner):
    """``web.AppRunner`` whose connections use :class:`JsonErrorRequestHandler`.

    aiohttp has no public hook for the parser's error answer; this overrides the runner's
    server factory and nothing else (the app, its middleware and signals are aiohttp's own).
    """

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _JsonErrorServer  # same state, one overridden method
        return server


def run_app(app: web.Application, host: str, port: int, *, reuse_port: bool = False) -> None:
    """``web.run_app`` with :class:`JsonErrorAppRunner`: serve until SIGINT or SIGTERM, then
    run the app's cleanup (its background tasks are cancelled and awaited). ``reuse_port``:
    bind with ``SO_REUSEPORT``, so several processes serve one port (:func:`run_workers`)."""
    import asyncio

    async def main() -> None:
        runner = JsonErrorAppRunner(app, handle_signals=True)
        await runner.setup()
        try:
            try:
                await web.TCPSite(runner, host, port, reuse_port=reuse_port or None).start()
            except OSError as exc:
                raise ListenError(f"cannot listen on {host}:{port} ({exc.strerror or exc}): stop what listens "
                                  "there, or give another --port / --host") from None
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    except (web.GracefulExit, KeyboardInterrupt):
        pass  # asyncio.run cancelled main(), whose finally ran the cleanup


def run_workers(make_app, host: str, port: int, workers: int) -> int:
    """Serve ``make_app()`` from ``workers`` processes on one port (pre-fork, ``SO_REUSEPORT``:
    the kernel spreads the connections). One event loop runs the proxy's Python on one core;
    a worker per core is how the proxy scales. Each worker is a whole `serve` (its own template
    watcher and cleaner, emerging hook and metrics). SIGINT/SIGTERM stop every worker; returns
    the first non-zero exit status of a worker, else 0. With ``workers`` 1 the app runs here."""
    import os
    import signal

    if workers <= 1:
        run_app(make_app(), host=host, port=port)
        return 0
    children: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # the worker: a fresh app in a process of its own
            status = 0
            try:
                run_app(make_app(), host, port, reuse_port=True)
            except ListenError as exc:  # one line, as with one process
                log.error("serve worker %d: %s", os.getpid(), exc)
                status = 1
            except BaseException:  # noqa: BLE001 - reported by the exit status, logged by the app
                logging.getLogger(__name__).exception("serve worker %d failed", os.getpid())
                status = 1
            finally:
                os._exit(status)
        children.append(pid)

    def stop(signum, frame) -> None:
        for child in children:
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    status = 0
    for child in children:
        while True:
            try:
                _, code = os.waitpid(child, 0)
                break
            except InterruptedError:
                continue
        status = status or os.waitstatus_to_exitcode(code)
    return status
