"""Private low-rank matrix completion: PrivateERM on the Grassmannian of item subspaces.

R is users x items (rows are users, the privacy unit), NaN for missing ratings. A point is
an orthonormal basis W [n_items, r] of an r-dimensional subspace of item space
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
from geomstats_dp._validation import check_positive_finite, check_positive_int
from geomstats_dp.distributions.grassmann_bases import (
    GrassmannBases,
    horizontal_projection,
)
from geomstats_dp.learning._data import check_array, check_sample_count
from geomstats_dp.learning.erm import GRADIENT_FITTED, PrivateERM
from geomstats_dp.optim import PerSampleLoss

MC_FITTED = GRADIENT_FITTED + ("components_", "n_features_in_")


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


class PrivateMatrixCompletion(PrivateERM):
    """Differentially private low-rank matrix completion on the Grassmannian.

    ``fit(R)`` takes R users x items (rows are users) with NaN for missing ratings and
    releases an r-dimensional subspace of item space, ``components_``. A user's row is
    then completed from the released subspace and that user's own ratings (``predict``):
    the billboard model, in which the subspace is public and each user completes their
    own row locally; the completed rows are not covered by the guarantee for anyone
    but their own user, who needs no protection from themselves.

    Privacy. Adjacency: replace-one on the users (one user's whole row of ratings
    replaced by any other row, including which items are rated). Each user's Riemannian
    gradient (module docstring) is clipped to ``clip_norm`` C in the metric tr(U^T V);
    the noisy DP-RSGD batch mean has sensitivity 2C/b (2C/n for DP-RGD), and the noise
    is the tangent Gaussian (I - W W^T) A, A iid N(0, sigma^2), calibrated and accounted
    by ``PrivateERM`` (autodp). The number of users n is public, the number of items and
    the rank too; ``offset`` must be public (e.g. the middle of the rating scale, 3 for
    MovieLens), never a statistic of R.

    Parameters
    ----------
    rank : int
        r, 1 <= r < n_items.
    epsilon, delta : float
    clip_norm : float or None
        C, a public bound on the per-user gradient norms 2 |r_u| |v_u| (residual norm
        times fitted coefficient norm; of the order of |x_u|^2 for a user's centred
        ratings x_u, so it grows with the number of ratings a user gives). Larger
        gradients are scaled down (biased, still private). None: inferred from the data
        with a PrivacyLeakWarning (not private).
    method : {"rsgd", "rgd", "rsvrg"}
    regularization : float
        lambda > 0 of the per-user ridge fit (module docstring).
    offset : float
        Public value subtracted from every rating before fitting and added back by
        ``predict``.
    n_iter, step_size, batch_size, inner_steps, sampling, dataset_size, output,
    noise_method, budget, random_state, secure, verbose
        As in ``PrivateERM``. The default steps are divided by C (the loss's curvature
        scale against d^2 / 2). The start is a fixed random orthonormal basis (seed 0),
        data-independent.

    Attributes
    ----------
    components_ : numpy.ndarray, shape=[rank, n_items]
        Orthonormal rows spanning the released item subspace (``estimate_`` transposed).
    n_features_in_ : int
        n_items.
    estimate_, budget_, noise_multiplier_, noise_multipliers_, n_iter_,
    n_gradient_evaluations_, clip_norm_, events_, noise_ratio_
        As in ``PrivateERM`` (``estimate_`` is W, [n_items, rank]).
    """

    _FITTED = MC_FITTED

    def __init__(self, rank=10, epsilon=1.0, delta=1e-5, clip_norm=None, method="rsgd",
                 regularization=1e-3, offset=0.0, n_iter=None, step_size=None,
                 batch_size=None, inner_steps=None, sampling="without_replacement",
                 dataset_size=None, output=None, noise_method="transport", budget=None,
                 random_state=None, secure=False, verbose=False):
        self.rank = rank
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.method = method
        self.regularization = regularization
        self.offset = offset
        self.n_iter = n_iter
        self.step_size = step_size
        self.batch_size = batch_size
        self.inner_steps = inner_steps
        self.sampling = sampling
        self.dataset_size = dataset_size
        self.output = output
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose
        self._remember_budget()

    # PrivateERM reads these; matrix completion fixes them.
    @property
    def space(self):
        """``GrassmannBases(n_items, rank)``, set by ``fit``."""
        return self._space

    clip_norm_single = None
    clip_quantile = clip_budget_fraction = None
    gradient = None
    gradient_kind = "riemannian"

    @property
    def init_point(self):
        """A fixed random orthonormal basis [n_items, rank] (seed 0): data-independent,
        and not a coordinate basis (whose items may be exactly unrated)."""
        basis = np.random.default_rng(0).standard_normal((self.n_features_in_, self.rank))
        return np.linalg.qr(basis)[0]

    def fit(self, X, y=None):
        """Release a private rank-r item subspace of the ratings ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_users, n_items]
            Ratings, NaN where missing.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        return super().fit(X)

    def _check_input(self, X, y, sample_weight):
        data = check_array(X, "X")
        if data.ndim != 2:
            raise ValueError(f"X must have shape [n_users, n_items], got {data.shape}")
        check_sample_count(len(data), "X")
        n_items = data.shape[1]
        rank = check_positive_int(self.rank, "rank")
        if rank >= n_items:
            raise ValueError(f"rank must be < n_items = {n_items}, got {rank}")
        check_positive_finite(self.regularization, "regularization")
        if isinstance(self.offset, bool) or not np.isfinite(self.offset):
            raise ValueError(f"offset must be a finite number, got {self.offset!r}")
        if isinstance(self.clip_norm, str):
            raise ValueError(
                f"clip_norm must be a positive number or None, got {self.clip_norm!r}"
            )
        self._space = GrassmannBases(n_items, rank)
        self.n_features_in_ = n_items
        return data - float(self.offset), None

    def _make_loss(self):
        return MatrixCompletionLoss(self.space, self.regularization)

    def _smoothness(self):
        """Curvature of f is of the order of the gradient bound C: steps divided by C."""
        return float(self.clip_norm) if self.clip_norm else 1.0

    def _finish(self, fitted):
        fitted["components_"] = to_numpy(fitted["estimate_"]).T.copy()
        fitted["n_features_in_"] = self.n_features_in_
        return fitted

    def _user_ratings(self, X):
        data = check_array(X, "X")
        if data.ndim != 2 or data.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X must have shape [n_users, {self.n_features_in_}], got {data.shape}"
            )
        check_ratings(data)
        return data - float(self.offset)

    def transform(self, X):
        """Each user's coefficients v_u in the released subspace, from their own ratings.

        Parameters
        ----------
        X : array-like, shape=[n_users, n_items]
            NaN where missing.

        Returns
        -------
        coefficients : numpy.ndarray, shape=[n_users, rank]
        """
        data = self._user_ratings(X)
        coefficients, _, _ = least_squares_coefficients(
            to_backend(self.components_.T), to_backend(data), self.regularization
        )
        return to_numpy(coefficients)

    def predict(self, X):
        """Complete each user's row from the released subspace and their own ratings.

        Parameters
        ----------
        X : array-like, shape=[n_users, n_items]
            NaN where missing.

        Returns
        -------
        completed : numpy.ndarray, shape=[n_users, n_items]
            offset + W v_u for every item (observed ones included).
        """
        return self.transform(X) @ self.components_ + float(self.offset)


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
