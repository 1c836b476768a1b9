"""Benchmarks (spec §13): LoCoMo loader, metrics, plain-RAG baselines, runner and report.

Pure modules: nothing here imports Django at import time, so metrics and baselines are usable
(and testable) without settings; only ``locomo.main`` and the default encoder set Django up.
"""
