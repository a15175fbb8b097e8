"""Tests of the privacy accounting package (a package, for the shared helpers)."""
