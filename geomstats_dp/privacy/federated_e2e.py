"""End-to-end accounting of PriRFed: the path of one record through the whole run.

Agents hold disjoint records, so in a round one record can only reach the agent that holds
it, and that agent is sampled with probability rho = s / N (s of N agents drawn without
replacement). Given that it is sampled, the record is seen by that agent's K local noisy
steps only (with the agent's own batch sampling). Adjacency is record-level, replace-one
within an agent. One round is therefore the agent's local run (an RDP curve, the sum of the
curves of its local Gaussian steps, ``privacy.renyi``) amplified by sampling without
replacement at rate rho (Wang, Balle & Kasiviswanathan 2019, general bound, through autodp's
``AmplificationBySampling(PoissonSampling=False)`` on a replace-one base mechanism); the T
rounds compose additively in RDP and the total is converted to (epsilon, delta) on the
library's order grid. The server's aggregation is post-processing. A sampled agent whose
reply is lost may still have released: every sampled agent is counted (the bound does not
look at replies). This is tighter than Huang et al. (2024), Theorem 4.2, which starts from
each agent's (epsilon, delta) and composes by advanced composition.
"""

import functools
import math

import numpy as np
from autodp import autodp_core, transformer_zoo

from geomstats_dp._validation import check_positive_int, check_probability
from geomstats_dp.privacy.events import GaussianEvent
from geomstats_dp.privacy.renyi import (
    ORDERS,
    _quiet,
    conversion_offset,
    minimise_over_orders,
    subsampled_curve,
)


def _local_rdp(local_events):
    """alpha -> RDP of one agent's local run (a sum over its Gaussian events)."""

    @functools.lru_cache(maxsize=None)
    def rdp(alpha):
        total = 0.0
        for event in local_events:
            if not event.subsampled:
                total += event.n_steps * alpha / (2.0 * event.noise_multiplier**2)
                continue
            curve = subsampled_curve(event.noise_multiplier, event.sampling_rate,
                                     event.sampling == "poisson")
            with _quiet():
                value = curve._mechanism.RenyiDP(alpha)
            total += event.n_steps * min(
                value, alpha / (2.0 * event.noise_multiplier**2)
            )
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


def prirfed_end_to_end_epsilon(local_events, n_agents, n_sampled, n_rounds, delta):
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

    def objective(indices):
        rdp = prirfed_round_rdp(local_events, n_agents, n_sampled, indices)
        return n_rounds * rdp + conversion_offset(delta, indices)

    epsilon, _ = minimise_over_orders(objective)
    return max(epsilon, 0.0) if math.isfinite(epsilon) else math.inf
