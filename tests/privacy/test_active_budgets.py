"""The budgets entered with ``with budget:`` are a per-context stack: nested blocks, and
nothing seen from a thread that did not open them."""

import threading

import pytest

from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.privacy.active_budgets import context_budget, enter, leave

pytestmark = pytest.mark.backend_independent


def test_blocks_nest_and_unwind():
    outer, inner = PrivacyBudget(1.0, 1e-5), PrivacyBudget(0.5, 1e-5)
    assert context_budget() is None
    enter(outer)
    enter(inner)
    assert context_budget() is inner
    leave(inner)
    assert context_budget() is outer
    leave(inner)  # not the innermost: nothing changes
    assert context_budget() is outer
    leave(outer)
    assert context_budget() is None


def test_a_block_is_not_seen_from_another_thread():
    budget = PrivacyBudget(1.0, 1e-5)
    seen = []
    with budget:
        assert context_budget() is budget
        worker = threading.Thread(target=lambda: seen.append(context_budget()))
        worker.start()
        worker.join()
    assert seen == [None]
    assert context_budget() is None
