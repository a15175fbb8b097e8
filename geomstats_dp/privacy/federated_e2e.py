"""End-to-end accounting of PriRFed: the path of one record through the whole run.

Agents hold disjoint records, so in a round one record can only reach the agent that holds
it, and that agent is sampled with probability rho = s / N (s of N agents drawn without
replacement). Given that it is sampled, the record is seen by that agent's K local noisy
steps only (with the agent's own batch sampling). Adjacency is record-level, replace-one
within an agent. One local run has an RDP curve R (the sum of the curves of its local
Gaussian steps, ``privacy.renyi``). The server's aggregation is post-processing. A sampled
agent whose reply is lost may still have released: every sampled agent is counted (the
bounds do not look at replies).

- ``sampling="public"`` (sound whoever learns the sampled agents: the server, a reader of
  ``PriRFed.history_``): the record's agent takes part in k ~ Binomial(T, rho) rounds,
  public and independent of the data, so delta(eps) = sum_k P(k) delta_k(eps), with
  delta_k the RDP-to-DP conversion of k R (Balle et al. 2020, Thm. 21) at its best order.
- ``sampling="hidden"`` (only against an observer who does not learn the sampled agents):
  one round is R amplified by sampling without replacement at rate rho (Wang, Balle &
  Kasiviswanathan 2019, general bound, through autodp's
  ``AmplificationBySampling(PoissonSampling=False)`` on a replace-one base mechanism); the
  T rounds compose additively in RDP.

With full participation (s = N) both are the T-fold composition of the local events, which
``privacy.compose_epsilon`` composes (exactly in Gaussian DP for full-batch local steps,
Dong, Roth & Su 2022; in RDP otherwise).
"""

import dataclasses
import functools
import math

import numpy as np
from autodp import autodp_core, transformer_zoo

from scipy import optimize, stats

from geomstats_dp._validation import check_positive_finite, check_positive_int, check_probability
from geomstats_dp.privacy.accountant import compose_epsilon
from geomstats_dp.privacy.events import GaussianEvent
from geomstats_dp.privacy.federated import _smallest_epsilon
from geomstats_dp.privacy.renyi import (
    ORDERS,
    _quiet,
    conversion_offset,
    ledger_rdp,
    minimise_over_orders,
)
from geomstats_dp.privacy.subsampled_rdp import poisson_rdp, without_replacement_rdp


def _local_rdp(local_events):
    """alpha -> RDP of one agent's local run (a sum over its Gaussian events), any order."""

    @functools.lru_cache(maxsize=None)
    def rdp(alpha):
        if math.isinf(alpha):  # autodp asks for the pure-DP limit: none for a Gaussian
            return math.inf
        total = 0.0
        for event in local_events:
            gaussian = alpha / (2.0 * event.noise_multiplier**2)
            if event.subsampled:
                bound = poisson_rdp if event.sampling == "poisson" else without_replacement_rdp
                with _quiet():
                    value = float(bound(event.noise_multiplier, event.sampling_rate,
                                        np.array([alpha]))[0])
                gaussian = min(value, gaussian)
            total += event.n_steps * gaussian
        return total

    return rdp


def _check_local_events(local_events):
    local_events = tuple(local_events)
    if not local_events:
        raise ValueError("local_events must hold at least one GaussianEvent")
    for index, event in enumerate(local_events):
        if not isinstance(event, GaussianEvent):
            raise TypeError(
                f"local_events[{index}] must be a GaussianEvent, got {type(event).__name__}"
            )
        if event.adjacency != "replace_one":
            raise ValueError(
                f"local_events[{index}] must be under replace-one adjacency (agent "
                f"sampling without replacement), got {event.adjacency!r}"
            )
    return local_events


def prirfed_round_rdp(local_events, n_agents, n_sampled, indices=None):
    """RDP of one PriRFed round for one record, at ``ORDERS[indices]``.

    Parameters
    ----------
    local_events : sequence of GaussianEvent
        The local training of the record's agent (replace-one), e.g. a ``GradientPlan``'s
        events.
    n_agents, n_sampled : int
        N and s.
    indices : numpy.ndarray of int, optional
        Orders of ``privacy.renyi.ORDERS``; all by default.

    Returns
    -------
    rdp : numpy.ndarray, shape=[len(indices)]
    """
    local_events = _check_local_events(local_events)
    n_agents = check_positive_int(n_agents, "n_agents")
    n_sampled = check_positive_int(n_sampled, "n_sampled")
    if n_sampled > n_agents:
        raise ValueError(f"n_sampled must be <= n_agents={n_agents}, got {n_sampled}")
    indices = np.arange(len(ORDERS)) if indices is None else np.asarray(indices)
    local = _local_rdp(local_events)
    if n_sampled == n_agents:
        return np.array([local(float(ORDERS[i])) for i in indices])
    return _amplified(local_events, n_sampled / n_agents)(indices)


