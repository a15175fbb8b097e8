"""A fit's events learnt at its budget check, without reading a data value or charging."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection.planning import PlanningBudget, planned_events
from geomstats_dp.privacy import PrivacyBudget

SPACE = Euclidean(2)


@pytest.mark.parametrize("method", ["rgd", "tangent"])
def test_planned_events_are_those_a_real_fit_charges(method):
    data = np.random.default_rng(0).normal(size=(30, 2))
    budget = PrivacyBudget(10.0, 1e-5)
    PrivateFrechetMean(SPACE, method=method, epsilon=1.0, delta=1e-6, clip_norm=1.0,
                       budget=budget, random_state=0).fit(data)
    planned = planned_events(lambda estimator: estimator.fit(data), PrivateFrechetMean(
        SPACE, method=method, epsilon=1.0, delta=1e-6, clip_norm=1.0, random_state=0))
    assert planned and tuple(planned) == tuple(budget.events)


def test_planning_stops_before_any_data_value_is_read():
    """A non-finite record, refused once values are read, does not stop the planning."""
    data = np.random.default_rng(1).normal(size=(30, 2))
    data[4] = np.nan
    estimator = PrivateFrechetMean(SPACE, epsilon=1.0, delta=1e-6, clip_norm=1.0)
    assert planned_events(lambda est: est.fit(data), estimator)
    assert isinstance(estimator.budget, PlanningBudget)
    with pytest.raises(ValueError, match="4"):
        PrivateFrechetMean(SPACE, epsilon=1.0, delta=1e-6, clip_norm=1.0).fit(data)


def test_a_run_that_charges_nothing_plans_no_event():
    assert planned_events(lambda estimator: None, PrivateFrechetMean(SPACE)) == ()


def test_spending_without_checking_is_refused():
    with pytest.raises(RuntimeError, match="without checking"):
        PlanningBudget().spend()
