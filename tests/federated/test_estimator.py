"""``federated.estimator``: PriRFed's parameters, validated declaratively before any charge.

Its behaviour (rounds, calibration, outputs, faults) is tested by the suites named after
it: ``test_prirfed*.py``, ``test_failed_runs.py``, ``test_trust_and_release.py``.
"""

import inspect

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from sklearn.utils._param_validation import InvalidParameterError

from geomstats_dp.federated import PriRFed
from geomstats_dp.privacy import PrivacyBudget

pytestmark = pytest.mark.backend_independent

SPACE = Hypersphere(2)
AGENTS = [np.array([[0.0, 0.0, 1.0], [0.0, 0.6, 0.8]])] * 2


def test_every_constructor_parameter_has_a_constraint():
    names = [name for name in inspect.signature(PriRFed.__init__).parameters
             if name != "self"]
    assert sorted(PriRFed._parameter_constraints) == sorted(names)


@pytest.mark.parametrize(("name", "value"), [
    ("space", "sphere"), ("loss", 3), ("epsilon", 0.0), ("epsilon", np.inf),
    ("delta", 1.0), ("n_rounds", 0), ("n_rounds", "many"), ("n_sampled", 1.5),
    ("local_steps", -1), ("local_method", "sgd"), ("clip_norm", -1.0),
    ("batch_size", 0), ("step_size", 0.0), ("output", "best"),
    ("aggregation", "median"), ("accountant", "basic"), ("engine", "ray"),
    ("round_timeout", 0.0), ("init_point", 1.0), ("budget", 1.0),
    ("random_state", -1), ("random_state", np.random.default_rng(0)),
    ("verbose", "yes"), ("record_failures", "no"),
])
def test_a_bad_parameter_is_refused_by_name_before_any_charge(name, value):
    budget = PrivacyBudget(1.0, 1e-5)
    params = {"clip_norm": 1.0, "budget": budget, name: value}
    space = params.pop("space", SPACE)
    estimator = PriRFed(space, **params)
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of PriRFed"):
        estimator.fit(AGENTS)
    assert budget.events == ()
    assert not hasattr(estimator, "estimate_")


def test_the_constructor_stores_its_parameters_unchanged():
    loss = object()
    estimator = PriRFed(SPACE, loss=loss, n_rounds="auto", random_state=3)
    assert estimator.loss is loss and estimator.n_rounds == "auto"
    assert estimator.get_params(deep=False)["random_state"] == 3
