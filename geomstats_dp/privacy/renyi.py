"""Renyi-DP curves of single events (through autodp) and their conversion to (epsilon, delta).

RDP curves are tabulated on the integer orders ``ORDERS``: autodp bounds the RDP of a
mechanism subsampled without replacement at integer orders only (it interpolates between
them), and any order gives a valid bound, so a finite grid only loosens the result where the
optimal order falls between grid points (integers up to 64, then about 12% apart).
"""

import functools
import math
import warnings

import numpy as np
from autodp import mechanism_zoo, transformer_zoo

from geomstats_dp.privacy.events import GaussianEvent

ORDERS = np.concatenate(
    [
        np.arange(2.0, 65.0),
        [72.0, 80.0, 90.0, 100.0, 112.0, 128.0, 144.0, 160.0, 180.0, 200.0, 224.0, 256.0],
        [288.0, 320.0, 360.0, 400.0, 448.0, 512.0, 640.0, 768.0, 896.0, 1024.0],
    ]
)
ORDERS.setflags(write=False)


def _frozen(array):
    array = np.asarray(array, dtype=np.float64)
    array.setflags(write=False)
    return array


def gaussian_rdp(noise_multiplier):
    """RDP of one Gaussian step without subsampling: alpha / (2 z^2) at every order."""
    return ORDERS / (2.0 * noise_multiplier**2)


@functools.lru_cache(maxsize=4096)
def subsampled_gaussian_rdp(noise_multiplier, sampling_rate, poisson):
    """RDP of one subsampled Gaussian step on ``ORDERS``, from autodp.

    Parameters
    ----------
    noise_multiplier : float
        z, relative to the sensitivity of the batch query under the scheme's adjacency.
    sampling_rate : float
        b/n without replacement, or the inclusion probability with Poisson sampling.
    poisson : bool
        False: sampling without replacement, replace-one adjacency (Wang, Balle &
        Kasiviswanathan 2019, Thm. 27, the tight bound for the Gaussian mechanism).
        True: Poisson sampling, add/remove adjacency (Zhu & Wang 2019, Thm. 6).

    Returns
    -------
    rdp : ndarray, shape=[len(ORDERS)], read-only
    """
    base = mechanism_zoo.ExactGaussianMechanism(sigma=noise_multiplier)
    # autodp asserts on the base mechanism's adjacency: without replacement needs
    # replace-one, and the noise parameter is then std / replace-one sensitivity.
    base.neighboring = "add_remove" if poisson else "replace_one"
    amplify = transformer_zoo.AmplificationBySampling(PoissonSampling=poisson)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        mechanism = amplify(base, sampling_rate, improved_bound_flag=True)
        values = [mechanism.RenyiDP(order) for order in ORDERS]
    values = np.minimum(np.asarray(values, dtype=np.float64), gaussian_rdp(noise_multiplier))
    return _frozen(values)


@functools.lru_cache(maxsize=1024)
def pure_rdp(epsilon):
    """RDP of an epsilon-DP release on ``ORDERS`` (Bun & Steinke 2016, Lemma 4; autodp)."""
    mechanism = mechanism_zoo.PureDP_Mechanism(eps=epsilon)
    return _frozen([mechanism.RenyiDP(order) for order in ORDERS])


def event_rdp(event):
    """RDP curve of a GaussianEvent or PureEvent on ``ORDERS`` (all its steps composed)."""
    if not isinstance(event, GaussianEvent):
        return pure_rdp(event.epsilon)
    if not event.subsampled:
        return event.n_steps * gaussian_rdp(event.noise_multiplier)
    curve = subsampled_gaussian_rdp(
        event.noise_multiplier, event.sampling_rate, event.sampling == "poisson"
    )
    return event.n_steps * curve


def ledger_rdp(events):
    """Sum of the RDP curves of ``events`` (RDP composes additively at every order)."""
    total = np.zeros_like(ORDERS)
    for event in events:
        total = total + event_rdp(event)
    return total


def conversion_offset(delta):
    """What the RDP-to-DP conversion adds to rdp(alpha) at each order of ``ORDERS``.

    Balle et al. (2020, Thm. 21), also autodp's default conversion: an (alpha, r)-RDP
    mechanism is (r + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1), delta)-DP.

    Parameters
    ----------
    delta : float
        In (0, 1).

    Returns
    -------
    offset : ndarray, shape=[len(ORDERS)]
    """
    return np.log1p(-1.0 / ORDERS) - (math.log(delta) + np.log(ORDERS)) / (ORDERS - 1.0)


def rdp_to_epsilon(rdp, delta):
    """Epsilon at ``delta`` implied by an RDP curve on ``ORDERS`` (best order of the grid).

    Parameters
    ----------
    rdp : array-like, shape=[len(ORDERS)]
    delta : float
        In (0, 1).

    Returns
    -------
    epsilon : float
        Non-negative; infinite when the curve is infinite at every order.
    """
    return max(float(np.min(np.asarray(rdp) + conversion_offset(delta))), 0.0)
