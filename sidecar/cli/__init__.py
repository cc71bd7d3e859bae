"""bloomspan.sidecar.cli.main: The `bloomspan` command line: the group, one module per command group, flags, progress, errors."""
