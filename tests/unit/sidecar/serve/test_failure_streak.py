"""FailureStreak (sidecar/serve/failure_streak.py): a repeated action logged by state changes."""
from __future__ import annotations

import logging

from bloomspan.sidecar.serve.failure_streak import FailureStreak, one_line


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_one_line_when_it_starts_a_summary_while_it_lasts_and_one_when_it_ends(caplog):
    clock = Clock()
    streak = FailureStreak("reload", logging.getLogger("streak-test"), summary_every=60, clock=clock)
    caplog.set_level(logging.INFO, logger="streak-test")
    streak.succeeded()  # working all along: nothing to say
    for _ in range(30):  # 2 s apart: 58 s of failures
        streak.failed(ConnectionError("refused\nsecond line"))
        clock.now += 2
    assert [r.levelname for r in caplog.records] == ["ERROR"]
    assert "ConnectionError: refused second line" in caplog.records[0].getMessage()
    streak.failed(ConnectionError("refused"))  # 60 s in: the summary
    assert caplog.records[-1].levelname == "WARNING" and "31 attempts" in caplog.records[-1].getMessage()
    streak.failed(TimeoutError("slow"))  # a different failure is a new state
    assert "failing: TimeoutError: slow" in caplog.records[-1].getMessage()
    clock.now += 10
    streak.succeeded()
    assert "recovered after 70 s (32 failed attempts)" in caplog.records[-1].getMessage()
    assert len(caplog.records) == 4 and not any(r.exc_info for r in caplog.records)
    streak.succeeded()
    assert len(caplog.records) == 4 and not streak.failing


def test_one_line_keeps_a_long_message_short():
    assert one_line(ValueError("x" * 500)) == "ValueError: " + "x" * 200
    assert one_line(ValueError()) == "ValueError"
