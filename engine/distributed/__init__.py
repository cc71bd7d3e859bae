"""bloomspan.engine.distributed: The exact frequent-window reduction that lets a corpus be mined in shards."""
