"""``federated.calibration``: the agents' local plans meet the run's total guarantee."""

import math

import pytest

from geomstats_dp.federated.calibration import Calibration
from geomstats_dp.federated.defaults import RunSettings
from geomstats_dp.privacy import compose_epsilon

pytestmark = pytest.mark.backend_independent

SIZES = [20, 30, 40]


def settings(method="tangent_mean", n_rounds=3, n_sampled=3, local_steps=2):
    return RunSettings(method, n_rounds, n_sampled, local_steps, "last")


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_end_to_end_total_is_the_exact_composition_of_a_records_releases(epsilon):
    """With every agent sampled, a record's releases are its agent's T K full-batch
    Gaussian steps: composed independently (``compose_epsilon``) they meet the target."""
    calibration = Calibration(epsilon, 1e-5, "end_to_end", dim=2)
    run = settings()
    guarantee = calibration.local_target(SIZES, run)[2]
    assert guarantee.epsilon == pytest.approx(epsilon, rel=1e-3)
    assert guarantee.epsilon <= epsilon * (1 + 1e-9)
    for ledger in calibration.record_ledgers(SIZES, run):
        assert sum(event.n_steps for event in ledger) == run.n_rounds * run.local_steps
        assert compose_epsilon(ledger, 1e-5) == pytest.approx(guarantee.epsilon, rel=1e-3)


def test_record_ledgers_are_the_local_plans_repeated_each_round():
    calibration = Calibration(1.0, 1e-5, "public_sampling", dim=2)
    run = settings("rsgd", n_rounds=4, local_steps=3)
    local_epsilon, local_delta, _ = calibration.local_target(SIZES, run)
    local = calibration.agent_events(run, local_epsilon, local_delta, SIZES)
    ledgers = calibration.record_ledgers(SIZES, run)
    assert len(ledgers) == len({tuple(events) for events in local})
    for ledger, events in zip(ledgers, local):
        assert [event.n_steps for event in ledger] == [4 * event.n_steps for event in events]
        assert [event.noise_multiplier for event in ledger] == [
            event.noise_multiplier for event in events]
        assert all(event.sensitivity is None for event in ledger)


def test_the_default_batch_size_is_the_smallest_agents_and_is_bounded_by_it():
    calibration = Calibration(1.0, 1e-5, "public_sampling", dim=2)
    assert calibration.agents_batch_size(SIZES) == calibration.agents_batch_size([20])
    too_large = Calibration(1.0, 1e-5, "public_sampling", dim=2, batch_size=25)
    with pytest.raises(ValueError, match=r"batch_size must be <= the smallest agent's "
                                         r"size 20, got 25"):
        too_large.local_target(SIZES, settings("rsgd"))


def test_the_event_states_the_accountants_total():
    calibration = Calibration(1.0, 1e-5, "theorem_4_2", dim=2)
    run = settings(n_sampled=2)
    _, _, guarantee = calibration.local_target(SIZES, run)
    event = calibration.event(guarantee, run)
    assert (event.epsilon, event.delta) == (guarantee.epsilon, guarantee.delta)
    assert event.epsilon <= 1.0 * (1 + 1e-9) and math.isfinite(event.epsilon)
    assert "theorem_4_2" in event.label and "tangent_mean" in event.label
