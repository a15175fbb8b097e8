"""The item side's post-processing in DP-ALS: shrunk solutions of the noisy normal
equations and the scaled basis users fit against (``alternating_least_squares``)."""

import math

import numpy as np

SHRINKAGE_FLOOR = 1e-24
SPAN_TOLERANCE = 1e-10


def scaled_basis(factors):
    """sqrt(n_items) times an orthonormal basis of the span of ``factors`` [n_items, r].

    Directions ``factors`` do not span (all of them for zero factors) are zero columns.
    """
    left, singular, _ = np.linalg.svd(factors, full_matrices=False)
    spanned = singular > SPAN_TOLERANCE * max(singular.max(initial=0.0), 1e-300)
    return math.sqrt(factors.shape[0]) * left * spanned


def solve_items(grams, moments, threshold, shrinkage):
    """Shrunk solutions of the noisy normal equations G_j (b_j, f_j) = m_j.

    The eigenvalues e of G_j are soft-thresholded, e' = max(e - threshold, 0) (the noise's
    spectral norm), and the solution is sum_k e'_k / (e'_k^2 + shrinkage^2) q_k q_k^T m_j:
    the posterior mean under noise of std ``shrinkage`` on m_j and a unit prior on the
    coefficients; 1 / e'_k where e'_k >> shrinkage, 0 where e'_k = 0.

    Returns
    -------
    coefficients : numpy.ndarray, shape=[n_items, r + 1]
    """
    eigenvalues, eigenvectors = np.linalg.eigh(grams)
    gain = np.maximum(eigenvalues - threshold, 0.0) / (
        eigenvalues**2 + shrinkage**2 + SHRINKAGE_FLOOR)
    coordinates = np.einsum("jik,ji->jk", eigenvectors, moments) * gain
    return np.einsum("jik,jk->ji", eigenvectors, coordinates)
