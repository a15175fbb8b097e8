"""The kernel-ridge weights of structured prediction on public features (Rudi et al. 2018).

An RBF kernel exp(-|x - x'|^2 / (2 h^2)) on the public features; the weights of a new
point x are alpha(x) = (K + gamma I)^(-1) K_x. Everything here reads public features
only.
"""

import numpy as np


def squared_distances(A, B):
    """|a - b|^2 for every row a of A and b of B, shape=[len(A), len(B)]."""
    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)


def rbf_kernel(A, B, bandwidth):
    """exp(-|a - b|^2 / (2 h^2)) for every row a of A and b of B, shape=[len(A), len(B)]."""
    return np.exp(-squared_distances(A, B) / (2 * bandwidth**2))


def regularized_gram(features, bandwidth, regularization):
    """K + gamma I of the RBF kernel on ``features``, shape=[n, n]."""
    return rbf_kernel(features, features, bandwidth) + regularization * np.eye(len(features))


def median_bandwidth(features, max_rows=1000):
    """The median distance between (the first ``max_rows``) rows of public features.

    Returns
    -------
    bandwidth : float
        > 0 (1.0 when every row is the same).
    """
    rows = features[:max_rows]
    distances = np.sqrt(squared_distances(rows, rows))
    positive = distances[np.triu_indices(len(rows), 1)]
    positive = positive[positive > 0]
    return float(np.median(positive)) if positive.size else 1.0


def kernel_weights(X_train, X_new, bandwidth, regularization):
    """Kernel-ridge weights alpha(x) = (K + gamma I)^(-1) K_x, one row per new point.

    Parameters
    ----------
    X_train : numpy.ndarray, shape=[n, p]
    X_new : numpy.ndarray, shape=[k, p]
    bandwidth : float
        h of the RBF kernel exp(-|x - x'|^2 / (2 h^2)).
    regularization : float
        gamma > 0.

    Returns
    -------
    alpha : numpy.ndarray, shape=[k, n]
    """
    gram = regularized_gram(X_train, bandwidth, regularization)
    return np.linalg.solve(gram, rbf_kernel(X_train, X_new, bandwidth)).T


def kernel_ridge_coefficients(features, values, bandwidth, regularization, mean=None):
    """beta = (K + gamma I)^(-1) (v - m) and the prior mean m.

    The Gaussian-process regression of ``values`` whose noise variance over prior
    variance is gamma: its prediction at x is m + K_x^T beta. m is ``mean`` (a prior mean
    released separately), else the shrunk mean sum_i v_i / (n + gamma) (a constant mean of
    the same prior, hence the shrinkage toward 0).

    Parameters
    ----------
    features : numpy.ndarray, shape=[n, p]
    values : numpy.ndarray, shape=[n, ...]
    bandwidth, regularization : float
    mean : numpy.ndarray or None, shape=[q]

    Returns
    -------
    beta : numpy.ndarray, shape=[n, q]
        q the number of entries of a row of ``values``.
    mean : numpy.ndarray, shape=[q]
    """
    rows = values.reshape(len(values), -1)
    if mean is None:
        mean = rows.sum(axis=0) / (len(rows) + regularization)
    gram = regularized_gram(features, bandwidth, regularization)
    return np.linalg.solve(gram, rows - mean), mean


def normalized_weights(alpha):
    """alpha / sum(alpha) row by row; ValueError for a row whose weights do not sum > 0.

    The minimiser of sum_i alpha_i d(w, y_i)^2 does not change when alpha is scaled by a
    positive number; a row whose weights sum to <= 0 has no minimiser (a far-away x whose
    kernel values all underflow, for instance).
    """
    totals = alpha.sum(axis=1)
    bad = np.flatnonzero(~(totals > 0))
    if bad.size:
        raise ValueError(
            f"X row {int(bad[0])}: its kernel weights sum to {totals[bad[0]]:.3g}, expected "
            "> 0 (the point is too far from every training feature for this bandwidth)"
        )
    return alpha / totals[:, None]
