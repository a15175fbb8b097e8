"""Per-record maps of PrivatePCA's rows and the small Gaussian releases made from them.

Every map here acts on each row alone (non-finite rows to zero, rows longer than the
public bound B scaled down to it, a released mean subtracted), so a replaced record
changes one mapped row, which still has norm <= B: the sensitivities below hold for
any data.
"""

import numpy as np


def bounded_rows(X, bound):
    """Rows with a non-finite entry set to zero, the others scaled to norm <= ``bound``.

    Parameters
    ----------
    X : numpy.ndarray, shape=[n_samples, n_features]
    bound : float

    Returns
    -------
    rows : numpy.ndarray, shape=[n_samples, n_features]
    """
    rows = np.where(np.isfinite(X).all(axis=1, keepdims=True), X, 0.0)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows * np.minimum(1.0, bound / np.maximum(norms, 1e-300))


def noisy_mean(rows, noise_std, rng):
    """The mean of the rows plus N(0, noise_std^2 I): sensitivity 2B / n (replace-one).

    Returns
    -------
    mean : numpy.ndarray, shape=[n_features]
    """
    return rows.mean(axis=0) + noise_std * np.asarray(rng.standard_normal(rows.shape[1]))


def noisy_trace(rows, noise_std, rng):
    """(1/n) sum |z|^2 plus N(0, noise_std^2): sensitivity B^2 / n (|z|^2 in [0, B^2]).

    Returns
    -------
    trace : float
    """
    return float(np.sum(rows**2) / len(rows) + noise_std * rng.standard_normal())


def noisy_second_moment(rows, noise_std, rng):
    """(1/n) sum z z^T plus a symmetric Gaussian matrix (iid upper triangle, mirrored).

    Replace-one sensitivity of the upper triangle (diagonal included) as a vector:
    sqrt(2) B^2 / n (``second_moment_sensitivity``).

    Returns
    -------
    matrix : numpy.ndarray, shape=[n_features, n_features]
    """
    p = rows.shape[1]
    upper = np.triu(noise_std * np.asarray(rng.standard_normal((p, p))))
    return rows.T @ rows / len(rows) + upper + np.triu(upper, 1).T


def noisy_projected_moments(rows, basis, noise_std, rng):
    """The second moment of the projections u = W^T z and the residual, plus noise.

    Each record contributes (the upper triangle of u u^T, |z|^2 - |u|^2). With a = |u|^2,
    b = |u'|^2 and r, r' >= 0 the residuals (a + r, b + r' <= B^2), two records differ by
    at most a^2 + b^2 - 2 (u . u')^2 + (r - r')^2 <= 2 B^4 in squared L2 norm, so the
    mean has sensitivity sqrt(2) B^2 / n, the same as the full matrix's
    (``second_moment_sensitivity``). Noise as in ``noisy_second_moment``, and on the
    residual.

    Parameters
    ----------
    rows : numpy.ndarray, shape=[n_samples, n_features]
    basis : numpy.ndarray, shape=[n_features, k]
        Orthonormal columns.
    noise_std : float
    rng : numpy.random.Generator

    Returns
    -------
    moments : numpy.ndarray, shape=[k, k]
    residual : float
    """
    projections = rows @ basis
    residuals = np.maximum(np.sum(rows**2, axis=1) - np.sum(projections**2, axis=1), 0.0)
    moments = noisy_second_moment(projections, noise_std, rng)
    return moments, residuals.mean() + noise_std * float(rng.standard_normal())


def second_moment_sensitivity(bound, n_samples):
    """sqrt(2) B^2 / n: the most the upper triangle of (1/n) sum z z^T moves (L2 norm).

    For |z|, |z'| <= B, |z z^T - z' z'^T|_F^2 = |z|^4 + |z'|^4 - 2 (z . z')^2 <= 2 B^4,
    and the upper triangle holds at most the Frobenius norm; equality for z = B e_1,
    z' = B e_2.
    """
    return np.sqrt(2.0) * bound**2 / n_samples
