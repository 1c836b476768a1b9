"""Consolidation services: one module per offline pass (spec §8.3) plus the pass runner.

`passes` holds the ordered registry and the entry points adapters call; `runs` the lease,
coverage and WorkerRun bookkeeping; the other modules are the pass bodies. Pure maths lives in
consolidation.clustering; nothing here imports Celery.
"""
