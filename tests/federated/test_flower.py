"""PriRFed on Flower's simulation engine: the same estimate as the in-process engine.

One Ray run (about 10 s to start, then the 20 s a late agent is waited for): 3 agents,
3 rounds whose sampled agents all differ, a lambda loss (shipped to the workers by value),
an agent that raises in round 0 and one that answers too late in round 1, on both
engines; Flower and Ray print nothing.
"""

import logging
import math
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed, engine
from geomstats_dp.optim import canonical_point
from geomstats_dp.privacy import PrivacyBudget

pytest.importorskip("flwr")
flower_app = pytest.importorskip("geomstats_dp.federated.flower_app")

pytestmark = [pytest.mark.slow, pytest.mark.flower, pytest.mark.backend_independent]

SPACE = Hypersphere(2)
TIMEOUT_S = 20.0


@pytest.mark.filterwarnings("ignore:the 'numpy' backend cannot differentiate:UserWarning")
def test_flower_simulation_matches_the_local_engine_and_survives_faulty_agents(
        monkeypatch, capfd, caplog):
    rng = np.random.default_rng(0)
    data = [to_numpy(SPACE.projection(to_backend(np.array([0.0, 0.0, 1.0])
                                                 + 0.3 * rng.normal(size=(8, 3)))))
            for _ in range(3)]
    kwargs = dict(loss=lambda point, sample: gs.sum((point - sample) ** 2), epsilon=1.0,
                  n_rounds=3, n_sampled=2, local_steps=2, local_method="rgd", clip_norm=1.0,
                  random_state=5, round_timeout=TIMEOUT_S)
    sampled = PriRFed(SPACE, **kwargs).run_spec([8, 8, 8]).sample_agents()
    assert len({tuple(agents) for agents in sampled}) == 3  # each round other agents
    # round 0: an agent raises; round 1: an agent answers after the timeout (Flower) or
    # never (local engine)
    raising, silent = sampled[0][0], sampled[1][0]
    local_faults = {(0, raising): "raise", (1, silent): math.inf}
    flower_faults = {(0, raising): "raise", (1, silent): TIMEOUT_S + 5.0}
    run_local, run_flower = engine.run_local, flower_app.run_flower
    monkeypatch.setattr(engine, "run_local",
                        lambda run, datasets: run_local(run, datasets, local_faults))
    monkeypatch.setattr(flower_app, "run_flower",
                        lambda run, datasets: run_flower(run, datasets, flower_faults))
    local = PriRFed(SPACE, **kwargs).fit(data)
    capfd.readouterr()
    caplog.set_level(logging.DEBUG)
    budget = PrivacyBudget(1.0, 1e-5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flower = PriRFed(SPACE, engine="flower", budget=budget, **kwargs).fit(data)
    # no Ray, Flower or alembic line, log record or warning (only the library's own)
    assert capfd.readouterr() == ("", "")
    assert caplog.records == []
    assert [str(w.message) for w in caught if "geomstats_dp" not in w.filename] == []
    np.testing.assert_allclose(to_numpy(flower.estimate_), to_numpy(local.estimate_),
                               rtol=0, atol=1e-12)
    for fitted in (local, flower):
        assert [r["sampled"] for r in fitted.history_] == sampled
        assert [r["failed"] for r in fitted.history_] == [[raising], [silent], []]
        # each round aggregated the reply it had: the server moved and did not crash
        assert not np.allclose(fitted.history_[0]["point"], to_numpy(canonical_point(SPACE)))
        assert not np.allclose(fitted.history_[1]["point"], fitted.history_[0]["point"])
    # every sampled agent was counted: the whole run is charged, within the budget
    assert budget.spent_epsilon == pytest.approx(flower.guarantee_.epsilon)
    assert budget.spent_epsilon <= 1.0
