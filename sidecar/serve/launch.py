"""Starting `bloomspan serve` from its validated config: the bloomspan fields mapped where the
proxy's documents land, then the app (:func:`.service.create_app`) served from one process or
several on one port until SIGINT/SIGTERM. The command parses the flags into a
:class:`.state.ServeConfig` and calls :func:`serve_app`; this owns the work."""
from __future__ import annotations

from collections.abc import Callable

from bloomspan.sidecar.publish.clean_index_template import install_for_serve

from .http_errors import run_workers
from .service import create_app
from .state import ServeConfig


def serve_app(config: ServeConfig, workers: int, warm: Callable[[], int] | None = None) -> int:
    """Serve ``config`` from ``workers`` processes (each builds its own app after the fork: its
    own loop, sessions and threads); ``warm`` loads the kernels a request can reach, and /readyz
    says not-ready until it returned. Returns the first non-zero exit status of a worker, else 0;
    a port that cannot be bound raises :class:`~bloomspan.sidecar.errors.ListenError`."""
    install_for_serve(config)  # map the bloomspan fields where the proxy's documents land; never fatal
    return run_workers(lambda: create_app(config, warm=warm), config.host, config.port, workers)
