"""Privacy of PriRFed (federated Riemannian optimisation), Huang et al. 2024.

Each round the server samples s of N agents without replacement (rate rho = s / N); each
sampled agent runs a local training that is (epsilon, delta)-DP with respect to its own
records (record-level, replace-one adjacency); the server aggregates by a tangent mean
(post-processing). After T rounds:

- ``prirfed_theorem_4_2``: the paper's Theorem 4.2. Per round the s agents are composed
  sequentially, (s eps, s delta), then amplified by agent sampling: eps_r = log(1 + rho
  (e^{s eps} - 1)), delta_r = rho s delta; then advanced composition over T rounds,
  eps' = min(T eps_r, sqrt(2 T ln(1/delta_hat)) eps_r + T eps_r (e^{eps_r} - 1)),
  delta' = delta_hat + T delta_r (the printed sqrt(... eps_r) has eps_r outside the root,
  as the paper's Table 1 shows).
- ``prirfed_epsilon``: agents hold disjoint records, so one record reaches at most one
  agent per round (parallel composition): eps_r = log(1 + rho (e^eps - 1)), delta_r = rho
  delta (amplification by sampling without replacement, Balle, Barthe & Gaboardi 2018);
  the T rounds are then composed optimally (Kairouz, Oh & Viswanath 2015, Thm. 3.3, exact
  for T uses of an (eps_r, delta_r)-DP mechanism), at the same total delta' as Theorem 4.2
  unless told otherwise.
- ``prirfed_public_sampling`` (``PriRFed(accountant="public_sampling")``; the estimator's
  default is its tighter end-to-end version, ``privacy.federated_e2e``): the same
  parallel composition, without amplification in epsilon. Amplification by sampling (the
  two rules above) holds only against an observer who does not learn which agents were
  sampled; the server knows it and the rounds' sampled agents are published in
  ``PriRFed.history_``. Given the sampling, one record is seen in exactly the k rounds
  where its agent is sampled, k ~ Binomial(T, rho) independently of the data, so
  delta'(eps') = sum_k P(k) delta_k(eps') with delta_k the optimal composition of k local
  runs. This holds against the server too.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from geomstats_dp._validation import (
    check_positive_finite,
    check_positive_int,
    check_probability,
)


@dataclass(frozen=True)
class FederatedGuarantee:
    """The (epsilon', delta') of T PriRFed rounds and how they were obtained.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee of the whole run.
    round_epsilon, round_delta : float
        The guarantee of one round after agent sampling.
    method : str
        "public_sampling", "parallel_optimal" or "theorem_4_2".
    """

    epsilon: float
    delta: float
    round_epsilon: float
    round_delta: float
    method: str


def _check_setting(epsilon, delta, n_agents, n_sampled, n_rounds):
    epsilon = check_positive_finite(epsilon, "epsilon")
    delta = check_probability(delta, "delta", allow_zero=True)
    n_agents = check_positive_int(n_agents, "n_agents")
    n_sampled = check_positive_int(n_sampled, "n_sampled")
    if n_sampled > n_agents:
        raise ValueError(f"n_sampled must be <= n_agents={n_agents}, got {n_sampled}")
    return epsilon, delta, n_sampled / n_agents, n_sampled, check_positive_int(
        n_rounds, "n_rounds"
    )


def amplified_by_sampling(epsilon, delta, rate):
    """(log(1 + rate (e^epsilon - 1)), rate delta): an (epsilon, delta)-DP step applied to a
    subset that contains a given record with probability ``rate``."""
    return math.log1p(rate * math.expm1(epsilon)), rate * delta


def prirfed_theorem_4_2(epsilon, delta, n_agents, n_sampled, n_rounds, delta_hat=1e-3):
    """(epsilon', delta') of PriRFed by the paper's Theorem 4.2 (reproduces its Table 1).

    Parameters
    ----------
    epsilon, delta : float
        Guarantee of one agent's local training (record level).
    n_agents : int
        N.
    n_sampled : int
        s, agents sampled per round (without replacement).
    n_rounds : int
        T.
    delta_hat : float
        The slack of advanced composition, in (0, 1).

    Returns
    -------
    guarantee : FederatedGuarantee
        ``method="theorem_4_2"``; delta' = delta_hat + T rho s delta as printed.
    """
    epsilon, delta, rate, n_sampled, n_rounds = _check_setting(
        epsilon, delta, n_agents, n_sampled, n_rounds
    )
    delta_hat = check_probability(delta_hat, "delta_hat")
    round_epsilon, round_delta = amplified_by_sampling(
        n_sampled * epsilon, n_sampled * delta, rate
    )
    advanced = math.sqrt(2 * n_rounds * math.log(1 / delta_hat)) * round_epsilon + (
        n_rounds * round_epsilon * math.expm1(round_epsilon)
    )
    return FederatedGuarantee(
        epsilon=min(n_rounds * round_epsilon, advanced),
        delta=delta_hat + n_rounds * round_delta,
        round_epsilon=round_epsilon,
        round_delta=round_delta,
        method="theorem_4_2",
    )


def prirfed_epsilon(
    epsilon, delta, n_agents, n_sampled, n_rounds, delta_hat=1e-3, target_delta=None
):
    """(epsilon', delta') of PriRFed by parallel and optimal composition.

    Parameters
    ----------
    epsilon, delta, n_agents, n_sampled, n_rounds, delta_hat
        As in ``prirfed_theorem_4_2``.
    target_delta : float, optional
        The total delta' at which epsilon' is stated; by default Theorem 4.2's delta'
        (delta_hat + T rho s delta), so that the two are compared at the same delta'.

    Returns
    -------
    guarantee : FederatedGuarantee
        ``method="parallel_optimal"``; never larger than Theorem 4.2 at the same delta'.
    """
    epsilon, delta, rate, n_sampled, n_rounds = _check_setting(
        epsilon, delta, n_agents, n_sampled, n_rounds
    )
    if target_delta is None:
        target_delta = prirfed_theorem_4_2(
            epsilon, delta, n_agents, n_sampled, n_rounds, delta_hat
        ).delta
    target_delta = check_probability(target_delta, "target_delta")
    round_epsilon, round_delta = amplified_by_sampling(epsilon, delta, rate)
    return FederatedGuarantee(
        epsilon=optimal_composition_epsilon(round_epsilon, round_delta, n_rounds, target_delta),
        delta=target_delta,
        round_epsilon=round_epsilon,
        round_delta=round_delta,
        method="parallel_optimal",
    )


def optimal_composition_delta(epsilon, delta, n_compositions, total_epsilon):
    """Smallest delta' such that k (epsilon, delta)-DP mechanisms are (total_epsilon, delta')-DP.

    Kairouz, Oh & Viswanath (2015, Thm. 3.3): the k-fold composition is dominated by that
    of randomized response, so delta' = 1 - (1 - delta)^k (1 - d), with d the hockey-stick
    divergence at total_epsilon of k-fold randomized response:
    d = P[B <= L] - e^{total_epsilon} P[B' <= L], B ~ Bin(k, 1/(1+e^eps)),
    B' ~ Bin(k, e^eps/(1+e^eps)), L the largest l with (k - 2l) eps > total_epsilon.

    Parameters
    ----------
    epsilon, delta : float
        Guarantee of each mechanism.
    n_compositions : int or array-like of int
        k (0 gives 0).
    total_epsilon : float
        Non-negative.

    Returns
    -------
    delta : float, or numpy.ndarray with the shape of ``n_compositions``
    """
    k = np.asarray(n_compositions)
    largest = np.ceil((k - total_epsilon / epsilon) / 2) - 1
    flip = 1.0 / (1.0 + math.exp(epsilon))
    hockey_stick = stats.binom.cdf(largest, k, flip) - math.exp(total_epsilon) * (
        stats.binom.cdf(largest, k, 1.0 - flip)
    )
    hockey_stick = np.where(largest < 0, 0.0, np.clip(hockey_stick, 0.0, 1.0))
    with np.errstate(divide="ignore"):  # hockey_stick = 1: log1p(-1) = -inf, delta' = 1
        result = np.maximum(-np.expm1(k * math.log1p(-delta) + np.log1p(-hockey_stick)), 0.0)
    return float(result) if result.ndim == 0 else result


def optimal_composition_epsilon(epsilon, delta, n_compositions, target_delta):
    """Smallest total epsilon of k (epsilon, delta)-DP mechanisms at ``target_delta``.

    Inverts ``optimal_composition_delta`` (non-increasing in total_epsilon) by Brent's
    method.

    Parameters
    ----------
    epsilon, delta : float
        Guarantee of each mechanism.
    n_compositions : int
        k.
    target_delta : float
        In (0, 1).

    Returns
    -------
    epsilon : float
        Infinite when ``target_delta < 1 - (1 - delta)^k`` (no epsilon suffices).
    """
    return _smallest_epsilon(
        lambda total: optimal_composition_delta(epsilon, delta, n_compositions, total),
        n_compositions * epsilon, target_delta,
    )


def _smallest_epsilon(delta_of, largest, target_delta):
    """Smallest epsilon in [0, largest] with ``delta_of(epsilon) <= target_delta``
    (``delta_of`` non-increasing; inf when even ``largest`` is not enough)."""

    def excess(total_epsilon):
        return delta_of(total_epsilon) - target_delta

    if excess(largest) > 0:
        return math.inf
    if excess(0.0) <= 0:
        return 0.0
    root = optimize.brentq(excess, 0.0, largest, xtol=1e-12 * largest)
    return root if excess(root) <= 0 else root + 1e-12 * largest


def prirfed_public_sampling(epsilon, delta, n_agents, n_sampled, n_rounds, target_delta):
    """(epsilon', delta') of PriRFed when the sampled agents are public.

    One record is seen only by its agent's local training, in the k ~ Binomial(T, s/N)
    rounds where that agent is sampled; k is public and independent of the data, so the
    hockey-stick divergence of the run is the average over k of that of k composed local
    runs: delta'(eps') = sum_k P(k) optimal_composition_delta(eps, delta, k, eps').
    No amplification in epsilon is claimed, so the bound holds whoever learns the sampled
    agents (the server, a reader of ``PriRFed.history_``).

    Parameters
    ----------
    epsilon, delta : float
        Guarantee of one agent's local training (record level, replace-one).
    n_agents, n_sampled, n_rounds : int
        N, s and T.
    target_delta : float
        The total delta', in (0, 1).

    Returns
    -------
    guarantee : FederatedGuarantee
        ``method="public_sampling"``; round_epsilon, round_delta = (eps, rho delta).
    """
    epsilon, delta, rate, n_sampled, n_rounds = _check_setting(
        epsilon, delta, n_agents, n_sampled, n_rounds
    )
    target_delta = check_probability(target_delta, "target_delta")
    participations = np.arange(n_rounds + 1)
    weights = stats.binom.pmf(participations, n_rounds, rate)

    def delta_of(total_epsilon):
        deltas = optimal_composition_delta(epsilon, delta, participations, total_epsilon)
        return float(np.dot(weights, deltas))

    return FederatedGuarantee(
        epsilon=_smallest_epsilon(delta_of, n_rounds * epsilon, target_delta),
        delta=target_delta,
        round_epsilon=epsilon,
        round_delta=rate * delta,
        method="public_sampling",
    )


FEDERATED_ACCOUNTANTS = ("public_sampling", "parallel_optimal", "theorem_4_2")
AMPLIFYING_ACCOUNTANTS = ("parallel_optimal", "theorem_4_2")


def local_target(epsilon, delta, n_agents, n_sampled, n_rounds, accountant="public_sampling"):
    """The local (epsilon, delta) each agent's training must meet for a total (epsilon, delta).

    The user states the guarantee of the whole run; this inverts the accountant (Brent's
    method on log epsilon_local; both totals increase with epsilon_local). Half of the
    total delta goes to the local deltas (T rho delta_l, or T rho s delta_l for Theorem
    4.2), the other half to the composition (its delta_hat).

    Parameters
    ----------
    epsilon, delta : float
        Target of the whole run.
    n_agents, n_sampled, n_rounds : int
        N, s and T.
    accountant : {"public_sampling", "parallel_optimal", "theorem_4_2"}
        ``prirfed_public_sampling`` (default), ``prirfed_epsilon`` or
        ``prirfed_theorem_4_2`` (the last two amplify by agent sampling: only valid when
        the sampled agents stay secret).

    Returns
    -------
    local_epsilon, local_delta : float
    guarantee : FederatedGuarantee
        The total of the run at that local guarantee (epsilon <= the target, delta <= it).
    """
    epsilon = check_positive_finite(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    if accountant not in FEDERATED_ACCOUNTANTS:
        raise ValueError(
            f"accountant must be one of {FEDERATED_ACCOUNTANTS}, got {accountant!r}"
        )
    _, _, rate, n_sampled, n_rounds = _check_setting(
        epsilon, delta, n_agents, n_sampled, n_rounds
    )
    if accountant == "theorem_4_2":
        local_delta = delta / (2 * n_rounds * rate * n_sampled) * (1 - 1e-9)

        def total(local_epsilon):
            return prirfed_theorem_4_2(local_epsilon, local_delta, n_agents, n_sampled,
                                       n_rounds, delta_hat=delta / 2)
    elif accountant == "public_sampling":
        local_delta = delta / (2 * n_rounds * rate) * (1 - 1e-9)

        def total(local_epsilon):
            return prirfed_public_sampling(local_epsilon, local_delta, n_agents, n_sampled,
                                           n_rounds, target_delta=delta)
    else:
        local_delta = delta / (2 * n_rounds * rate) * (1 - 1e-9)

        def total(local_epsilon):
            try:
                return prirfed_epsilon(local_epsilon, local_delta, n_agents, n_sampled,
                                       n_rounds, target_delta=delta)
            except (OverflowError, ValueError):  # numerical range: basic composition
                round_epsilon, round_delta = amplified_by_sampling(
                    local_epsilon, local_delta, rate
                )
                return FederatedGuarantee(n_rounds * round_epsilon, delta, round_epsilon,
                                          round_delta, "parallel_basic")

    def excess(log_epsilon):
        try:
            return total(math.exp(log_epsilon)).epsilon - epsilon
        except (OverflowError, ValueError):  # numerical range of the composition
            return math.inf

    low, high = math.log(epsilon) - 40.0, math.log(min(epsilon * 1e3, 100.0))
    if excess(low) > 0:
        raise ValueError(f"no local epsilon meets the total epsilon={epsilon}")
    if excess(high) <= 0:
        log_epsilon = high
    else:
        log_epsilon = optimize.brentq(excess, low, high, xtol=1e-10)
        while excess(log_epsilon) > 0:
            log_epsilon -= 1e-9
    local_epsilon = math.exp(log_epsilon)
    return local_epsilon, local_delta, total(local_epsilon)
