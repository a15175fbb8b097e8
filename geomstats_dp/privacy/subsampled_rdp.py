"""RDP of one subsampled Gaussian step at integer orders: autodp's bounds, in numpy.

The same formulas as autodp's ``AmplificationBySampling(..., improved_bound_flag=True)``
on an ``ExactGaussianMechanism`` (autodp stays the reference: the tests compare the two to
1e-9 relative), evaluated for every order at once instead of one autodp call per order,
so that a calibration needs no autodp import and milliseconds instead of seconds.

Notation: z the noise multiplier, q the sampling rate, alpha an integer order, and the
Gaussian's cumulant generating function cgf(x) = x (x + 1) / (2 z^2).

- Poisson sampling, add/remove adjacency (Zhu & Wang 2019; Mironov et al. 2019), exact:
  exp((alpha - 1) rdp) = (1-q)^(alpha-1) (1 + (alpha-1) q)
  + sum_{j=2}^{alpha} C(alpha, j) q^j (1-q)^(alpha-j) exp(cgf(j-1)).
- Sampling without replacement, replace-one adjacency (Wang, Balle & Kasiviswanathan
  2019, Thm. 27): exp((alpha - 1) rdp) <= 1 + q^2 C(alpha, 2) min(4 (e^(1/z^2) - 1),
  2 e^(1/z^2)) + sum_{j=3}^{alpha} q^j C(alpha, j) b_j, with b_j = min(4 sqrt(D_a D_b),
  2 exp(cgf(j-1))) up to order ``EXACT_ORDERS`` (D_k the k-th forward difference of
  exp(cgf) at -1, a = 2 floor(j/2), b = 2 ceil(j/2)) and b_j = 2 exp(cgf(j-1)) above it,
  as autodp does with its default accountant (m = 100).
"""

import functools
import math

import numpy as np
from scipy import special

EXACT_ORDERS = 100  # autodp's anaRDPacct(m=100): forward differences up to this order


def _log_binomial(total, chosen):
    """log C(total, chosen) through log-gamma (autodp's ``logcomb``)."""
    return special.gammaln(total + 1) - special.gammaln(total - chosen + 1) - special.gammaln(
        chosen + 1
    )


@functools.lru_cache(maxsize=8)
def _binomial_table(orders, first):
    """log C(alpha, j) for alpha in ``orders`` (rows), j = first ... max(orders) (columns),
    -inf where j > alpha; independent of the noise and the rate, so computed once."""
    alpha = np.array(orders)[:, None]
    chosen = np.arange(float(first), max(orders) + 1)
    table = np.where(chosen <= alpha, _log_binomial(alpha, chosen), -np.inf)
    table.setflags(write=False)
    return chosen, table


def _gaussian_rdp(orders, noise_multiplier):
    """alpha / (2 z^2), written as autodp writes it (``RDP_gaussian``)."""
    return 0.5 / noise_multiplier**2 * orders


def _cgf(values, noise_multiplier):
    """x rdp(x + 1), as autodp evaluates it: the high forward differences of exp(cgf)
    cancel catastrophically, so they reproduce autodp's only with the same roundings."""
    return values * _gaussian_rdp(values + 1, noise_multiplier)


def _logsumexp_rows(terms):
    """max + log(sum(exp(terms - max))) per row (autodp's ``stable_logsumexp``)."""
    top = np.max(terms, axis=-1, keepdims=True)
    return top[..., 0] + np.log(np.sum(np.exp(terms - top), axis=-1))


def log_forward_differences(log_values):
    """log |k-th forward difference| (k = 1, 2, ...) of exp(log_values) at the first point.

    autodp's ``get_forward_diffs``: the differences are taken in log scale with signs,
    one level at a time; each level is one vectorised step here.

    Parameters
    ----------
    log_values : array-like, shape=[n]
        log f(x_0), ..., log f(x_{n-1}) (f > 0).

    Returns
    -------
    deltas : array-like, shape=[n - 1]
        deltas[k - 1] = log |Delta^k f(x_0)|.
    """
    vec = np.array(log_values, dtype=np.float64)
    signs = np.ones(vec.size, dtype=bool)
    deltas = np.empty(vec.size - 1)
    with np.errstate(all="ignore"):
        for level in range(vec.size - 1):
            width = vec.size - 1 - level
            first, second = vec[:width], vec[1 : width + 1]
            first_sign, second_sign = signs[:width], signs[1 : width + 1]
            falling = second < first
            top = np.maximum(first, second)
            ratio = np.exp(np.minimum(first, second) - top)  # the same roundings as autodp's
            gap = np.where(first == second, -np.inf, top + np.log(1 - ratio))
            gap_sign = np.where(second_sign, ~falling, falling)
            summed = top + np.log(1 + ratio)
            same = first_sign == second_sign
            vec[:width] = np.where(same, gap, summed)
            signs[:width] = np.where(same, gap_sign, second_sign)
            deltas[level] = vec[0]
    return deltas


