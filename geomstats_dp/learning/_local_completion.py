"""The user's side of the billboard model: a row completed from released item factors.

Given the released item offsets b [n_items] and item factors F [n_items, r], user u
with observed items Omega and centred ratings x fits their own bias c and factor v,

    (c, v) = argmin sum_{j in Omega} (x_j - b_j - c - F_j v)^2 + lambda (c^2 + |v|^2),

and predicts b_j + c + F_j v for every item j. This reads only the user's own ratings and
released quantities (Jain et al. 2018): post-processing for everyone else. A user with no
rating gets c = 0 and v = 0.
"""

import numpy as np

from geomstats_dp._backend import to_numpy

OFFSET_STRICTNESS = 2.0  # tau of ``shrunk_offsets`` (benchmarks/matrix_completion_offsets.py)


def fit_users(item_offsets, item_factors, ratings, regularization):
    """Each user's ridge fit (c_u, v_u) of their own ratings on the item features.

    Parameters
    ----------
    item_offsets : numpy.ndarray, shape=[n_items]
    item_factors : numpy.ndarray, shape=[n_items, r]
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Centred ratings, NaN where missing (rows holding a non-finite rating are fitted
        on their finite entries only).
    regularization : float
        lambda > 0.

    Returns
    -------
    biases : numpy.ndarray, shape=[n_users]
    factors : numpy.ndarray, shape=[n_users, r]
    """
    n_items = len(item_offsets)
    observed = np.isfinite(ratings)
    features = np.concatenate([np.ones((n_items, 1)), item_factors], axis=1)
    width = features.shape[1]
    outer = np.einsum("ji,jk->jik", features, features).reshape(n_items, width**2)
    gram = (observed.astype(np.float64) @ outer).reshape(-1, width, width)
    gram += regularization * np.eye(width)
    targets = np.where(observed, ratings - item_offsets, 0.0)
    solution = np.linalg.solve(gram, (targets @ features)[..., None])[..., 0]
    return solution[:, 0], solution[:, 1:]


def complete_rows(item_offsets, item_factors, ratings, regularization):
    """b_j + c_u + F_j v_u for every user u and item j (``fit_users``).

    Returns
    -------
    completed : numpy.ndarray, shape=[n_users, n_items]
        Centred predictions (add the public offset back).
    """
    biases, factors = fit_users(item_offsets, item_factors, ratings, regularization)
    return biases[:, None] + item_offsets + factors @ item_factors.T


def shrunk_offsets(item_offsets, ratings, strictness=OFFSET_STRICTNESS):
    """Each user's own offset against the item offsets, shrunk on their own ratings.

    User u's residuals r_j = x_uj - b_j over their k_u ratings have mean c_u and sample
    variance s_u^2; the offset is c_u max(0, 1 - tau s_u^2 / (k_u c_u^2)) (tau = 1: a
    positive-part James-Stein factor with the user's own estimate of the variance of c_u;
    tau = 2 keeps about the offsets a leave-one-out check on the user's own ratings
    keeps): the user's
    offset where it stands out of their own noise, 0 where it does not, and 0 with fewer
    than two ratings, or where a rating overflows. It reads only the user's row and the
    released offsets.

    Parameters
    ----------
    item_offsets : numpy.ndarray, shape=[n_items]
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Centred ratings, NaN where missing (non-finite ones count as missing).
    strictness : float
        tau > 0.

    Returns
    -------
    offsets : numpy.ndarray, shape=[n_users]
    """
    observed = np.isfinite(ratings)
    counts = observed.sum(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing row: 0 below
        residuals = np.where(observed, ratings - item_offsets, 0.0)
        means = residuals.sum(axis=1) / np.maximum(counts, 1)
        squares = np.where(observed, residuals - means[:, None], 0.0) ** 2
        variances = squares.sum(axis=1) / np.maximum(counts - 1, 1)
        spread = counts * means**2
        factor = np.clip(1.0 - strictness * variances / np.where(spread > 0, spread, 1.0),
                         0.0, 1.0)
    offsets = np.where((counts > 1) & (spread > 0), factor * means, 0.0)
    return np.where(np.isfinite(offsets), offsets, 0.0)  # an overflowing row: 0


def complete_offsets(item_offsets, ratings, strictness=OFFSET_STRICTNESS):
    """b_j + the user's shrunk offset (``shrunk_offsets``) for every user u and item j:
    the rank-0 completion.

    Returns
    -------
    completed : numpy.ndarray, shape=[n_users, n_items]
        Centred predictions (add the public offset back).
    """
    return shrunk_offsets(item_offsets, ratings, strictness)[:, None] + item_offsets


def centred_ratings(ratings, rating_range, offset):
    """Ratings clipped to the public ``rating_range`` (if any), minus the public offset.

    Parameters
    ----------
    ratings : array-like, shape=[n_users, n_items]
        NaN where missing.
    rating_range : tuple of two floats or None
    offset : float

    Returns
    -------
    centred : numpy.ndarray, shape=[n_users, n_items]
    """
    ratings = to_numpy(ratings)
    if rating_range is not None:
        ratings = np.clip(ratings, *(float(bound) for bound in rating_range))
    return ratings - offset


def rmse(predicted, ratings):
    """Root mean squared error over the observed (finite) entries of ``ratings``.

    Parameters
    ----------
    predicted, ratings : numpy.ndarray, shape=[n_users, n_items]

    Returns
    -------
    rmse : float
    """
    observed = ~np.isnan(ratings)
    return float(np.sqrt(np.mean((predicted[observed] - ratings[observed]) ** 2)))
