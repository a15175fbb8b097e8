"""``method="auto"`` for means and robust means: a rule on public quantities only.

The rule reads n, the dimension d, epsilon and delta, never a data value, so neighbouring
datasets (and any two datasets of the same shape) choose alike. It compares the one-shot
tangent release's noise with its clip radius: r = sqrt(d) 2 z / n, z the noise multiplier
of one Gaussian release at (epsilon, delta) (the expected norm of the noise over C).

- on the hypersphere (the Frechet mean), EXTRINSIC_LOW < r <= EXTRINSIC_HIGH: the
  projected extrinsic mean ("extrinsic", ``mechanisms.extrinsic``): one release of the
  mean of the unit vectors, whose noise, r in norm, does not depend on the start's
  distance nor on a clip radius. Above EXTRINSIC_HIGH its noise outweighs even a mean of
  norm 1 and the direction is mostly noise; below EXTRINSIC_LOW its bias (the extrinsic
  mean is not the Frechet mean) outweighs its noise.
- r > RGD_NOISE_THRESHOLD: the noise dominates; DP-RGD ("rgd"), whose noise-aware steps
  shrink the noisy steps towards the start, had the smallest error.
- otherwise the localised release ("two_stage"), which removes the one-shot release's
  curvature bias, travels from a far start, and clips closer to the data.

For the Frechet mean with a public ball B(center, radius) (uniform weights): the
Riemannian Laplace release ("laplace", pure DP) when its law has an exact sampler and its
expected noise, d sigma_L, is at most LAPLACE_RATIO_THRESHOLD times the one-shot Gaussian
release's, sqrt(d) z 2 radius / n (``laplace_noise_ratio``): it adds its noise to the exact
mean, with neither clipping nor curvature bias.

Measured on the baseline benchmark (docs/benchmarks/baselines.md, "which method when";
EXTRINSIC_LOW from the digits, optdigits and satimage rows, checked on the held-out
spambase, wdbc, sonar and libras rows):
the one-shot "tangent" release won only where the records sit near the public start
(satimage rows at epsilon 1), which no public quantity tells, and lost badly where they
sit far from it, so "auto" does not pick it.
"""

import math

from geomstats_dp.distributions import RiemannianLaplace
from geomstats_dp.distributions.laplace import laplace_scale
from geomstats_dp.distributions.laplace.mean_solver import released_mean_sensitivity
from geomstats_dp.distributions.laplace.riemannian_laplace import MAX_EXACT_SPD_SIZE
from geomstats_dp.distributions.laplace.sensitivity import locally_bounded
from geomstats_dp.privacy import calibrate_gaussian

RGD_NOISE_THRESHOLD = 0.1
EXTRINSIC_HIGH = 1.0  # the one-shot noise norm equals the largest mean's norm, 1
EXTRINSIC_LOW = 0.01  # measured on the baseline benchmark (module docstring)
LAPLACE_RATIO_THRESHOLD = 0.8  # the largest ratio measured where Laplace won


def one_shot_noise_ratio(n_samples, dim, epsilon, delta):
    """sqrt(d) 2 z / n: the one-shot tangent release's expected noise norm over C."""
    z = calibrate_gaussian(epsilon, delta, 1)
    return math.sqrt(dim) * 2 * z / n_samples


def choose_point_method(n_samples, dim, epsilon, delta, extrinsic=False):
    """"extrinsic", "rgd" or "two_stage" for a loss whose samples are points of the space.

    Parameters
    ----------
    n_samples, dim : int
    epsilon, delta : float
    extrinsic : bool
        Whether "extrinsic" is a candidate (the Frechet mean on the hypersphere).

    Returns
    -------
    method : str
    """
    ratio = one_shot_noise_ratio(n_samples, dim, epsilon, delta)
    if extrinsic and EXTRINSIC_LOW < ratio <= EXTRINSIC_HIGH:
        return "extrinsic"
    return "rgd" if ratio > RGD_NOISE_THRESHOLD else "two_stage"


def laplace_noise_ratio(space, n_samples, epsilon, delta, radius, center):
    """The Laplace release's expected noise norm d sigma_L over the one-shot Gaussian's
    sqrt(d) z 2 r / n, both for data in the public ball B(center, r); None when the
    Laplace law has no exact sampler or does not exist at this scale (public)."""
    if locally_bounded(space):  # Bures-Wasserstein: a restricted law, sampled by MCMC
        return None
    try:  # radius beyond Reimherr et al.'s Assumption 1 or the mean solver's proof, or a
        # scale with no law
        sensitivity, _ = released_mean_sensitivity(space, radius, n_samples, center)
        scale = laplace_scale(sensitivity, epsilon, space)
        law = RiemannianLaplace(space, center, scale)
    except (ValueError, NotImplementedError):  # NotImplementedError: no curvature bounds
        return None
    family = law.geometry.family
    if family == "generic" or (family == "spd_affine" and space.n > MAX_EXACT_SPD_SIZE):
        return None  # sampled by Metropolis-Hastings: not a default
    dim = int(space.dim)
    return dim * scale / (one_shot_noise_ratio(n_samples, dim, epsilon, delta) * radius)
