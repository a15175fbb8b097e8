"""PriRFed: Theorem 4.2 reproduces the paper's Table 1; the library's bound is tighter."""

import math

import pytest
from scipy.special import comb

from geomstats_dp.privacy import (
    optimal_composition_epsilon,
    prirfed_epsilon,
    prirfed_public_sampling,
    prirfed_theorem_4_2,
)
from geomstats_dp.privacy.federated import optimal_composition_delta

pytestmark = pytest.mark.backend_independent

# Table 1 of Huang et al. 2024: (epsilon, delta) = (0.15, 1e-4), delta_hat = 1e-3; rows (N, s),
# columns T = 50, 100, 200, 300, 400, 500, cells (epsilon', delta') to three digits.
ROUNDS = (50, 100, 200, 300, 400, 500)
TABLE_1 = {
    (100, 1): [(4.26e-2, 1.05e-3), (6.04e-2, 1.10e-3), (8.55e-2, 1.20e-3),
               (1.05e-1, 1.30e-3), (1.21e-1, 1.40e-3), (1.36e-1, 1.50e-3)],
    (100, 5): [(1.58, 2.25e-3), (2.32, 3.50e-3), (3.46, 6.00e-3),
               (4.41, 8.50e-3), (5.25, 1.10e-2), (6.03, 1.35e-2)],
    (200, 1): [(2.13e-2, 1.03e-3), (3.01e-2, 1.05e-3), (4.26e-2, 1.10e-3),
               (5.23e-2, 1.15e-3), (6.04e-2, 1.20e-3), (6.76e-2, 1.25e-3)],
    (500, 5): [(2.98e-1, 1.25e-3), (4.25e-1, 1.50e-3), (6.09e-1, 2.00e-3),
               (7.52e-1, 2.50e-3), (8.75e-1, 3.00e-3), (9.85e-1, 3.50e-3)],
    (300, 5): [(5.02e-1, 1.42e-3), (7.20e-1, 1.83e-3), (1.04, 2.67e-3),
               (1.29, 3.50e-3), (1.51, 4.33e-3), (1.70, 5.17e-3)],
    (300, 10): [(3.52, 2.67e-3), (5.36, 4.33e-3), (8.32, 7.67e-3),
                (1.09e1, 1.10e-2), (1.33e1, 1.43e-2), (1.55e1, 1.77e-2)],
    (400, 5): [(3.74e-1, 1.31e-3), (5.35e-1, 1.63e-3), (7.68e-1, 2.25e-3),
               (9.51e-1, 2.88e-3), (1.11, 3.50e-3), (1.25, 4.13e-3)],
    (400, 10): [(2.56, 2.25e-3), (3.83, 3.50e-3), (5.84, 6.00e-3),
                (7.55, 8.50e-3), (9.11, 1.10e-2), (1.06e1, 1.35e-2)],
}
CELLS = [
    (n_agents, n_sampled, n_rounds, cell)
    for (n_agents, n_sampled), row in TABLE_1.items()
    for n_rounds, cell in zip(ROUNDS, row)
]


def half_unit_of_last_digit(value):
    """The rounding error of a value printed with three significant digits."""
    return 0.5 * 10 ** (math.floor(math.log10(value)) - 2)


@pytest.mark.parametrize(("n_agents", "n_sampled", "n_rounds", "cell"), CELLS)
def test_theorem_4_2_reproduces_table_1(n_agents, n_sampled, n_rounds, cell):
    result = prirfed_theorem_4_2(0.15, 1e-4, n_agents, n_sampled, n_rounds, delta_hat=1e-3)
    for value, printed in zip((result.epsilon, result.delta), cell):
        assert abs(value - printed) <= half_unit_of_last_digit(printed) * (1 + 1e-9)


@pytest.mark.parametrize(("n_agents", "n_sampled", "n_rounds", "cell"), CELLS)
def test_library_bound_is_no_larger_at_the_same_delta(n_agents, n_sampled, n_rounds, cell):
    theorem = prirfed_theorem_4_2(0.15, 1e-4, n_agents, n_sampled, n_rounds)
    tight = prirfed_epsilon(0.15, 1e-4, n_agents, n_sampled, n_rounds)
    assert tight.delta == pytest.approx(theorem.delta, rel=1e-12)
    assert tight.epsilon <= theorem.epsilon


def test_optimal_composition_matches_kairouz_oh_viswanath_at_their_grid():
    # KOV (2015) Thm. 3.3: k-fold (eps, delta)-DP is ((k - 2i) eps, 1 - (1-delta)^k
    # (1 - delta_i))-DP with delta_i = sum_{l<i} C(k,l)(e^{(k-l)eps} - e^{(k-2i+l)eps})
    # / (1 + e^eps)^k, computed here from the printed sum.
    epsilon, delta, k = 0.2, 1e-6, 30
    for i in (3, 8, 12):
        delta_i = sum(
            comb(k, l) * (math.exp((k - l) * epsilon) - math.exp((k - 2 * i + l) * epsilon))
            for l in range(i)
        ) / (1 + math.exp(epsilon)) ** k
        expected = 1 - (1 - delta) ** k * (1 - delta_i)
        computed = optimal_composition_delta(epsilon, delta, k, (k - 2 * i) * epsilon)
        assert computed == pytest.approx(expected, rel=1e-9)


