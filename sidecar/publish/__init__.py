"""bloomspan.sidecar.publish: What a run publishes: the versioned template index, phrase records, bitmaps, reading them back."""
