"""Tests of the tangent-Gaussian samplers (a package, for the shared helpers)."""
