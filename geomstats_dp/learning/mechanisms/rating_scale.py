"""A private scale of the ratings that tightens a loose public bound of DP-ALS.

Without a public ``rating_range``, DP-ALS knows the ratings' scale only through the
user's ``clip_norm`` C, which stands for a half-width h_C = (C / sqrt(3/8))^(1/2) of the
centred ratings (``matrix_completion``). A loose C sizes every release's noise, 2zC, to
ratings far larger than the data's, and the Gaussian noise of a huge epsilon falls only
as 1/sqrt(epsilon): with a C two orders of magnitude above what the users' statistics
need, it still hides the item subspace at epsilon 1e6. This release first draws a private
``quantile`` of the users' largest absolute centred rating, h_hat (the exponential
mechanism on the public grid h_C x ``SCALE_GRID``, ``privacy.quantile`` with
``scale_utility``), and the release
then runs with

    h = min(h_C, h_hat),    C = min(C, sqrt(3/8) h^2),

the relation the default clip norm has to a public range's half-width. Nothing else
changes: a user whose statistics exceed the tightened C is scaled down to it, as before.

Privacy. Adjacency: USER-LEVEL replace-one. Each user gives one value (their largest
|rating - offset|; 0 without a rating, +inf with an infinite one), so each candidate's
utility, minus the distance of q n to [#{v < c}, #{v <= c}], moves by at most 1 (each
count moves by at most 1): a ``PureEvent`` of the quantile's epsilon (McSherry &
Talwar 2007). The later Gaussian releases are calibrated from their own epsilon share
before any rating is read; their sensitivities (2C, sqrt(2) C, 2h) follow the released
scale (post-processing), so their events state the noise multiplier only. The total is
the basic composition of the quantile with them (``PrivacyBudget``).
"""

import dataclasses

import numpy as np

from geomstats_dp.privacy.quantile import (
    interval_utility,
    private_quantile,
    quantile_event,
)

SCALE_GRID = np.geomspace(1e-3, 1.0, 37)  # candidates for h / h_C: 12 a decade
CLIP_PER_SQUARED_HALF_WIDTH = float(np.sqrt(3 / 8))  # C = sqrt(3/8) h^2


def largest_ratings(ratings):
    """Each user's largest |centred rating|: 0 without a rating, +inf with an infinite one.

    Parameters
    ----------
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Centred ratings, NaN where missing.

    Returns
    -------
    largest : numpy.ndarray, shape=[n_users]
    """
    magnitudes = np.where(np.isnan(ratings), 0.0, np.abs(ratings))
    return magnitudes.max(axis=1, initial=0.0)


def scale_utility(values, grid, quantile):
    """``privacy.quantile.interval_utility`` of the values clamped to the grid's top:
    values above the grid count as its top candidate (the public bound), so that data
    beyond a tight bound choose the bound itself rather than tie every candidate (the
    rank utility of ``privacy.quantile`` would). Sensitivity 1.

    Parameters
    ----------
    values : numpy.ndarray, shape=[n]
    grid : numpy.ndarray, shape=[k]
        Public, increasing candidates.
    quantile : float
        q in (0, 1).

    Returns
    -------
    utility : numpy.ndarray, shape=[k]
    """
    return interval_utility(np.minimum(values, grid[-1]), grid, quantile)


def scale_event(spec):
    """The ledger event of the scale quantile of a DP-ALS spec (whose ``scale`` is set)."""
    return quantile_event(spec.scale.epsilon, spec.scale_label)


def tightened(spec, blocks, rng):
    """``spec`` with its half-width and clip norm tightened by the private scale (module
    docstring), and no scale left to release; ``spec`` itself when its ``scale`` is None.

    Parameters
    ----------
    spec : AlternatingLeastSquaresRelease
    blocks : iterable of (slice, numpy.ndarray)
        The users' centred ratings, a block of rows at a time
        (``alternating_least_squares.user_blocks``), NaN where missing.
    rng : numpy.random.Generator

    Returns
    -------
    spec : AlternatingLeastSquaresRelease
    """
    if spec.scale is None:
        return spec
    largest = np.concatenate([np.zeros(0)] + [largest_ratings(block) for _, block in blocks])
    scale = private_quantile(largest, spec.scale.quantile, spec.scale.epsilon, rng,
                             grid=spec.half_width * SCALE_GRID, label=spec.scale_label,
                             utility=scale_utility, adjacency="user_level")
    half_width = min(spec.half_width, scale)
    return dataclasses.replace(
        spec, half_width=half_width, scale=None,
        clip_norm=min(spec.clip_norm, CLIP_PER_SQUARED_HALF_WIDTH * half_width**2))
