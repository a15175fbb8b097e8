"""Benchmarks: `python -m benchmarks [name ...]` (all of them by default)."""
