"""Fixture shared by the tests of the process-wide default ledger."""

import pytest

from geomstats_dp.privacy import get_default_budget, set_default_budget


@pytest.fixture
def fresh_default():
    """A fresh unbounded default ledger for the test; the previous one is restored."""
    previous = set_default_budget(None)
    yield get_default_budget()
    set_default_budget(previous)
