"""The end-to-end accountant of PriRFed: every local step of the record's agent composed
over the rounds that sample it."""

import math

import pytest
from scipy import optimize, stats

from geomstats_dp.privacy import GaussianEvent
from geomstats_dp.privacy.federated_e2e import prirfed_end_to_end_epsilon
from geomstats_dp.privacy.renyi import ledger_epsilon

pytestmark = pytest.mark.backend_independent


@pytest.mark.parametrize("sampling", ["public", "hidden"])
def test_end_to_end_without_agent_sampling_composes_all_local_steps(sampling):

    local = (GaussianEvent(5.0, 10),)
    # s = N: every round sees the record's agent, T K full-batch steps composed exactly
    # (Gaussian DP, checked against an independent calibration in
    # tests/federated/test_defaults.py), below their RDP composition
    value = prirfed_end_to_end_epsilon(local, 10, 10, 20, 1e-5, sampling)
    assert value < 0.95 * ledger_epsilon((GaussianEvent(5.0, 200),), 1e-5)
    assert value == prirfed_end_to_end_epsilon(local, 10, 10, 20, 1e-5, "public")


def test_end_to_end_public_sampling_averages_the_participations():

    local, n_rounds, rate, delta = (GaussianEvent(5.0, 10),), 20, 0.2, 1e-5
    public = prirfed_end_to_end_epsilon(local, 10, 2, n_rounds, delta)
    hidden = prirfed_end_to_end_epsilon(local, 10, 2, n_rounds, delta, "hidden")
    full = prirfed_end_to_end_epsilon(local, 10, 10, n_rounds, delta)
    assert hidden < public < full  # amplification needs the sampled agents to be secret

    def delta_of_k(k):  # independent: invert the ledger's epsilon(delta) of k local runs
        if k == 0:
            return 0.0
        events = (GaussianEvent(5.0, 10 * k),)

        def excess(log_delta):
            return ledger_epsilon(events, math.exp(log_delta)) - public

        if excess(-600.0) <= 0:
            return 0.0
        return math.exp(optimize.brentq(excess, -600.0, math.log(0.999), xtol=1e-10))

    mixture = sum(stats.binom.pmf(k, n_rounds, rate) * delta_of_k(k)
                  for k in range(n_rounds + 1))
    assert mixture == pytest.approx(delta, rel=0.02)
