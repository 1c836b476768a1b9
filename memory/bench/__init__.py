"""Benchmarks (spec §13): LoCoMo and LongMemEval loaders, metrics, plain-RAG baselines, runners
and reports; kept stores (store.py) and ranking-policy overrides (overrides.py) for both.

The loaders, metrics, baselines and reports import nothing of Django at import time, so they are
usable (and testable) without settings. Slowave's sides (slowave.py, longmemeval_slowave.py)
need the apps; the runners import them only when Slowave is asked for.
"""
