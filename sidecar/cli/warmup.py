"""`bloomspan warmup`: compile (or load from the cache) every numba kernel before the first command.

Run once after an install, in an image build or a unit's install step: later commands load the
kernels from numba's cache instead of compiling them (about a minute of the first `mine`).
"""
from __future__ import annotations

import os
import tempfile
import time

import click


def check_cache_dir() -> None:
    """A NUMBA_CACHE_DIR that cannot be created or written is refused in one line (numba would
    fall back to another location silently, and the image or unit would ship no cache)."""
    path = os.environ.get("NUMBA_CACHE_DIR")
    if not path:
        return
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise click.ClickException(f"NUMBA_CACHE_DIR={path}: not writable ({exc.strerror}); "
                                   "point it at a writable directory or fix its owner") from None


@click.command()
@click.option("--progress", "progress_mode", type=click.Choice(["auto", "bar", "lines", "none"]), default="auto",
              show_default=True, help="Progress display on stderr.")
def warmup(progress_mode):
    """Compile every numba kernel bloomspan runs (or load it from numba's cache), so that the
    first `mine`, `clean` or `serve` starts at once. Honours NUMBA_CACHE_DIR."""
    check_cache_dir()
    from bloomspan.sidecar.cli.kernel_notice import cache_location, watch_compilation
    from bloomspan.sidecar.cli.kernel_warmup import WarmupError, warm_up
    from bloomspan.sidecar.cli.progress import Progress

    t0 = time.perf_counter()
    progress = Progress(progress_mode)
    finish = watch_compilation(progress.note)
    try:
        warm_up(progress)
    except WarmupError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        progress.close()
        watch = finish()
    if watch.uncached and not watch.cache_dirs:
        raise click.ClickException("kernels compiled but numba cached none of them: set NUMBA_CACHE_DIR to a "
                                   "writable directory")
    how = "" if watch.kernels else ", all from the cache"
    click.echo(f"bloomspan: every kernel ready in {time.perf_counter() - t0:.1f} s{how} "
               f"(cache: {cache_location(watch.cache_dirs)})", err=True)
