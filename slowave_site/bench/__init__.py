"""Benchmarks (spec §13): LoCoMo and LongMemEval loaders, metrics, plain-RAG baselines, runners
and reports; kept stores (store.py) and ranking-policy overrides (overrides.py) for both.

The loaders, metrics, baselines and reports read no settings and import no app at import
time, so they are usable (and testable) without a configured project. Slowave's sides
(slowave.py, longmemeval_slowave.py) need the apps, and the runners import them only when
Slowave is asked for; overrides.py (and so the LongMemEval runner) imports the ranking policy,
which reads settings when used.
"""
