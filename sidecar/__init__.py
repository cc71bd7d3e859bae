"""bloomspan.sidecar: talks to the cluster, schedules, serves, and the `bloomspan` CLI."""
