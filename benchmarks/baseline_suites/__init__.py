"""Suites of ``benchmarks.baselines``: one module per estimator family (see there)."""
