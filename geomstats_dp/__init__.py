"""Differential privacy on Riemannian manifolds, as a geomstats plugin."""

__version__ = "0.1.0"
