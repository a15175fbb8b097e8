"""A public diagnostic of a private run: will the noise drown the signal?

On the model problem f(x; z) = |x - z|^2 / 2 in flat space, a run of steps eta_t from a
start at distance D from the minimiser gives e_(t+1) = (1 - eta_t) e_t - eta_t xi_t for
the error e_t, with xi_t ~ N(0, sigma^2 I_d). The release (last iterate, a uniform or
weighted average, or a uniformly drawn iterate: ``optim.outputs``) is then
B e_0 + sum_t c_t xi_t, with B and c_t fixed by the schedule. The noise ratio

    noise_ratio = sqrt(d sum_t c_t^2 sigma^2) / ((1 - B) C)

compares the expected norm of the release's noise displacement with the largest progress
the clipped signal can make towards a minimiser at distance D <= C. Above 1 the noise
moves the release farther than the data can pull it: the release is expected to be no
closer to the minimiser than the data-independent start (``NoiseDominatesWarning``).
Everything here is public (d, C, the schedule and the calibrated sigma, a function of n,
epsilon and delta), so the ratio and its warning are identical for neighbouring datasets.
For DP-RSVRG the two noises of an inner step are counted as independent (the snapshot's
noise is in fact shared within an epoch): an approximation.

The threshold 1 serves every estimator that warns (each states its ratio); it was
checked on the baseline benchmark's cells against the constant answer (the public start;
structured prediction: the constant private mean): ``benchmarks/noise_warning.py``,
docs/benchmarks/baselines.md.
"""

import math
import sys
import warnings
from pathlib import Path

import numpy as np

NOISE_RATIO_THRESHOLD = 1.0  # measured on the baseline benchmark's cells (module doc)
PACKAGE = str(Path(__file__).resolve().parents[1])


def user_stacklevel():
    """The ``stacklevel`` that makes a warning point at the first caller outside the
    package (counted from the function calling this one)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _output_weights(output, n_steps):
    """Weights a_k of the iterates w_0..w_T in the release (w_0 the start)."""
    weights = np.zeros(n_steps + 1)
    if output == "last":
        weights[-1] = 1.0
    elif output == "random":
        weights[:-1] = 1.0 / n_steps
    elif output == "average":
        weights[1:] = 1.0 / n_steps
    else:  # weighted_average: Euclidean weights proportional to k - 1, k = 1..T
        ranks = np.arange(n_steps + 1) - 1.0
        ranks[0] = 0.0
        weights = ranks / ranks.sum() if ranks.sum() > 0 else _output_weights("last", n_steps)
    return weights


def noise_ratio(step_sizes, noise_stds, dim, clip_norm, output):
    """The noise ratio of a run (module docstring).

    Parameters
    ----------
    step_sizes : numpy.ndarray, shape=[T]
    noise_stds : tuple of float
        Standard deviations of the noises added at each step.
    dim : int
    clip_norm : float
    output : str
        One of ``geomstats_dp.optim.OUTPUTS``.

    Returns
    -------
    ratio : float
    """
    steps = np.minimum(np.asarray(step_sizes, dtype=np.float64), 1.0)
    n_steps = len(steps)
    weights = _output_weights(output, n_steps)
    contraction = np.concatenate([[1.0], np.cumprod(1 - steps)])  # P(0, k-1) for e_k
    remaining = float(weights @ contraction)
    # g[s] = sum_{k > s} a_k prod_{s < r < k} (1 - eta_r), by a backward recursion
    g = np.zeros(n_steps)
    g[-1] = weights[-1]
    for s in range(n_steps - 2, -1, -1):
        g[s] = weights[s + 1] + (1 - steps[s + 1]) * g[s + 1]
    variance = dim * sum(std**2 for std in noise_stds) * float(np.sum((steps * g) ** 2))
    progress = (1 - remaining) * clip_norm
    return math.sqrt(variance) / progress if progress > 0 else math.inf


class NoiseDominatesWarning(UserWarning):
    """The calibrated noise is expected to move the release more than the data can."""

    @classmethod
    def warn_if(cls, ratio, meaning=None, constant="the data-independent start"):
        """Warn when ``ratio`` exceeds NOISE_RATIO_THRESHOLD; ``meaning`` (optional) says
        what the ratio compares, with ``{ratio}`` where its value goes, ``constant`` the
        trivial answer the release is expected to do no better than."""
        if ratio > NOISE_RATIO_THRESHOLD:
            meaning = meaning or ("the release's expected noise displacement is {ratio} "
                                  "times the largest progress the clipped data can make")
            warnings.warn(
                f"{meaning.format(ratio=f'{ratio:.3g}')} (noise_ratio_ > "
                f"{NOISE_RATIO_THRESHOLD:g}): expect a release no better than "
                f"{constant}. More data or a larger epsilon help; see "
                "noise_ratio_ in the docs of the estimator.",
                cls,
                stacklevel=user_stacklevel(),
            )


def reach(step_sizes, clip_norm, gradient_bound=None):
    """How far a schedule can travel, over the distance it may have to travel.

    For the squared distance (and its Huber version) with every record within C of the
    start, the minimiser lies within C of the start, and a step moves by at most
    eta_t min(C, D), D the bound on the loss's gradient norms (the Huber radius). The
    schedule can reach the minimiser only if sum_t eta_t min(C, D) >= C. Public: the
    schedule, C and D.

    Parameters
    ----------
    step_sizes : numpy.ndarray, shape=[T]
    clip_norm : float
    gradient_bound : float, optional

    Returns
    -------
    ratio : float
    """
    bound = clip_norm if gradient_bound is None else min(clip_norm, gradient_bound)
    return float(np.sum(step_sizes)) * bound / clip_norm


class ScheduleStopsShortWarning(UserWarning):
    """The steps cannot travel as far as the minimiser may lie from the start."""

    @classmethod
    def warn_if(cls, ratio):
        """Warn when ``ratio`` (``reach``) is below 1."""
        if ratio < 1:
            warnings.warn(
                f"the step sizes add up to {ratio:.3g} times the distance the minimiser "
                "may lie from the start (clip_norm), with the loss's gradients bounded "
                "by its radius: the release may stop short of the minimiser. More steps "
                "(n_iter), a larger loss radius, or a start nearer the data help.",
                cls,
                stacklevel=user_stacklevel(),
            )
