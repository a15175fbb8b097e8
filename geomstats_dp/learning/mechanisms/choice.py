"""``method="auto"`` for means and robust means: a rule on public quantities only.

The rule reads n, the dimension d, epsilon and delta, never a data value, so neighbouring
datasets (and any two datasets of the same shape) choose alike. It compares the one-shot
tangent release's noise with its clip radius: r = sqrt(d) 2 z / n, z the noise multiplier
of one Gaussian release at (epsilon, delta) (the expected norm of the noise over C). When
r is large the coarse stage of the localised release is too noisy to localise anything and
the one-shot release keeps the whole budget ("tangent"); otherwise the localised release
("two_stage") removes the curvature bias of the one-shot release and clips closer to the
data. The threshold is measured on the baseline benchmark (docs/benchmarks/baselines.md).
"""

import math

from geomstats_dp.privacy import calibrate_gaussian

LOCALISE_NOISE_THRESHOLD = 0.05


def one_shot_noise_ratio(n_samples, dim, epsilon, delta):
    """sqrt(d) 2 z / n: the one-shot tangent release's expected noise norm over C."""
    z = calibrate_gaussian(epsilon, delta, 1)
    return math.sqrt(dim) * 2 * z / n_samples


def choose_point_method(n_samples, dim, epsilon, delta):
    """"tangent" or "two_stage" for a loss whose samples are points of the space.

    Parameters
    ----------
    n_samples, dim : int
    epsilon, delta : float

    Returns
    -------
    method : str
    """
    ratio = one_shot_noise_ratio(n_samples, dim, epsilon, delta)
    return "tangent" if ratio > LOCALISE_NOISE_THRESHOLD else "two_stage"
