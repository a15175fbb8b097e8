"""Conformance checks of private estimators (issue 29)."""
