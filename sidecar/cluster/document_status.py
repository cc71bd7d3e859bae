"""What reading a document's field found: the status codes the scan writes into the doc log,
the snapshots and the Dask read shards, and the names the run report counts skips by.

They live with the scan (the cluster room) because the scan decides them; the run room's
checkpoints and snapshots store them.
"""
from __future__ import annotations

STORED = 0       # text read and appended to the store
MISSING = 1      # field absent or null
EMPTY = 2        # field is an empty or whitespace-only string (or an empty list)
NOT_TEXT = 3     # field is a number, object, boolean or a list with non-strings
LISTED = 255     # incremental listing: version known, text not read
SKIP_REASONS = {MISSING: "missing", EMPTY: "empty", NOT_TEXT: "not_text"}
