"""Independent composition of the stages a fit released: dp-accounting and closed forms.

Nothing here calls the package's own accountants; ``testing._accounting`` compares the
ledger with what these functions compute (its module notes state the method).
"""

import collections
import math

import numpy as np
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld_module
from dp_accounting.rdp import rdp_privacy_accountant as rdp_module
from scipy import optimize, special, stats

GAUSSIAN_LAWS = ("gaussian", "discrete_gaussian")
PURE_LAWS = ("laplace", "discrete_laplace", "exponential")
ORDERS = np.concatenate([np.arange(2.0, 65.0), np.geomspace(72.0, 1024.0, 24)])
DISCRETIZATION = 1e-3  # of the PLDs' privacy loss (pessimistic)


def _check_law(stage):
    if stage.law not in GAUSSIAN_LAWS + PURE_LAWS:
        raise ValueError(f"stage {stage.label!r} has law {stage.law!r}; expected one of "
                         f"{GAUSSIAN_LAWS + PURE_LAWS}")


def stage_pure_epsilon(stage):
    """Epsilon of a pure stage: sensitivity / scale, or the exponential stage's epsilon."""
    if stage.law == "exponential":
        return float(stage.scale)
    return float(stage.sensitivity) / float(stage.scale)


def stage_noise_multiplier(stage):
    """z = std / sensitivity of a Gaussian stage."""
    return float(stage.scale) / float(stage.sensitivity)


def _stage_key(stage):
    """What the stage's privacy depends on (for grouping identical stages)."""
    _check_law(stage)
    if stage.law in PURE_LAWS:
        return ("pure", stage_pure_epsilon(stage), 1.0)
    return ("gaussian", stage_noise_multiplier(stage), float(stage.sampling_rate))


def _key_pld(key):
    kind, value, rate = key
    if kind == "pure":
        return pld_module.from_privacy_parameters(
            pld_common.DifferentialPrivacyParameters(value, 0.0),
            value_discretization_interval=DISCRETIZATION)
    return pld_module.from_gaussian_mechanism(
        value, sensitivity=1.0, sampling_prob=rate,
        value_discretization_interval=DISCRETIZATION)


def stages_pld(stages):
    """dp-accounting PLD of the sequential composition of ``stages`` (None if empty)."""
    total = None
    for key, count in collections.Counter(_stage_key(stage) for stage in stages).items():
        pld = _key_pld(key)
        pld = pld.self_compose(count) if count > 1 else pld
        total = pld if total is None else total.compose(pld)
    return total


def _randomized_response_rdp(epsilon, orders):
    """RDP of randomized response, which bounds every (epsilon, 0)-DP mechanism."""
    log_p = -np.logaddexp(0.0, -epsilon)  # log(e^eps / (1 + e^eps))
    log_q = -np.logaddexp(0.0, epsilon)
    terms = np.logaddexp(orders * log_p + (1 - orders) * log_q,
                         orders * log_q + (1 - orders) * log_p)
    return np.minimum(terms / (orders - 1), epsilon)


def stages_rdp(stages, orders=ORDERS):
    """RDP at ``orders`` of the sequential composition of ``stages``."""
    total = np.zeros(len(orders))
    for key, count in collections.Counter(_stage_key(stage) for stage in stages).items():
        kind, value, rate = key
        if kind == "pure":
            curve = _randomized_response_rdp(value, orders)
        elif rate == 1.0:
            curve = orders / (2 * value**2)
        else:
            curve = np.asarray(rdp_module._compute_rdp_poisson_subsampled_gaussian(
                rate, value, orders))
        total += count * curve
    return total


def rdp_to_epsilon(rdp, delta, orders=ORDERS):
    """Epsilon at ``delta`` of an RDP curve (dp-accounting's conversion)."""
    epsilon, _ = rdp_module.compute_epsilon(orders, rdp, delta)
    return float(epsilon)


# -- Gaussian DP, closed form ----------------------------------------------------------

def gaussian_dp_delta(epsilon, mu):
    """delta(epsilon) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    (Balle & Wang 2018, Thm. 8)."""
    return float(special.ndtr(-epsilon / mu + mu / 2)
                 - math.exp(epsilon + special.log_ndtr(-epsilon / mu - mu / 2)))


def gaussian_dp_epsilon(mu, delta):
    """The smallest epsilon >= 0 with ``gaussian_dp_delta(epsilon, mu) <= delta``."""
    if gaussian_dp_delta(0.0, mu) <= delta:
        return 0.0
    upper = 1.0
    while gaussian_dp_delta(upper, mu) > delta:
        upper *= 2
    return optimize.brentq(lambda eps: gaussian_dp_delta(eps, mu) - delta, 0.0, upper,
                           xtol=1e-13, rtol=1e-13)


# -- compositions ------------------------------------------------------------------------

def independent_epsilon(stages, delta):
    """Epsilon at ``delta`` of the sequential composition of ``stages``, independently.

    Parameters
    ----------
    stages : iterable of privacy.stages.Stage
        Each under the adjacency it states; all of them reach one record.
    delta : float
        In [0, 1).

    Returns
    -------
    epsilon : float
        0 for no stage; the sum of the pure epsilons at delta = 0 (infinite with a
        Gaussian stage); exact Gaussian DP for full-batch Gaussian stages only; the PLD
        composition otherwise (module notes).
    """
    stages = list(stages)
    keys = [_stage_key(stage) for stage in stages]
    if not stages:
        return 0.0
    if delta == 0:
        if any(kind == "gaussian" for kind, _, _ in keys):
            return math.inf
        return math.fsum(value for _, value, _ in keys)
    if all(kind == "gaussian" and rate == 1.0 for kind, _, rate in keys):
        return gaussian_dp_epsilon(math.sqrt(math.fsum(z**-2 for _, z, _ in keys)), delta)
    return float(stages_pld(stages).get_epsilon_for_delta(delta))


def selection_epsilon(run_rdps, mean, shape, delta, other_rdp=None, orders=ORDERS):
    """Epsilon at ``delta`` of the best of K runs (Papernot & Steinke 2022) composed with
    ``other_rdp`` (the ledger's other releases), from each run's RDP (the largest at each
    order is the base run's)."""
    base = np.max(np.stack(run_rdps), axis=0)
    rdp = np.asarray(rdp_module._compute_rdp_repeat_and_select(orders, base, mean, shape))
    if other_rdp is not None:
        rdp = rdp + other_rdp
    return rdp_to_epsilon(rdp, delta, orders)


def public_sampling_epsilon(round_pld, n_rounds, rate, delta):
    """Epsilon at ``delta`` when a record's local run takes part in k ~ Binomial(T, rate)
    rounds, k public: sum_k P(k) delta_k(epsilon) <= delta."""
    weights = stats.binom.pmf(np.arange(n_rounds + 1), n_rounds, rate)
    plds = [None] + [round_pld.self_compose(k) for k in range(1, n_rounds + 1)]

    def delta_of(epsilon):
        return math.fsum(weight * pld.get_delta_for_epsilon(epsilon)
                         for weight, pld in zip(weights[1:], plds[1:]))

    upper = float(plds[-1].get_epsilon_for_delta(delta)) + 1e-9
    if delta_of(0.0) <= delta:
        return 0.0
    return optimize.brentq(lambda eps: delta_of(eps) - delta, 0.0, upper, xtol=1e-9)


# -- grouping --------------------------------------------------------------------------
