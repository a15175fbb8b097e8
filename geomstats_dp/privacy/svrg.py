"""Accounting and calibration of DP-RSVRG (Utpala et al. 2023, Section 5.1, Claims 3-4).

DP-RSVRG releases two kinds of noisy queries (replace-one adjacency, n records):

- the full-gradient query, the mean of n gradients clipped to C0 (``clip_full``):
  sensitivity 2 C0 / n, noise standard deviation sigma_full = sqrt(alpha) sigma;
- the variance-reduced single-sample query of each inner step, built from one record drawn
  uniformly (sampling rate 1/n): sensitivity 4 C1 (``clip_single``, Claim 3), noise
  sigma_single = sqrt(1 - alpha) sigma.

Each inner step thus carries noise of total variance sigma^2 = sigma_full^2 + sigma_single^2.
How often the full gradient is released is set by ``full_gradient_releases``:

- "epoch" (default): its noise is drawn once per epoch and reused by the epoch's inner
  steps, so it is released n_epochs times. The optimiser must then draw it once per epoch.
- "step": fresh full-gradient noise at every inner step (the paper's decomposition of its
  Algorithm 11, where the per-step noise N(0, sigma^2) is split in two), so it is released
  n_epochs * inner_steps times. This reproduces the paper's Section 6.2 numbers.

The ledger is accounted by ``compose_epsilon`` (RDP: Gaussian + autodp's amplification by
sampling without replacement), never by the paper's closed-form moments bounds.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from geomstats_dp._validation import check_positive_finite, check_positive_int
from geomstats_dp.privacy.accountant import compose_epsilon
from geomstats_dp.privacy.calibration import calibrate_gaussian, check_target
from geomstats_dp.privacy.events import GaussianEvent
from geomstats_dp.privacy.noise_search import smallest_noise
from geomstats_dp.privacy.renyi import (
    ORDERS,
    conversion_offset,
    event_rdp,
)

RELEASES = ("epoch", "step")
_LOGIT_RANGE = (-16.0, 16.0)
_XATOL = 1e-3  # logit(alpha) tolerance of the epsilon-minimising split
_SPLIT_XATOL = 0.05  # log log(z2 / lowest z2) tolerance of the sigma-minimising split
_SPLIT_GRID = 8  # coarse grid points before the refinement (sigma need not be unimodal)
_SMALLEST_LOG_RATIO = 1e-9


@dataclass(frozen=True)
class SVRGCalibration:
    """A noise split for DP-RSVRG and the (epsilon, delta) guarantee it meets.

    Attributes
    ----------
    sigma : float
        Total noise standard deviation of an inner step, sqrt(sigma_full^2 +
        sigma_single^2), in the units of the gradients (those of the clip norms).
    alpha : float
        Share of the variance on the full gradient: sigma_full^2 = alpha sigma^2.
    sigma_full, sigma_single : float
        Noise standard deviations of the full-gradient and of the single-sample query.
    noise_multiplier_full : float
        sigma_full / (2 clip_full / n): relative to the full-gradient query's replace-one
        sensitivity.
    noise_multiplier_single : float
        sigma_single / (4 clip_single): relative to the variance-reduced query's
        replace-one sensitivity.
    epsilon, delta : float
        The guarantee of the whole run, ``compose_epsilon(events, delta)``.
    events : tuple of GaussianEvent
        (full-gradient event, single-sample event): n_epochs (or n_epochs * inner_steps)
        full-batch releases, and n_epochs * inner_steps releases sampled without
        replacement at rate 1/n.
    """

    sigma: float
    alpha: float
    sigma_full: float
    sigma_single: float
    noise_multiplier_full: float
    noise_multiplier_single: float
    epsilon: float
    delta: float
    events: tuple


@dataclass(frozen=True)
class _Setting:
    """The data-independent configuration of a DP-RSVRG run (hashable, for caching)."""

    n: int
    n_epochs: int
    inner_steps: int
    clip_full: float
    clip_single: float
    full_gradient_releases: str

    @property
    def full_sensitivity(self):
        return 2.0 * self.clip_full / self.n

    @property
    def single_sensitivity(self):
        return 4.0 * self.clip_single

    @property
    def n_full_releases(self):
        per_epoch = 1 if self.full_gradient_releases == "epoch" else self.inner_steps
        return self.n_epochs * per_epoch

    @property
    def n_single_releases(self):
        return self.n_epochs * self.inner_steps

    def events(self, full_multiplier, single_multiplier):
        """(full-gradient event, single-sample event) of the two noise multipliers."""
        full = GaussianEvent.from_noise(
            full_multiplier * self.full_sensitivity,
            self.full_sensitivity,
            n_steps=self.n_full_releases,
            label="DP-RSVRG full gradient",
        )
        single = GaussianEvent.from_noise(
            single_multiplier * self.single_sensitivity,
            self.single_sensitivity,
            n_steps=self.n_single_releases,
            sampling_rate=1.0 / self.n,
            sampling="without_replacement",
            label="DP-RSVRG variance-reduced step",
        )
        return full, single

    def split_events(self, sigma, alpha):
        """Events of total noise ``sigma``, the share ``alpha`` of its variance on the full
        gradient."""
        return self.events(
            math.sqrt(alpha) * sigma / self.full_sensitivity,
            math.sqrt(1.0 - alpha) * sigma / self.single_sensitivity,
        )

    def result(self, events, delta):
        """The SVRGCalibration of a (full, single) pair of events."""
        full, single = events
        sigma = math.hypot(full.noise_std, single.noise_std)
        return SVRGCalibration(
            sigma=sigma,
            alpha=(full.noise_std / sigma) ** 2,
            sigma_full=full.noise_std,
            sigma_single=single.noise_std,
            noise_multiplier_full=full.noise_multiplier,
            noise_multiplier_single=single.noise_multiplier,
            epsilon=compose_epsilon(events, delta),
            delta=delta,
            events=events,
        )


def _setting(n, n_epochs, inner_steps, clip_full, clip_single, full_gradient_releases):
    if full_gradient_releases not in RELEASES:
        raise ValueError(
            f"full_gradient_releases must be one of {RELEASES}, "
            f"got {full_gradient_releases!r}"
        )
    return _Setting(
        n=check_positive_int(n, "n", minimum=2),
        n_epochs=check_positive_int(n_epochs, "n_epochs"),
        inner_steps=check_positive_int(inner_steps, "inner_steps"),
        clip_full=check_positive_finite(clip_full, "clip_full"),
        clip_single=check_positive_finite(clip_single, "clip_single"),
        full_gradient_releases=full_gradient_releases,
    )


def _check_alpha(alpha):
    if alpha is None:
        return None
    alpha = check_positive_finite(alpha, "alpha")
    if alpha >= 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return alpha


def svrg_events(
    sigma,
    alpha,
    n,
    n_epochs,
    inner_steps,
    clip_full=1.0,
    clip_single=1.0,
    full_gradient_releases="epoch",
):
    """The two events of a DP-RSVRG run with total noise ``sigma`` split by ``alpha``.

    Parameters
    ----------
    sigma : float
        Total noise standard deviation of an inner step (gradient units).
    alpha : float
        In (0, 1): sigma_full^2 = alpha sigma^2, sigma_single^2 = (1 - alpha) sigma^2.
    n : int
        Number of records (>= 2).
    n_epochs : int
        Number of epochs S.
    inner_steps : int
        Inner steps per epoch m.
    clip_full, clip_single : float
        Clip norms C0 (full gradient) and C1 (single-sample gradients).
    full_gradient_releases : {"epoch", "step"}
        See the module notes.

    Returns
    -------
    events : tuple of GaussianEvent, length 2
        (full-gradient event, single-sample event).
    """
    setting = _setting(n, n_epochs, inner_steps, clip_full, clip_single, full_gradient_releases)
    sigma = check_positive_finite(sigma, "sigma")
    alpha = _check_alpha(alpha)
    if alpha is None:
        raise ValueError("alpha must be given (a float in (0, 1)) to build the events")
    return setting.split_events(sigma, alpha)


def svrg_epsilon(
    sigma,
    delta,
    n,
    n_epochs,
    inner_steps,
    alpha=None,
    clip_full=1.0,
    clip_single=1.0,
    full_gradient_releases="epoch",
):
    """Epsilon of DP-RSVRG at total noise ``sigma``, with ``alpha`` given or optimised.

    Parameters
    ----------
    sigma : float
        Total noise standard deviation of an inner step (gradient units).
    delta : float
        In (0, 1).
    n, n_epochs, inner_steps, clip_full, clip_single, full_gradient_releases
        As in ``svrg_events``.
    alpha : float, optional
        Variance share of the full gradient; None minimises epsilon over alpha (bounded
        Brent search on logit(alpha)), as in the paper's Section 6.2.

    Returns
    -------
    calibration : SVRGCalibration
        Its ``epsilon`` is the guarantee at ``delta``.
    """
    setting = _setting(n, n_epochs, inner_steps, clip_full, clip_single, full_gradient_releases)
    sigma = check_positive_finite(sigma, "sigma")
    _, delta = check_target(1.0, delta)
    alpha = _check_alpha(alpha)
    if alpha is None:
        alpha = _best_alpha(setting, sigma, delta)
    return setting.result(setting.split_events(sigma, alpha), delta)


@functools.lru_cache(maxsize=256)
def _best_alpha(setting, sigma, delta):
    def epsilon_of(logit):
        return compose_epsilon(setting.split_events(sigma, _logistic(logit)), delta)

    found = optimize.minimize_scalar(
        epsilon_of, bounds=_LOGIT_RANGE, method="bounded", options={"xatol": _XATOL}
    )
    return _logistic(found.x)


def _logistic(logit):
    return 1.0 / (1.0 + math.exp(-logit))


def calibrate_svrg(
    epsilon,
    delta,
    n,
    n_epochs,
    inner_steps,
    alpha=None,
    clip_full=1.0,
    clip_single=1.0,
    full_gradient_releases="epoch",
):
    """Smallest total noise sigma with which DP-RSVRG is (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta, in (0, 1).
    n : int
        Number of records (>= 2); the single-sample query samples at rate 1/n.
    n_epochs : int
        Number of epochs S.
    inner_steps : int
        Inner steps per epoch m.
    alpha : float, optional
        Variance share of the full gradient, in (0, 1). None (default) optimises it: the
        smallest sigma over all splits.
    clip_full, clip_single : float
        Clip norms C0 and C1; sigma is in their units (with the defaults 1.0, multiply
        sigma, sigma_full and sigma_single by C when C0 = C1 = C).
    full_gradient_releases : {"epoch", "step"}
        See the module notes.

    Returns
    -------
    calibration : SVRGCalibration
        ``calibration.epsilon <= epsilon``; ``calibration.events`` go to the budget.

    Notes
    -----
    With alpha given, a monotone search on sigma. With alpha=None: for a single-sample
    multiplier z2 the smallest full-gradient multiplier z1 meeting the target is explicit
    on each RDP order (the full-gradient RDP is T1 a / (2 z1^2)), so sigma^2 =
    (2 C0 / n)^2 z1^2 + (4 C1)^2 z2^2 is minimised over z2 alone (a coarse grid, then
    bounded Brent on log log(z2 / z2_min) around the best grid point: sigma(z2) need not be
    unimodal). The split is exact for the z2 found, so the target is met; sigma is the
    smallest found, not provably the global minimum. Cached.
    """
    epsilon, delta = check_target(epsilon, delta)
    setting = _setting(n, n_epochs, inner_steps, clip_full, clip_single, full_gradient_releases)
    alpha = _check_alpha(alpha)
    if alpha is not None:
        sigma = _sigma_for_alpha(setting, epsilon, delta, alpha)
        return setting.result(setting.split_events(sigma, alpha), delta)
    full, single = _optimal_split(setting, epsilon, delta)
    result = setting.result(setting.events(full, single), delta)
    while result.epsilon > epsilon:  # the ledger's order search may miss the split's order
        full *= 1 + 1e-6
        result = setting.result(setting.events(full, single), delta)
    return result


@functools.lru_cache(maxsize=256)
def _sigma_for_alpha(setting, epsilon, delta, alpha):
    def events_of(sigma):
        return setting.split_events(sigma, alpha)

    initial = setting.single_sensitivity / math.sqrt(1 - alpha)
    return smallest_noise(events_of, epsilon, delta, initial, name="noise sigma")


@functools.lru_cache(maxsize=256)
def _optimal_split(setting, epsilon, delta):
    """(z1, z2) of the smallest sigma meeting the target."""
    # z2 >= lowest: below it the single-sample steps alone exceed the target.
    lowest = calibrate_gaussian(
        epsilon,
        delta,
        setting.n_single_releases,
        sampling_rate=1.0 / setting.n,
        sampling="without_replacement",
    )

    def split(log_log_ratio):
        single = lowest * math.exp(math.exp(log_log_ratio))
        full = _full_multiplier_needed(setting, epsilon, delta, single)
        return full, single

    def sigma_of(log_log_ratio):
        full, single = split(log_log_ratio)
        return math.hypot(setting.full_sensitivity * full, setting.single_sensitivity * single)

    # Any feasible split bounds the optimum: (4 C1) z2* <= sigma* <= sigma(z2 = 2 lowest).
    # The optimum may sit within 1e-4 of ``lowest`` (when the full gradient is cheap), so
    # the search runs on log(log(z2 / lowest)).
    # sigma(z2) need not be unimodal (the best RDP order jumps as z2 moves): a coarse grid
    # picks the basin, a bounded Brent search refines it.
    upper_ratio = sigma_of(math.log(math.log(2.0))) / (setting.single_sensitivity * lowest)
    grid = np.linspace(math.log(_SMALLEST_LOG_RATIO), math.log(math.log(upper_ratio)),
                       _SPLIT_GRID)
    best = int(np.argmin([sigma_of(value) for value in grid]))
    found = optimize.minimize_scalar(
        sigma_of,
        bounds=(grid[max(best - 1, 0)], grid[min(best + 1, _SPLIT_GRID - 1)]),
        method="bounded",
        options={"xatol": _SPLIT_XATOL},
    )
    return split(found.x if found.fun <= sigma_of(grid[best]) else grid[best])


def _full_multiplier_needed(setting, epsilon, delta, single_multiplier):
    """Smallest z1 such that the run with single-sample multiplier z2 meets the target.

    On order a the ledger costs T1 a / (2 z1^2) + T2 R(a; z2) + offset(a) <= epsilon, so
    z1^2 >= T1 a / (2 (epsilon - T2 R(a) - offset(a))) on every order where the bracket
    (the room left by the single-sample steps) is positive; the smallest over those orders.
    """
    _, single = setting.events(1.0, single_multiplier)

    def room(indices):
        return epsilon - event_rdp(single, indices) - conversion_offset(delta, indices)

    left = room(np.arange(len(ORDERS)))
    feasible = left > 0
    if not feasible.any():
        return math.inf
    needed = setting.n_full_releases * ORDERS[feasible] / (2.0 * left[feasible])
    return math.sqrt(float(np.min(needed))) * (1 + 1e-9)
