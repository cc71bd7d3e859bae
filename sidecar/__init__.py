"""bloomspan.sidecar: talks to the cluster, schedules, serves, and the `bloomspan` CLI.

Rooms: ``cluster`` (connection, reading a field), ``run`` (one resumable mining run),
``publish`` (the template index), ``report``, ``serve`` (the service and bulk proxy), ``cli``,
``distributed`` (Dask); ``errors`` is shared by all of them. The corpora with known answers
and their scores are evaluation, not product: ``bench/corpora`` (installed as ``bloomspan.corpora``).
"""
