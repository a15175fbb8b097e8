"""PriRFed.deployment_config: the run configuration of a deployment charges the budget."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp.federated import PriRFed
from geomstats_dp.privacy import PrivacyBudget

pytest.importorskip("flwr")
flower_deploy = pytest.importorskip("geomstats_dp.federated.flower_deploy")

pytestmark = [pytest.mark.flower, pytest.mark.backend_independent]

KWARGS = {"epsilon": 1.0, "delta": 1e-5, "n_rounds": 3, "n_sampled": 2, "local_steps": 2,
          "local_method": "rsgd", "clip_norm": 0.5, "batch_size": 4, "step_size": 0.2,
          "output": "random", "accountant": "theorem_4_2", "random_state": 7,
          "round_timeout": 30.0}


def test_flat_config_describes_the_same_run_and_charges_it():
    budget = PrivacyBudget(2.0, 1e-5)
    estimator = PriRFed(Hypersphere(3), budget=budget, **KWARGS)
    config = estimator.deployment_config([10, 12, 14], "release.npy")
    assert budget.spent_epsilon == pytest.approx(estimator.guarantee_.epsilon)
    rebuilt = flower_deploy.estimator_from_config(config)
    for name, value in KWARGS.items():
        assert rebuilt.get_params()[name] == value, name
    assert rebuilt.space.dim == 3
    assert flower_deploy.sizes_from_config(config) == [10, 12, 14]
    mine = estimator.run_spec([10, 12, 14])
    theirs = rebuilt.run_spec([10, 12, 14])
    assert mine.sample_agents() == theirs.sample_agents()
    assert [p.noise_multipliers for p, _ in mine.plans] == [
        p.noise_multipliers for p, _ in theirs.plans
    ]


def test_load_release_needs_the_charge_first(tmp_path):
    path = tmp_path / "release.npy"
    np.save(path, np.array([0.0, 0.0, 0.0, 1.0]))
    estimator = PriRFed(Hypersphere(3), **KWARGS)
    with pytest.raises(RuntimeError, match="deployment_config first"):
        estimator.load_release(path)
    estimator.deployment_config([10, 12], path)
    np.testing.assert_array_equal(np.asarray(estimator.load_release(path).estimate_),
                                  np.load(path))


@pytest.mark.parametrize(
    ("space", "kwargs", "message"),
    [
        (SPDMatrices(2), {}, "only a Hypersphere"),
        (Hypersphere(2), {"clip_norm": None}, "clip_norm must be given"),
        (Hypersphere(2), {"estimator": "no_colon"}, "module:function"),
    ],
)
def test_a_config_that_cannot_describe_the_run_refuses_before_charging(space, kwargs, message):
    budget = PrivacyBudget(2.0, 1e-5)
    estimator_name = kwargs.pop("estimator", None)
    estimator = PriRFed(space, budget=budget, **dict(KWARGS, **kwargs))
    with pytest.raises(ValueError, match=message):
        estimator.deployment_config([10, 12], "release.npy", estimator=estimator_name)
    assert budget.spent_epsilon == 0.0
