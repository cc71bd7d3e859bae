"""The operator's curation, stored in the cluster beside the template index: allow and deny
entries (``store``), the per-pattern cleaning modes serve hot-reloads (``store``), a new
run's phrases filtered by the entries before publication (``run_filter``), and the
comparison of two runs before one is promoted (``run_diff``)."""
