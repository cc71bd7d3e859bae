"""Progress events from inside a task: throttled, the first and the last always sent."""
from __future__ import annotations

from bloomspan.sidecar.distributed.in_worker import ThrottledProgress


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_throttled_progress_sends_the_first_step_then_one_per_interval_and_always_the_finish():
    sent, clock = [], _Clock()
    progress = ThrottledProgress("read", 3, interval=0.25, emit=lambda *e: sent.append(e), clock=clock)
    for done, at in [(10, 100.0), (20, 100.1), (30, 100.24), (40, 100.25), (50, 100.3), (60, 100.6)]:
        clock.now = at
        progress.step(done)
    clock.now = 100.61
    progress.finish(70)
    assert sent == [("read", 3, 10), ("read", 3, 40), ("read", 3, 60), ("read", 3, 70)]


def test_throttled_progress_finish_alone_is_one_event():
    sent = []
    ThrottledProgress("read", 0, emit=lambda *e: sent.append(e), clock=_Clock()).finish(5)
    assert sent == [("read", 0, 5)]
