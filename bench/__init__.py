"""bench: the benchmark commands (``python -m bench.NAME``) and what tests and benchmarks share.

* ``corpora/``: generators with ground truth and the scores against it, installed as
  ``bloomspan.corpora`` (``bloomspan demo``, ``corpus``, ``quality`` and ``warmup`` use them);
* ``agreement``, ``scan_publication``: measures and plain references the tests use too;
* ``result_file``: what every bench writes, ``results/NAME.json`` (its current figure);
  ``results_page``: ``RESULTS.md`` generated from those files; ``history/``: earlier runs' notes.
"""
