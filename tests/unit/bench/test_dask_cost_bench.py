"""The Dask cost benchmark's medians (no run is timed here)."""
from __future__ import annotations

from bench.dask_cost_bench import _median_row


def _run(cpu, peak):
    return {"wall": cpu, "cpu": cpu, "peak_rss": peak, "load": 1.0, "tokens": 10, "worker_bytes_sent": 5,
            "count_method": "pigeonhole", "windows_sent_bytes": 1, "reduced_share": 0.1, "worker_peak_rss": peak}


def test_the_worker_peak_is_the_median_of_the_runs_not_the_first():
    row = _median_row([_run(3.0, 322), _run(2.0, 276), _run(4.0, 276)])
    assert row["worker_peak_rss"] == 276 and row["cpu"] == 3.0


def test_a_single_process_row_has_no_worker_peak():
    runs = [{**_run(1.0, 5), "worker_peak_rss": None} for _ in range(3)]
    assert _median_row(runs)["worker_peak_rss"] is None
