"""``federated.run``: the run's frozen spec, run by the one pipeline without an estimator."""

import dataclasses

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.federated import PriRFed, engine
from geomstats_dp.federated.run import public_history
from geomstats_dp.learning.mechanisms.base import Mechanism, run_release
from geomstats_dp.privacy import ApproxDPEvent, PrivacyBudget

pytestmark = pytest.mark.backend_independent

SPACE = Hypersphere(2)
HISTORY = [{"sampled": [0, 1], "failed": [1], "point": np.array([0.0, 0.6, 0.8])},
           {"sampled": [0, 1], "failed": [], "point": np.array([0.0, 0.0, 1.0])}]


def spec(**params):
    params = {"n_rounds": 2, "local_steps": 1, "local_method": "tangent_mean",
              "clip_norm": 1.0, "output": "last", "accountant": "public_sampling",
              "random_state": 0, **params}
    return PriRFed(SPACE, **params).run_spec([5, 6])


def test_the_spec_is_a_frozen_mechanism_of_public_quantities():
    run = spec()
    assert isinstance(run, Mechanism) and run.charged_if_raises
    assert run.events() == (run.event,)
    assert isinstance(run.event, ApproxDPEvent)
    assert run.sizes == (5, 6) and len(run.plans) == 2
    assert "datasets" not in {field.name for field in dataclasses.fields(run)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.n_rounds = 3


def test_the_pipeline_releases_the_final_point_and_the_public_history(monkeypatch):
    monkeypatch.setattr(engine, "run_local", lambda run, datasets: HISTORY)
    budget = PrivacyBudget(5.0, 1e-4)
    run = spec()
    fitted = run_release(run, budget, [None, None], None)
    np.testing.assert_array_equal(np.asarray(fitted["estimate_"]), HISTORY[-1]["point"])
    assert fitted["history_"] == HISTORY
    assert fitted["events_"] == (run.event,) and budget.events == (run.event,)
    hidden = run_release(spec(accountant="theorem_4_2"), PrivacyBudget(5.0, 1e-4),
                         [None, None], None)
    assert hidden["history_"] == [{"point": record["point"]} for record in HISTORY]


class _Raising(Mechanism):
    def events(self):
        return (ApproxDPEvent(0.5, 1e-6),)

    def release(self, data, weights, rng):
        raise RuntimeError("after the noise")


def test_a_run_that_raises_is_charged_and_another_mechanism_is_not(monkeypatch):
    def fails(run, datasets):
        raise RuntimeError("an agent's reply may have left")

    monkeypatch.setattr(engine, "run_local", fails)
    budget, run = PrivacyBudget(5.0, 1e-4), spec()
    with pytest.raises(RuntimeError, match="reply may have left"):
        run_release(run, budget, [None, None], None)
    assert budget.events == (run.event,)
    other = PrivacyBudget(5.0, 1e-4)
    with pytest.raises(RuntimeError, match="after the noise"):
        run_release(_Raising(), other, None, None)
    assert other.events == ()


@pytest.mark.parametrize(("accountant", "record_failures", "keys"), [
    ("end_to_end", True, {"sampled", "failed", "point"}),
    ("public_sampling", False, {"sampled", "point"}),
    ("parallel_optimal", True, {"point"}),
    ("theorem_4_2", False, {"point"}),
])
def test_public_history_withholds_what_the_guarantee_needs_hidden(accountant,
                                                                  record_failures, keys):
    history = public_history(HISTORY, accountant, record_failures)
    assert [set(record) for record in history] == [keys] * len(HISTORY)
    assert [record["point"] is old["point"] for record, old in zip(history, HISTORY)] == [
        True, True]


def test_agents_are_sampled_without_replacement_from_the_server_seed():
    rounds = spec(n_sampled=1, n_rounds=40).sample_agents()
    assert all(len(agents) == 1 and agents[0] in (0, 1) for agents in rounds)
    assert {agents[0] for agents in rounds} == {0, 1}
    assert rounds == spec(n_sampled=1, n_rounds=40).sample_agents()
    assert rounds != dataclasses.replace(spec(n_sampled=1, n_rounds=40),
                                         entropy=1).sample_agents()
