"""The engine: how the work runs, never what it computes.

Enters: independent parts of one evaluation (callables over numpy columns).
Leaves: their results, identical whatever the number of workers.  Forked
processes (:mod:`.parallel`), a Dask cluster (:mod:`.cluster`), memory handed
back between stages (:mod:`.memory`) and the optional compiled parts
(:mod:`.compiled`).  Imports no other wing.
"""