def test_optimal_composition_edge_cases():
    assert optimal_composition_epsilon(0.5, 1e-6, 1, 1e-6) == pytest.approx(0.5, rel=1e-9)
    # No epsilon helps when target delta < 1 - (1 - delta)^k.
    assert optimal_composition_epsilon(0.5, 1e-3, 10, 1e-3) == math.inf
    # Better than basic composition (k eps at k delta = 5e-5) with a little more delta.
    assert optimal_composition_epsilon(0.1, 1e-6, 50, 1e-4) < 50 * 0.1


@pytest.mark.parametrize(
    ("arguments", "name"),
    [((0.15, 1e-4, 10, 20, 5), "n_sampled"), ((0.15, 1e-4, 10, 2, 0), "n_rounds")],
)
def test_federated_rejects_bad_input(arguments, name):
    with pytest.raises(ValueError, match=name):
        prirfed_theorem_4_2(*arguments)


# -- the local target of a total guarantee (the end-to-end accountant: test_federated_e2e.py)


def _composed_hockey_stick(epsilon, delta, n_rounds, rate, total_epsilon):
    """Brute force: the dominating pair of an (epsilon, delta)-DP run (Kairouz et al.),
    composed over every public participation pattern of T rounds at rate rho."""
    import itertools

    import numpy as np

    e = math.exp(epsilon)
    p = np.array([delta, (1 - delta) * e / (1 + e), (1 - delta) / (1 + e), 0.0])
    q = p[::-1]
    total = 0.0
    for pattern in itertools.product((0, 1), repeat=n_rounds):
        k = sum(pattern)
        weight = rate**k * (1 - rate) ** (n_rounds - k)
        joint_p, joint_q = np.ones(1), np.ones(1)
        for _ in range(k):
            joint_p, joint_q = np.outer(joint_p, p).ravel(), np.outer(joint_q, q).ravel()
        total += weight * np.maximum(joint_p - math.exp(total_epsilon) * joint_q, 0).sum()
    return total


def test_public_sampling_matches_brute_force_composition():
    result = prirfed_public_sampling(0.5, 1e-3, 3, 1, 5, target_delta=0.05)
    assert result.method == "public_sampling"
    brute = _composed_hockey_stick(0.5, 1e-3, 5, 1 / 3, result.epsilon)
    assert brute == pytest.approx(0.05, rel=1e-6)
    assert _composed_hockey_stick(0.5, 1e-3, 5, 1 / 3, 0.99 * result.epsilon) > 0.05
    # no amplification in epsilon: never below one local run; above the hidden rule
    hidden = prirfed_epsilon(0.5, 1e-3, 3, 1, 5, target_delta=0.05).epsilon
    assert hidden < result.epsilon


@pytest.mark.parametrize("accountant", ["public_sampling", "parallel_optimal", "theorem_4_2"])
def test_local_target_meets_the_total(accountant):
    from geomstats_dp.privacy.federated import local_target

    local_epsilon, local_delta, total = local_target(1.0, 1e-5, 10, 3, 20, accountant)
    assert 1.0 * (1 - 1e-6) <= total.epsilon <= 1.0
    assert total.delta <= 1e-5
    rule = {"public_sampling": prirfed_public_sampling, "parallel_optimal": prirfed_epsilon,
            "theorem_4_2": prirfed_theorem_4_2}[accountant]
    kwargs = {"delta_hat": 5e-6} if accountant == "theorem_4_2" else {"target_delta": 1e-5}
    assert rule(local_epsilon, local_delta, 10, 3, 20, **kwargs).epsilon == pytest.approx(
        total.epsilon, rel=1e-12
    )
    # the tighter rule leaves each agent more local epsilon than Theorem 4.2
    if accountant == "parallel_optimal":
        assert local_epsilon > local_target(1.0, 1e-5, 10, 3, 20, "theorem_4_2")[0]


def test_parallel_optimal_matches_brute_force_composition_of_the_amplified_rounds():
    # each round: one record reaches one agent, sampled with rate s / N (Balle et al. 2018:
    # log(1 + rate (e^eps - 1)), rate delta); the T rounds composed by brute force
    epsilon, delta, n_agents, n_rounds = 0.5, 1e-3, 3, 5
    rate = 1 / n_agents
    result = prirfed_epsilon(epsilon, delta, n_agents, 1, n_rounds, target_delta=0.05)
    round_epsilon = math.log(1 + rate * (math.exp(epsilon) - 1))
    brute = _composed_hockey_stick(round_epsilon, rate * delta, n_rounds, 1.0, result.epsilon)
    assert brute == pytest.approx(0.05, rel=1e-6)
    assert _composed_hockey_stick(round_epsilon, rate * delta, n_rounds, 1.0,
                                  0.99 * result.epsilon) > 0.05