def _by_blocks(function):
    """Evaluate orders <= EXACT_ORDERS and the larger ones apart: the sums over j run up
    to the order, so the low block needs 100 columns instead of max(orders)."""

    @functools.wraps(function)
    def blocked(noise_multiplier, sampling_rate, orders):
        orders = np.asarray(orders, dtype=np.float64)
        low = orders <= EXACT_ORDERS
        values = np.empty(orders.shape)
        for block in (low, ~low):
            if block.any():
                values[block] = function(noise_multiplier, sampling_rate, orders[block])
        return values

    return blocked


@_by_blocks
def poisson_rdp(noise_multiplier, sampling_rate, orders):
    """RDP of one Poisson-subsampled Gaussian step (add/remove) at integer ``orders``.

    Parameters
    ----------
    noise_multiplier : float
    sampling_rate : float
        In (0, 1).
    orders : array-like, shape=[n]
        Integers >= 2.

    Returns
    -------
    rdp : array-like, shape=[n]
    """
    orders = np.asarray(orders, dtype=np.float64)
    chosen, binomials = _binomial_table(tuple(orders.tolist()), 2)
    log_q, log_1mq = math.log(sampling_rate), math.log1p(-sampling_rate)
    alpha = orders[:, None]
    terms = (
        _cgf(chosen - 1, noise_multiplier)
        + chosen * log_q
        + (alpha - chosen) * log_1mq
        + binomials
    )
    first = (orders - 1) * log_1mq + np.log(1 + (orders - 1) * sampling_rate)
    log_moment = _logsumexp_rows(np.concatenate([first[:, None], terms], axis=1))
    return log_moment / (orders - 1)


@_by_blocks
def without_replacement_rdp(noise_multiplier, sampling_rate, orders):
    """RDP of one Gaussian step on a batch drawn without replacement (replace-one).

    Parameters
    ----------
    noise_multiplier : float
    sampling_rate : float
        b / n, in (0, 1).
    orders : array-like, shape=[n]
        Integers >= 2.

    Returns
    -------
    rdp : array-like, shape=[n]
    """
    orders = np.asarray(orders, dtype=np.float64)
    log_q = math.log(sampling_rate)
    second_order = _gaussian_rdp(2.0, noise_multiplier)
    moments_two = (
        2 * log_q
        + _log_binomial(orders, 2.0)
        + min(
            math.log(4) + second_order + np.log(1 - np.exp(-second_order)),
            second_order + math.log(2),
        )
    )
    chosen, binomials = _binomial_table(tuple(orders.tolist()), 3)
    alpha = orders[:, None]
    cgf_terms = math.log(2) + _cgf(chosen - 1, noise_multiplier)
    deltas = log_forward_differences(
        _cgf(np.arange(-1.0, EXACT_ORDERS + 2), noise_multiplier)
    )
    exact_chosen = chosen[chosen <= EXACT_ORDERS].astype(int)
    lower = deltas[2 * (exact_chosen // 2) - 1]
    upper = deltas[2 * ((exact_chosen + 1) // 2) - 1]
    exact = np.minimum(math.log(4) + 0.5 * lower + 0.5 * upper, cgf_terms[: exact_chosen.size])
    bounds = np.where(
        alpha <= EXACT_ORDERS,
        np.concatenate([exact, cgf_terms[exact_chosen.size :]]),
        cgf_terms,
    )
    terms = bounds + chosen * log_q + binomials
    columns = [np.zeros((orders.size, 1)), moments_two[:, None], terms]
    log_moment = _logsumexp_rows(np.concatenate(columns, axis=1))
    return log_moment / (orders - 1)
