"""bloomspan.sidecar.run: One mining run, resumable: read, snapshot, mine, checkpoints, lease, incremental re-runs, annotation."""
