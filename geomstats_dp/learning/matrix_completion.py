"""Private low-rank matrix completion: DP alternating least squares, or DP-RSGD on the
Grassmannian of item subspaces.

R is users x items (rows are users, the privacy unit), NaN for missing ratings. The
default release, ``method="als"``, is DP alternating least squares in the billboard model
(``learning.mechanisms.alternating_least_squares``). The gradient methods minimise the
loss below on the Grassmannian. A point is
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
from sklearn.utils._param_validation import StrOptions

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_positive_finite, check_positive_int
from geomstats_dp.distributions.grassmann_bases import (
    GrassmannBases,
    horizontal_projection,
)
from geomstats_dp.learning._data import check_array, check_sample_count
from geomstats_dp.learning._local_completion import complete_rows, fit_users
from geomstats_dp.learning.erm import GRADIENT_FITTED, PrivateERM
from geomstats_dp.learning.mechanisms.alternating_least_squares import (
    AlternatingLeastSquaresRelease,
)
from geomstats_dp.optim import PerSampleLoss

MC_FITTED = GRADIENT_FITTED + ("components_", "item_factors_", "item_offsets_",
                               "n_features_in_")
GRADIENT_REGULARIZATION = 1e-3
ALS_REGULARIZATION = 1.0


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
    """Differentially private low-rank matrix completion in the billboard model.

    ``fit(R)`` takes R users x items (rows are users) with NaN for missing ratings and
    releases the item side of a rank-r model: ``components_``, an r-dimensional subspace
    of item space (a point of the Grassmannian), with the item factors spanning it and the
    item offsets. A user's row is then completed from the released item side and that
    user's own ratings (``predict``): the billboard model (Jain et al. 2018), in which
    each user completes their own row locally; the completed rows are not covered by the
    guarantee for anyone but their own user, who needs no protection from themselves.

    Privacy. Adjacency: user-level replace-one (one user's whole row of ratings replaced
    by any other row, including which items are rated); the numbers of users and items
    and the rank are public.

    - ``method="als"`` (default): DP alternating least squares (Chien et al. 2021): a
      private spectral start (the noisy second moment of the users' centred ratings,
      each user's term clipped to Frobenius norm C: sensitivity sqrt(2) C), then each
      of the ``n_iter`` alternations releases the item-side sufficient statistics with
      Gaussian noise; one user's statistics over all items are clipped jointly to
      ``clip_norm`` C, so one alternation has L2 sensitivity 2C. The n_iter + 1 releases
      compose exactly as Gaussian DP (``privacy.calibrate_gaussian``; details in
      ``learning.mechanisms.alternating_least_squares``). User factors are never
      released.
    - ``method="rsgd"``, ``"rgd"``, ``"rsvrg"``: the per-user loss of the module
      docstring minimised on the Grassmannian; each user's Riemannian gradient is clipped
      to C in the metric tr(U^T V), the batch mean has sensitivity 2C/b (2C/n for
      DP-RGD), the noise is the tangent Gaussian, calibrated and accounted by
      ``PrivateERM`` (autodp).

    ``rating_range`` and ``offset`` must be public (the scale of the ratings, e.g. 1 to 5
    for MovieLens), never statistics of R.

    Parameters
    ----------
    rank : int
        r, 1 <= r < n_items. Default 3: every factor adds r + 2 noisy statistics per
        item and alternation; on MovieLens-100K ranks 2 and 3 were best from epsilon 1
        to 16 and rank 10 lost 0.05-0.07 RMSE (docs/matrix_completion.md).
    epsilon, delta : float
    clip_norm : float or None
        C. With "als": the bound on the norm of one user's item statistics (module
        docstring of the mechanism); default from ``rating_range`` with half-width h
        (the largest distance of the range's ends from ``offset``): sqrt(3/8) h^2, the
        norm for a user whose factor and residuals are h / 2 (2.45 for ratings 1 to 5);
        without ``rating_range`` it must be given, and stands for h = (C / sqrt(3/8))^(1/2)
        (the scale of the offsets' coordinate h / 2). With the gradient methods: the bound on the per-user gradient norms
        2 |r_u| |v_u| (None: inferred from the data with a PrivacyLeakWarning, not
        private). Larger contributions are scaled down (biased, still private).
    method : {"als", "rsgd", "rgd", "rsvrg"}
    rating_range : tuple of two floats or None
        Public (low, high): ratings are clipped to it before anything else (a per-user
        map). None: ratings are not clipped, and the only bound on a user's contribution
        is ``clip_norm`` (required with "als").
    regularization : float or None
        lambda > 0 of each user's ridge fit (in training and in ``predict``); default
        1.0 with "als" (one rating's worth: the ALS item features have the scale of the
        ratings), 1e-3 with the gradient methods (module docstring).
    offset : float or None
        Public value subtracted from every rating before fitting and added back by
        ``predict``; default the middle of ``rating_range``, else 0.
    n_iter : int, optional
        "als": the number of alternations T; default 1, or 3 where the noise of 4
        releases is negligible (noise multiplier below 0.2: epsilon above about 90 at
        delta 1e-5). Gradient methods: as in ``PrivateERM``.
    step_size, batch_size, inner_steps, sampling, dataset_size, output, noise_method
        Gradient methods only, as in ``PrivateERM``. The default steps are divided by C.
    budget, random_state, secure, verbose
        As in ``PrivateERM``. Every method starts from a fixed random orthonormal basis
        (seed 0), data-independent.

    Attributes
    ----------
    components_ : numpy.ndarray, shape=[rank, n_items]
        Orthonormal rows spanning the released item subspace (``estimate_`` transposed).
    item_factors_ : numpy.ndarray, shape=[n_items, rank]
        The released item factors users complete their rows with ("als":
        sqrt(n_items) ``estimate_``; gradient methods: ``estimate_``).
    item_offsets_ : numpy.ndarray, shape=[n_items]
        The released item offsets ("als"; zero for the gradient methods).
    n_features_in_ : int
        n_items.
    estimate_, budget_, method_, noise_multiplier_, noise_multipliers_, n_iter_,
    clip_norm_, events_
        As in ``PrivateERM`` (``estimate_`` is W, [n_items, rank]); the gradient methods
        also set ``n_gradient_evaluations_`` and ``noise_ratio_``.
    """

    _FITTED = MC_FITTED
    _MECHANISMS = {"als": AlternatingLeastSquaresRelease, **PrivateERM._MECHANISMS}
    _parameter_constraints = {**PrivateERM._parameter_constraints,
                              "method": [StrOptions(set(_MECHANISMS))]}

    def __init__(self, rank=3, epsilon=1.0, delta=1e-5, clip_norm=None, method="als",
                 rating_range=None, regularization=None, offset=None, n_iter=None,
                 step_size=None, batch_size=None, inner_steps=None,
                 sampling="without_replacement", dataset_size=None, output=None,
                 noise_method="transport", budget=None, random_state=None, secure=False,
                 verbose=False):
        self.rank = rank
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.method = method
        self.rating_range = rating_range
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
        basis = np.random.default_rng(0).standard_normal((self._n_items, self.rank))
        return np.linalg.qr(basis)[0]

    def fit(self, X, y=None):
        """Release a private rank-r item side of the ratings ``X``.

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
        if self.regularization is not None:
            check_positive_finite(self.regularization, "regularization")
        if self.offset is not None and (
                isinstance(self.offset, bool) or not np.isfinite(self.offset)):
            raise ValueError(f"offset must be a finite number or None, got {self.offset!r}")
        self._check_rating_range()
        if isinstance(self.clip_norm, str):
            raise ValueError(
                f"clip_norm must be a positive number or None, got {self.clip_norm!r}"
            )
        self._space = GrassmannBases(n_items, rank)
        self._n_items = n_items  # n_features_in_ at the end (_finish)
        return data, None

    def _check_rating_range(self):
        if self.rating_range is None:
            return
        bounds = np.asarray(self.rating_range, dtype=object)
        if bounds.shape != (2,) or not all(
                isinstance(b, (int, float, np.number)) and not isinstance(b, bool)
                and np.isfinite(b) for b in bounds) or not bounds[0] < bounds[1]:
            raise ValueError(
                "rating_range must be None or (low, high), two finite numbers with "
                f"low < high, got {self.rating_range!r}"
            )

    def _offset(self):
        """The public centre of the ratings: ``offset``, else the range's middle, else 0."""
        if self.offset is not None:
            return float(self.offset)
        if self.rating_range is not None:
            return (float(self.rating_range[0]) + float(self.rating_range[1])) / 2
        return 0.0

    def _regularization(self):
        if self.regularization is not None:
            return float(self.regularization)
        return ALS_REGULARIZATION if self.method == "als" else GRADIENT_REGULARIZATION

    def _als_clip_norm(self):
        """C of the ALS release: ``clip_norm``, else the default of ``rating_range``."""
        if self.clip_norm is not None:
            return float(self.clip_norm)
        if self.rating_range is None:
            raise ValueError(
                "method='als' needs a public bound on the ratings: pass rating_range="
                "(low, high) or clip_norm"
            )
        return float(np.sqrt(3 / 8) * self._half_width() ** 2)

    def _half_width(self):
        """h: the largest distance of the public range's ends from the offset; without a
        range, the ALS clip norm C stands for 0.61 h^2 (the default's relation)."""
        if self.rating_range is None:
            return float(np.sqrt(self._als_clip_norm() / np.sqrt(3 / 8)))
        low, high = (float(b) for b in self.rating_range)
        return max(high - self._offset(), self._offset() - low)

    def _centred_ratings(self, X):
        """X clipped to ``rating_range`` (if any), minus the public offset (numpy)."""
        ratings = to_numpy(X)
        if self.rating_range is not None:
            ratings = np.clip(ratings, *(float(b) for b in self.rating_range))
        return ratings - self._offset()

    def _prepare(self, data, rng):
        """Gradient methods: the ratings clipped and centred."""
        return to_backend(self._centred_ratings(data)), {}

    def _make_loss(self):
        return MatrixCompletionLoss(self.space, self._regularization())

    def _smoothness(self):
        """Curvature of f is of the order of the gradient bound C: steps divided by C."""
        return float(self.clip_norm) if self.clip_norm else 1.0

    def _finish(self, fitted):
        basis = to_numpy(fitted["estimate_"])
        fitted.setdefault("components_", basis.T.copy())
        fitted.setdefault("item_factors_", basis)
        fitted.setdefault("item_offsets_", np.zeros(len(basis)))
        fitted["n_features_in_"] = self._n_items
        return fitted

    def _user_ratings(self, X):
        data = check_array(X, "X")
        if data.ndim != 2 or data.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X must have shape [n_users, {self.n_features_in_}], got {data.shape}"
            )
        check_ratings(data)
        return self._centred_ratings(data)

    def transform(self, X):
        """Each user's factor v_u on the released item side, from their own ratings.

        Parameters
        ----------
        X : array-like, shape=[n_users, n_items]
            NaN where missing.

        Returns
        -------
        factors : numpy.ndarray, shape=[n_users, rank]
        """
        return fit_users(self.item_offsets_, self.item_factors_, self._user_ratings(X),
                         self._regularization())[1]

    def predict(self, X):
        """Complete each user's row from the released item side and their own ratings.

        Parameters
        ----------
        X : array-like, shape=[n_users, n_items]
            NaN where missing.

        Returns
        -------
        completed : numpy.ndarray, shape=[n_users, n_items]
            offset + b_j + c_u + F_j v_u for every item j (observed ones included), with
            (c_u, v_u) the user's own ridge fit (``learning._local_completion``).
        """
        return complete_rows(self.item_offsets_, self.item_factors_, self._user_ratings(X),
                             self._regularization()) + self._offset()


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
