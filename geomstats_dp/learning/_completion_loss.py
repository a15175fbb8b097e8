"""The per-user loss of matrix completion on the Grassmannian (the gradient methods).

A point is an orthonormal basis W [n_items, r] of an r-dimensional subspace of item space
(``GrassmannBases``: Gr(n_items, r) on bases, tangent vectors horizontal, metric
tr(U^T V)). The loss of one user u, with observed items Omega_u and centred ratings x_u,
is (Han et al. 2024, Section 6.5; Boumal & Absil 2011, RTRMC)

    f(W; x_u) = min_v |P_Omega(x_u - W v)|^2 + lambda |v|^2
              = |r_u|^2 + lambda |v_u|^2,

v_u = (W_Omega^T W_Omega + lambda I)^(-1) W_Omega^T x_Omega the (ridge) least-squares fit
and r_u = P_Omega(x_u - W v_u). It depends on span(W) only. By the envelope theorem its
Euclidean gradient is -2 r_u v_u^T, and its Riemannian gradient the horizontal projection

    grad f(W; x_u) = -2 (I - W W^T) r_u v_u^T,   |grad f| <= 2 |r_u| |v_u|.

A user with no ratings has v_u = 0 and a zero gradient. An item i nobody rated has a zero
row in every r_u, so the data pull its row of W only through the ridge term: the row of
the gradient is 2 lambda W_i v_u v_u^T (W^T r_u = lambda v_u by the normal equations), of
the order of lambda; with lambda -> 0 (the plain least squares of Han et al.) it vanishes.
"""

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.grassmann_bases import horizontal_projection
from geomstats_dp.optim import PerSampleLoss


def check_ratings(ratings, name="X"):
    """Raise ValueError unless ``ratings`` holds finite values or NaN.

    A matrix with no rating at all is valid (a release from it is noise only): whether
    any user rated anything must not decide between an error and a release.

    Parameters
    ----------
    ratings : numpy.ndarray, shape=[n_users, n_items]
    name : str
    """
    infinite = np.isinf(ratings)
    if infinite.any():
        index = tuple(int(i) for i in np.argwhere(infinite)[0])
        raise ValueError(
            f"{name} holds an infinite value at index {index}; expected finite ratings "
            "or NaN for a missing rating"
        )


def least_squares_coefficients(basis, ratings, regularization):
    """v_u = (W_Omega^T W_Omega + lambda I)^(-1) W_Omega^T x_Omega for every row.

    Parameters
    ----------
    basis : array-like, shape=[n_items, r]
    ratings : array-like, shape=[k, n_items]
        NaN for missing entries.
    regularization : float
        lambda > 0 (users with fewer than r ratings stay well posed).

    Returns
    -------
    coefficients : array-like, shape=[k, r]
    observed : array-like, shape=[k, n_items]
        1.0 where a rating is observed, 0.0 elsewhere.
    filled : array-like, shape=[k, n_items]
        The ratings with 0.0 for missing entries.
    """
    missing = gs.isnan(ratings)
    observed = gs.where(missing, 0.0, 1.0)
    filled = gs.where(missing, 0.0, ratings)
    rank = basis.shape[-1]
    masked = observed[..., None] * basis
    gram = gs.matmul(gs.moveaxis(masked, -1, -2), basis) + regularization * gs.eye(rank)
    target = gs.matmul(filled, basis)
    coefficients = gs.linalg.solve(gram, target)
    return coefficients, observed, filled


class MatrixCompletionLoss(PerSampleLoss):
    """f(W; x_u) = |P_Omega(x_u - W v_u)|^2 + lambda |v_u|^2 (module docstring).

    Parameters
    ----------
    space : GrassmannBases
        Gr(n_items, r) on bases.
    regularization : float
        lambda > 0.
    """

    def __init__(self, space, regularization=1e-3):
        super().__init__(space)
        self.regularization = regularization

    def check_data(self, data):
        """Ratings [n_users, n_items], finite or NaN (possibly no rating at all)."""
        ratings = to_numpy(data)
        check_ratings(ratings)
        return to_backend(ratings)

    def _fit(self, point, data):
        coefficients, observed, filled = least_squares_coefficients(
            point, data, self.regularization
        )
        residuals = observed * (filled - gs.matmul(coefficients, gs.transpose(point)))
        return coefficients, residuals

    def values(self, point, data):
        """f(W; x_u), shape=[k]."""
        coefficients, residuals = self._fit(point, data)
        return gs.sum(residuals**2, axis=-1) + self.regularization * gs.sum(
            coefficients**2, axis=-1
        )

    def gradients(self, point, data):
        """-2 (I - W W^T) r_u v_u^T, shape=[k, n_items, r]."""
        coefficients, residuals = self._fit(point, data)
        euclidean = -2 * residuals[..., :, None] * coefficients[..., None, :]
        return horizontal_projection(euclidean, point)
