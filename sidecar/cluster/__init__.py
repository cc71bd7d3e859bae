"""bloomspan.sidecar.cluster: Talking to one OpenSearch cluster: connection settings, reading a field, field paths, source checks."""
