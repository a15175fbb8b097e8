"""Noise calibration: the smallest noise multiplier that meets an (epsilon, delta) target.

Full-batch Gaussians are calibrated in closed form through Gaussian DP; subsampled ones by a
monotone search in log space (a bracket grown from a central-limit guess, then Brent's
method) on the same accountant that ``compose_epsilon`` uses, so that a calibrated event
always passes ``PrivacyBudget.check``. Results are cached: estimators calibrate on every fit.
"""

import functools
import math

from geomstats_dp._validation import check_positive_finite, check_probability
from geomstats_dp.privacy.accountant import compose_epsilon
from geomstats_dp.privacy.events import GaussianEvent
from geomstats_dp.privacy.gaussian_dp import gdp_mu

NOISE_RANGE = (1e-3, 1e8)
_LOG_TOL = 1e-5  # relative gap to the target epsilon at which a search stops
_LOG_XTOL = 1e-9
_MAX_ITERATIONS = 100


def check_target(epsilon, delta):
    """Return (epsilon, delta) as floats after checking a Gaussian mechanism can meet them."""
    epsilon = check_positive_finite(epsilon, "epsilon")
    delta = check_probability(delta, "delta", allow_zero=True)
    if delta == 0:
        raise ValueError(
            "delta must be > 0 for a Gaussian mechanism (no Gaussian release is "
            "(epsilon, 0)-DP); use a pure-DP mechanism such as the Laplace mechanism"
        )
    return epsilon, delta


def smallest_noise(epsilon_of, target, initial, name="noise multiplier"):
    """Smallest x in ``NOISE_RANGE`` with ``epsilon_of(x) <= target``.

    Parameters
    ----------
    epsilon_of : callable
        float -> float, non-increasing (more noise, less privacy loss).
    target : float
        The epsilon to meet.
    initial : float
        A guess of the answer; the bracket grows from it geometrically.
    name : str
        What x is, for the error message.

    Returns
    -------
    x : float
        ``epsilon_of(x) <= target`` holds exactly, and ``epsilon_of(x) >= target *
        (1 - 1e-5)`` (or x is within a relative 1e-9 of the smallest such value).

    Raises
    ------
    ValueError
        If even the largest x of ``NOISE_RANGE`` misses the target.
    """
    low_limit, high_limit = (math.log(bound) for bound in NOISE_RANGE)

    def excess(log_x):
        return math.log(max(epsilon_of(math.exp(log_x)), 1e-300)) - math.log(target)

    log_x = min(max(math.log(initial), low_limit), high_limit)
    value = excess(log_x)
    step = min(max(abs(value) * 1.2, 0.2), 5.0)  # epsilon ~ 1/x: one step nearly brackets
    direction = 1.0 if value > 0 else -1.0
    while True:
        previous = (log_x, value)
        log_x = min(max(log_x + direction * step, low_limit), high_limit)
        value = excess(log_x)
        if (value > 0) != (direction > 0):
            break
        if log_x in (low_limit, high_limit):
            if direction > 0:
                raise ValueError(
                    f"the target epsilon={target} cannot be met: even a {name} of "
                    f"{NOISE_RANGE[1]:g} gives epsilon={epsilon_of(math.exp(log_x)):.4g}"
                )
            return NOISE_RANGE[0]
        step *= 2
    infeasible, feasible = sorted((previous, (log_x, value)), key=lambda point: point[0])
    return math.exp(_illinois(excess, infeasible, feasible))


def _illinois(excess, infeasible, feasible):
    """Regula falsi with the Illinois modification on a bracket of the decreasing ``excess``.

    ``infeasible`` and ``feasible`` are (log x, excess) with excess > 0 and <= 0; returns a
    feasible log x whose excess is within ``_LOG_TOL`` of zero (or bracket below 1e-9).
    """
    (low, f_low), (high, f_high) = infeasible, feasible
    last_side = 0
    for _ in range(_MAX_ITERATIONS):
        if f_high >= -_LOG_TOL or high - low < _LOG_XTOL:
            break
        middle = high - f_high * (high - low) / (f_high - f_low)
        if not low < middle < high:
            middle = (low + high) / 2
        f_middle = excess(middle)
        if f_middle > 0:
            low, f_low = middle, f_middle
            if last_side < 0:
                f_high /= 2
            last_side = -1
        else:
            high, f_high = middle, f_middle
            if last_side > 0:
                f_low /= 2
            last_side = 1
    return high


def calibrate_gaussian(
    epsilon, delta, n_steps, sampling_rate=1.0, sampling="full", adjacency="replace_one"
):
    """Smallest noise multiplier z with which ``n_steps`` Gaussian steps are (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta, in (0, 1).
    n_steps : int
        Number of steps composed.
    sampling_rate : float
        b/n (without replacement) or the inclusion probability (Poisson); 1.0 for the full
        batch.
    sampling : {"full", "without_replacement", "poisson"}
        As in GaussianEvent.
    adjacency : {"replace_one", "add_remove"}
        As in GaussianEvent; z is relative to the sensitivity of one step's query under it
        (2C/n for a replace-one mean of n gradients clipped to C; 2C/b for a batch of b).

    Returns
    -------
    noise_multiplier : float
        ``compose_epsilon([GaussianEvent(z, n_steps, ...)], delta) <= epsilon``.

    Raises
    ------
    ValueError
        For delta = 0, or a target no noise level up to 1e8 meets.

    Notes
    -----
    Full batch: z = sqrt(n_steps) / mu with mu the largest Gaussian-DP parameter meeting the
    target (exact). Subsampled: a search on the RDP accountant (autodp); about ten
    evaluations of an autodp curve, each ~0.1 s, whatever ``n_steps``. Cached.
    """
    epsilon, delta = check_target(epsilon, delta)
    template = GaussianEvent(1.0, n_steps, sampling_rate, sampling, adjacency)
    return _calibrate_gaussian(
        epsilon,
        delta,
        template.n_steps,
        template.sampling_rate,
        template.sampling,
        template.adjacency,
    )


@functools.lru_cache(maxsize=1024)
def _calibrate_gaussian(epsilon, delta, n_steps, sampling_rate, sampling, adjacency):
    def epsilon_of(noise_multiplier):
        event = GaussianEvent(noise_multiplier, n_steps, sampling_rate, sampling, adjacency)
        return compose_epsilon([event], delta)

    mu = gdp_mu(epsilon, delta)
    if sampling_rate == 1.0:
        noise_multiplier = math.sqrt(n_steps) / mu
        while epsilon_of(noise_multiplier) > epsilon:  # rounding of sqrt(T) / mu
            noise_multiplier *= 1 + 1e-12
        return noise_multiplier

    # Central-limit guess (Bu et al. 2020): T subsampled steps behave like
    # q sqrt(T (e^{1/z^2} - 1))-GDP, i.e. z ~ q sqrt(T) / mu when z is not small.
    initial = max(sampling_rate * math.sqrt(n_steps) / mu, 0.5)
    return smallest_noise(epsilon_of, epsilon, initial)
