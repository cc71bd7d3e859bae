"""bloomspan.sidecar.report: The coverage report of a run: as text, as a model, as an HTML page with figures."""