@functools.lru_cache(maxsize=256)
def _amplified(local_events, rate):
    base = autodp_core.Mechanism()
    base.RenyiDP = _local_rdp(local_events)
    base.neighboring = "replace_one"  # autodp asserts on it for sampling w/o replacement
    base.params, base.name = {}, "prirfed_local"
    with _quiet():
        mechanism = transformer_zoo.AmplificationBySampling(PoissonSampling=False)(
            base, rate
        )
    local = base.RenyiDP
    values = {}

    def at(indices):
        out = []
        with _quiet():
            for i in indices:
                if i not in values:
                    alpha = float(ORDERS[i])
                    values[i] = min(float(mechanism.RenyiDP(alpha)), local(alpha))
                out.append(values[i])
        return np.array(out)

    return at


SAMPLINGS = ("public", "hidden")


def prirfed_end_to_end_epsilon(local_events, n_agents, n_sampled, n_rounds, delta,
                               sampling="public"):
    """Epsilon at ``delta`` of T PriRFed rounds for one record (RDP, end to end).

    Parameters
    ----------
    local_events : sequence of GaussianEvent
        One agent's local training (replace-one); with agents of different sizes, call
        it for each and take the largest.
    n_agents, n_sampled, n_rounds : int
        N, s and T.
    delta : float
        In (0, 1).
    sampling : {"public", "hidden"}
        Whether the sampled agents are known to the observer (default, sound against the
        server) or secret (amplification by agent sampling).

    Returns
    -------
    epsilon : float
    """
    local_events = _check_local_events(local_events)
    n_rounds = check_positive_int(n_rounds, "n_rounds")
    delta = check_probability(delta, "delta")
    n_agents = check_positive_int(n_agents, "n_agents")
    n_sampled = check_positive_int(n_sampled, "n_sampled")
    if n_sampled > n_agents:
        raise ValueError(f"n_sampled must be <= n_agents={n_agents}, got {n_sampled}")
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {SAMPLINGS}, got {sampling!r}")
    if n_sampled == n_agents:  # every agent in every round: plain composition
        return compose_epsilon([dataclasses.replace(event, n_steps=event.n_steps * n_rounds)
                                for event in local_events], delta)
    if sampling == "public":
        return _public_epsilon(local_events, n_sampled / n_agents, n_rounds, delta)

    def objective(indices):
        rdp = prirfed_round_rdp(local_events, n_agents, n_sampled, indices)
        return n_rounds * rdp + conversion_offset(delta, indices)

    epsilon, _ = minimise_over_orders(objective)
    return max(epsilon, 0.0) if math.isfinite(epsilon) else math.inf


def _public_epsilon(local_events, rate, n_rounds, delta):
    """Smallest epsilon with sum_k P(k) delta_k(epsilon) <= delta, k ~ Bin(T, rate)."""
    orders = np.asarray(ORDERS)
    curve = ledger_rdp(local_events)
    participations = np.arange(n_rounds + 1)
    weights = stats.binom.pmf(participations, n_rounds, rate)
    # log delta_k(eps) = min over alpha of (alpha-1)(k R(alpha) - eps + log(1-1/alpha))
    # - log alpha: the inverse in delta of ``conversion_offset``
    slope = orders - 1.0
    intercept = slope * np.log1p(-1.0 / orders) - np.log(orders)
    rdp = participations[:, None] * curve[None, :]

    def delta_of(epsilon):
        log_deltas = np.min(slope * (rdp - epsilon) + intercept, axis=1)
        return float(np.dot(weights, np.exp(np.minimum(log_deltas, 0.0))))

    # k = T at every round's conversion already meets delta (up to rounding)
    largest = float(np.min(n_rounds * curve + conversion_offset(delta))) * (1 + 1e-9) + 1e-12
    return _smallest_epsilon(delta_of, largest, delta)


def end_to_end_local_target(local_events_of, epsilon, delta, n_agents, n_sampled, n_rounds):
    """The largest local epsilon whose noise keeps the end-to-end total within the target.

    The local guarantee (epsilon_l, delta) only parametrises the agents' noise here: the
    total is ``prirfed_end_to_end_epsilon`` (public sampling) of the least noisy agent,
    found by Brent's method on log epsilon_l (the total increases with epsilon_l).

    Parameters
    ----------
    local_events_of : callable
        local_epsilon -> list of tuples of GaussianEvent, one per distinct agent plan
        calibrated to (local_epsilon, delta).
    epsilon, delta : float
        Target of the whole run.
    n_agents, n_sampled, n_rounds : int
        N, s and T.

    Returns
    -------
    local_epsilon : float
    total_epsilon : float
        The run's epsilon at ``delta`` (<= epsilon).
    """
    epsilon = check_positive_finite(epsilon, "epsilon")

    def total(log_local):
        return max(prirfed_end_to_end_epsilon(events, n_agents, n_sampled, n_rounds, delta)
                   for events in local_events_of(math.exp(log_local)))

    high = math.log(min(epsilon * 1e3, 100.0))
    low = math.log(epsilon)
    while total(low) > epsilon:  # down by e^2 until feasible; calibration refuses at the end
        try:
            low -= 2.0
            total(low)
        except ValueError:
            raise ValueError(f"no local epsilon meets the total epsilon={epsilon}") from None
    if total(high) <= epsilon:
        return math.exp(high), total(high)
    log_local = optimize.brentq(lambda x: total(x) - epsilon, low, high, xtol=1e-9)
    while total(log_local) > epsilon:
        log_local -= 1e-9
    return math.exp(log_local), total(log_local)
