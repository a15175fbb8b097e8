"""PriRFed on Flower's simulation engine: the same estimate as the in-process engine.

One Ray run (about 5 s to start and a few seconds per round): 3 agents, 2 rounds, with an
agent that fails in round 1 on both engines.
"""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed
from geomstats_dp.federated import estimator as estimator_module
from geomstats_dp.privacy import PrivacyBudget

pytest.importorskip("flwr")
flower_app = pytest.importorskip("geomstats_dp.federated.flower_app")

pytestmark = [pytest.mark.slow, pytest.mark.flower, pytest.mark.backend_independent]

SPACE = Hypersphere(2)
FAIL = {(1, 0), (1, 1), (1, 2)}


def test_flower_simulation_matches_the_local_engine_and_survives_a_failing_agent(
    monkeypatch,
):
    rng = np.random.default_rng(0)
    data = [to_numpy(SPACE.projection(to_backend(np.array([0.0, 0.0, 1.0])
                                                 + 0.3 * rng.normal(size=(8, 3)))))
            for _ in range(3)]
    kwargs = dict(epsilon=1.0, n_rounds=2, n_sampled=2, local_steps=2, local_method="rgd",
                  clip_norm=1.0, random_state=4)
    run_local, run_flower = estimator_module.run_local, flower_app.run_flower
    monkeypatch.setattr(estimator_module, "run_local", lambda run: run_local(run, FAIL))
    monkeypatch.setattr(flower_app, "run_flower", lambda run: run_flower(run, FAIL))
    local = PriRFed(SPACE, **kwargs).fit(data)
    budget = PrivacyBudget(1.0, 1e-5)
    flower = PriRFed(SPACE, engine="flower", budget=budget, **kwargs).fit(data)
    np.testing.assert_allclose(to_numpy(flower.estimate_), to_numpy(local.estimate_),
                               rtol=0, atol=1e-12)
    assert [r["sampled"] for r in flower.history_] == [r["sampled"] for r in local.history_]
    # round 1: every sampled agent raised; the server kept its point and did not crash
    assert flower.history_[1]["failed"] == flower.history_[1]["sampled"]
    np.testing.assert_array_equal(flower.history_[1]["point"], flower.history_[0]["point"])
    # every sampled agent was counted: the whole run is charged, within the budget
    assert budget.spent_epsilon == pytest.approx(flower.guarantee_.epsilon)
    assert budget.spent_epsilon <= 1.0
