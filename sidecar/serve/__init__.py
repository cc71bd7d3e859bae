"""bloomspan.sidecar.serve: `bloomspan serve`: the app, its state, the bulk proxy and its rules, scheduled runs, search collapse."""
