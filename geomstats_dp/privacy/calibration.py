"""Noise calibration: the smallest noise multiplier that meets an (epsilon, delta) target.

Full-batch Gaussians are calibrated in closed form through Gaussian DP; subsampled ones by a
guarded search in log space (``noise_search``) on the same accountant that
``compose_epsilon`` uses, so that a calibrated event always passes ``PrivacyBudget.check``.
Results are cached: estimators calibrate on every fit.
"""

import functools
import math

from geomstats_dp._validation import check_positive_finite, check_probability
from geomstats_dp.privacy.accountant import compose_epsilon
from geomstats_dp.privacy.events import GaussianEvent
from geomstats_dp.privacy.gaussian_dp import gdp_mu
from geomstats_dp.privacy.noise_search import smallest_noise


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
    target (exact, microseconds). Subsampled: a search on the RDP accountant (autodp) from a
    central-limit guess, a few evaluations of an autodp curve whatever ``n_steps`` (counts
    and timings: docs/benchmarks/accounting.md, "Calibration time"); the result meets the
    target and is within a relative 1e-4 (in epsilon) of the smallest multiplier that
    does. Cached.
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
    def events_of(noise_multiplier):
        return (GaussianEvent(noise_multiplier, n_steps, sampling_rate, sampling, adjacency),)

    mu = gdp_mu(epsilon, delta)
    if sampling_rate == 1.0:
        noise_multiplier = math.sqrt(n_steps) / mu
        while compose_epsilon(events_of(noise_multiplier), delta) > epsilon:  # rounding
            noise_multiplier *= 1 + 1e-12
        return noise_multiplier

    # Central-limit guess (Bu et al. 2020): T steps at rate q are close to
    # q sqrt(T (e^{1/z^2} - 1))-GDP; without replacement (replace-one) the accounted
    # cost is about that of twice less noise.
    factor = 2.0 if sampling == "without_replacement" else 1.0
    initial = factor / math.sqrt(math.log1p(mu**2 / (sampling_rate**2 * n_steps)))
    return smallest_noise(events_of, epsilon, delta, initial)


def share_noise_multipliers(epsilon, delta, shares):
    """Noise multipliers z / sqrt(share_k) of single Gaussian releases splitting mu^2.

    z is the multiplier of one (epsilon, delta)-DP Gaussian release; releases with shares
    summing to 1 compose exactly (1 / z^2 = sum_k share_k / z^2) to (epsilon, delta).

    Returns
    -------
    multipliers : tuple of float
    """
    z = calibrate_gaussian(epsilon, delta, 1)
    return tuple(float(z / math.sqrt(share)) for share in shares)

