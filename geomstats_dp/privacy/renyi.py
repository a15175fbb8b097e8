"""Renyi-DP curves of events and their conversion to (epsilon, delta).

RDP is tabulated on the integer orders ``ORDERS``: autodp bounds the RDP of a mechanism
subsampled without replacement at integer orders only (it interpolates between them), and
any order gives a valid bound, so a finite grid only loosens the result where the optimal
order falls between grid points (integers up to 64, then steps of about 12%).

Subsampled Gaussian curves are autodp's bounds computed in numpy for all orders at once
(``subsampled_rdp``; autodp is the reference of the tests and is imported only for pure
epsilon-DP events). An epsilon is minimised over the orders coarse-to-fine: on
``COARSE_ORDERS`` first, then on every grid order between the two coarse neighbours of the
best one. The conversion objective is unimodal in the order in practice; where it is not,
the result is still a valid bound (a minimum over a subset of valid orders)."""

import contextlib
import functools
import math
import warnings

import numpy as np

from geomstats_dp.privacy.events import GaussianEvent, SelectionEvent
from geomstats_dp.privacy.orders import COARSE_ORDERS, ORDERS
from geomstats_dp.privacy.selection import selection_rdp
from geomstats_dp.privacy.subsampled_rdp import poisson_rdp, without_replacement_rdp

_COARSE = np.searchsorted(ORDERS, COARSE_ORDERS)
_ALL = np.arange(len(ORDERS))


def gaussian_rdp(noise_multiplier, indices=_ALL):
    """RDP of one Gaussian step without subsampling: alpha / (2 z^2) at ``ORDERS[indices]``."""
    return ORDERS[indices] / (2.0 * noise_multiplier**2)


class _SubsampledCurve:
    """The RDP of one subsampled Gaussian step at every order of ``ORDERS``.

    Computed in numpy (``subsampled_rdp``: autodp's bounds, all orders at once, no autodp
    import); the tests check it against autodp's ``AmplificationBySampling``.
    """

    def __init__(self, noise_multiplier, sampling_rate, poisson):
        rdp = poisson_rdp if poisson else without_replacement_rdp
        with _quiet():
            values = rdp(noise_multiplier, sampling_rate, ORDERS)
        self._values = np.minimum(values, gaussian_rdp(noise_multiplier))
        self._values.setflags(write=False)

    def at(self, indices):
        """RDP at ``ORDERS[indices]`` (never above the unsampled Gaussian's)."""
        return self._values[indices]


@contextlib.contextmanager
def _quiet():
    """autodp's log-domain arithmetic emits harmless overflow/invalid warnings."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@functools.lru_cache(maxsize=2048)
def subsampled_curve(noise_multiplier, sampling_rate, poisson):
    """The RDP curve of one subsampled Gaussian step (cached).

    Parameters
    ----------
    noise_multiplier : float
        z, relative to the sensitivity of the batch query under the scheme's adjacency.
    sampling_rate : float
        b/n without replacement, or the inclusion probability with Poisson sampling.
    poisson : bool
        False: sampling without replacement, replace-one adjacency (autodp's
        AmplificationBySampling(PoissonSampling=False) with the tight bound for Gaussians,
        Wang, Balle & Kasiviswanathan 2019, Thm. 27). True: Poisson sampling, add/remove
        adjacency (Zhu & Wang 2019, exact at integer orders for Gaussians).

    Returns
    -------
    curve : object with ``at(indices) -> ndarray``, RDP at ``ORDERS[indices]``.

    Notes
    -----
    The two schemes are those of autodp's ``AmplificationBySampling`` with
    ``improved_bound_flag=True`` on an ``ExactGaussianMechanism``.
    """
    return _SubsampledCurve(noise_multiplier, sampling_rate, poisson)


@functools.lru_cache(maxsize=1024)
def _pure_rdp(epsilon):
    from autodp import mechanism_zoo  # imported on first use: it costs a second cold

    mechanism = mechanism_zoo.PureDP_Mechanism(eps=epsilon)
    values = np.array([mechanism.RenyiDP(order) for order in ORDERS])
    values.setflags(write=False)
    return values


def event_rdp(event, indices=_ALL):
    """RDP of a GaussianEvent, PureEvent or SelectionEvent at ``ORDERS[indices]``.

    A pure epsilon-DP event enters through the RDP of randomized response (Bun & Steinke
    2016, Lemma 4, via autodp's PureDP_Mechanism); a SelectionEvent through
    ``selection_event_rdp`` (Papernot & Steinke 2022).
    """
    if isinstance(event, SelectionEvent):
        return selection_event_rdp(event)[indices]
    if not isinstance(event, GaussianEvent):
        return _pure_rdp(event.epsilon)[indices]
    if not event.subsampled:
        return event.n_steps * gaussian_rdp(event.noise_multiplier, indices)
    curve = subsampled_curve(
        event.noise_multiplier, event.sampling_rate, event.sampling == "poisson"
    )
    return event.n_steps * curve.at(indices)


def ledger_rdp(events, indices=_ALL):
    """Sum of the RDP of ``events`` at ``ORDERS[indices]`` (RDP composes additively)."""
    total = np.zeros(len(indices))
    for event in events:
        total = total + event_rdp(event, indices)
    return total


def base_run_rdp(event):
    """RDP of one run of a SelectionEvent at every order: max over candidates and score."""
    runs = [ledger_rdp(run) for run in event.candidates] + [ledger_rdp(event.score)]
    return np.max(np.stack(runs), axis=0)


@functools.lru_cache(maxsize=256)
def selection_event_rdp(event):
    """RDP of a SelectionEvent at every order of ``ORDERS`` (``selection.selection_rdp``
    of its base run; cached; read-only)."""
    rdp = selection_rdp(base_run_rdp(event), event.mean, event.shape)
    rdp.setflags(write=False)
    return rdp


def conversion_offset(delta, indices=_ALL):
    """What the RDP-to-DP conversion adds to rdp(alpha) at ``ORDERS[indices]``.

    Balle et al. (2020, Thm. 21), also autodp's default: an (alpha, r)-RDP mechanism is
    (r + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1), delta)-DP.
    """
    orders = ORDERS[indices]
    return np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)


def minimise_over_orders(objective):
    """Coarse-to-fine minimum of ``objective(indices) -> values`` over the order grid.

    Returns
    -------
    value : float
        The smallest value found (every evaluated order is a valid candidate).
    index : int
        Its index in ``ORDERS``.
    """
    coarse = objective(_COARSE)
    best = int(np.argmin(coarse))
    low = _COARSE[max(best - 1, 0)]
    high = _COARSE[min(best + 1, len(_COARSE) - 1)]
    window = np.arange(low, high + 1)
    values = objective(window)
    found = int(np.argmin(values))
    return float(values[found]), int(window[found])


def ledger_epsilon(events, delta):
    """Epsilon at ``delta`` of the RDP composition of ``events`` (best order of the grid).

    Parameters
    ----------
    events : sequence of GaussianEvent or PureEvent
    delta : float
        In (0, 1).

    Returns
    -------
    epsilon : float
        Non-negative.
    """
    value, _ = minimise_over_orders(
        lambda indices: ledger_rdp(events, indices) + conversion_offset(delta, indices)
    )
    return max(value, 0.0)
