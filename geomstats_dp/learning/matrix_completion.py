"""Private low-rank matrix completion: DP alternating least squares, or DP gradient
descent on the Grassmannian of item subspaces.

R is users x items (rows are users, the privacy unit), NaN for missing ratings.
``method="auto"`` applies a public rule (``rank_choice.auto_method``) among the private
choice between item means and DP alternating least squares (``rank_choice``), the item
means alone (``item_means``) and DP-ALS alone (``alternating_least_squares``, billboard
model). The gradient methods minimise the per-user loss of ``_completion_loss`` on the
Grassmannian (``GradientRelease``). Users complete their own rows from the released item
side (``_local_completion``).
"""

from numbers import Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from geomstats_dp._backend import to_numpy
from geomstats_dp._validation import (
    PROBABILITY,
    PositiveFinite,
    PositiveInt,
    RatingRange,
)
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._completion_loss import MatrixCompletionLoss, check_ratings
from geomstats_dp.learning._completion_specs import (
    als_spec,
    gradient_regularization,
    gradient_spec,
    means_spec,
    public_offset,
)
from geomstats_dp.learning._data import check_array, check_sample_count
from geomstats_dp.learning._gradient_methods import (
    GRADIENT_CONSTRAINTS,
    GRADIENT_FITTED,
    check_cross_params,
    public_size,
)
from geomstats_dp.learning._gradient_plan import GRADIENT_METHODS
from geomstats_dp.learning._local_completion import (
    centred_ratings,
    complete_offsets,
    complete_rows,
    fit_users,
    rmse,
)
from geomstats_dp.learning.mechanisms.rank_choice import auto_method, rank_choice

__all__ = ["MatrixCompletionLoss", "PrivateMatrixCompletion", "rmse"]

MC_FITTED = GRADIENT_FITTED + ("components_", "item_factors_", "item_offsets_",
                               "regularization_", "rank_", "user_offsets_",
                               "n_features_in_", "rating_scale_")
ALS_METHODS = ("auto", "select", "als", "means")


class PrivateMatrixCompletion(PrivateEstimator):
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

    - ``method="auto"`` (default): ``rank_choice.auto_method``, a rule on n, the number
      of items, epsilon and delta only: "select" where a tenth of epsilon times the
      number of users reaches 300; below, "means" where n / (sqrt(n_items) z) reaches
      10 (z the noise multiplier of "als"), else "als" (docs/matrix_completion.md).
    - ``method="select"``: item means and DP-ALS of rank r both fitted on a
      training part of every user's ratings, one chosen by the exponential mechanism on
      the users' errors on their held-out part (``mechanisms.rank_choice``: a tenth of
      epsilon for the choice, one more Gaussian release for the means); ``rank_`` says
      which (0: item means, with the users' own offsets if ``user_offsets_``).
    - ``method="means"``: the private item means alone (``mechanisms.item_means``: one
      Gaussian release of the users' weighted sums and counts, sensitivity 2h; the
      means shrunk towards their average), each user adding their own shrunk offset.
    - ``method="als"``: DP alternating least squares (Chien et al. 2021): a
      private spectral start (the noisy second moment of the users' centred ratings,
      each user's term clipped to Frobenius norm C: sensitivity sqrt(2) C), then each
      of the ``n_iter`` alternations releases the item-side sufficient statistics with
      Gaussian noise; one user's statistics over all items are clipped jointly to
      ``clip_norm`` C, so one alternation has L2 sensitivity 2C. The n_iter + 1 releases
      compose exactly as Gaussian DP (``privacy.calibrate_gaussian``; details in
      ``learning.mechanisms.alternating_least_squares``). User factors are never
      released. Without ``rating_range``, a private quantile of the users' largest
      rating first tightens a loose C (``clip_quantile``, a ``PureEvent``).
    - ``method="rsgd"``, ``"rgd"``, ``"rsvrg"``: the per-user loss of
      ``learning._completion_loss`` minimised on the Grassmannian
      (``mechanisms.GradientRelease``); each user's Riemannian gradient is clipped to C
      in the metric tr(U^T V), the batch mean has sensitivity 2C/b (2C/n for DP-RGD),
      the noise is the tangent Gaussian, calibrated and accounted by autodp.

    ``rating_range`` and ``offset`` must be public (the scale of the ratings, e.g. 1 to 5
    for MovieLens), never statistics of R.

    Parameters
    ----------
    rank : int
        r, 1 <= r < n_items. Default 3: every factor adds r + 2 noisy statistics per
        item and alternation (the ranks compared on MovieLens-100K:
        docs/matrix_completion.md).
    epsilon, delta : float
    clip_norm : float or None
        C. With the ALS methods ("auto", "als", "select", "means"): the bound on the
        norm of one user's item statistics (module docstring of the mechanism); default from ``rating_range`` with half-width h
        (the largest distance of the range's ends from ``offset``): sqrt(3/8) h^2, the
        norm for a user whose factor and residuals are h / 2 (2.45 for ratings 1 to 5);
        without ``rating_range`` it must be given, and stands for h = (C / sqrt(3/8))^(1/2)
        (the scale of the offsets' coordinate h / 2), which ``clip_quantile`` tightens.
        With the gradient methods: the bound on the per-user gradient norms
        2 |r_u| |v_u| (None: inferred from the data with a PrivacyLeakWarning, not
        private). Larger contributions are scaled down (biased, still private).
    method : {"auto", "select", "als", "means", "rsgd", "rgd", "rsvrg"}
    rating_range : tuple of two floats or None
        Public (low, high): ratings are clipped to it before anything else (a per-user
        map). None: ratings are not clipped, and the only bound on a user's contribution
        is ``clip_norm`` (required with the ALS methods).
    regularization : float or None
        lambda > 0 of each user's ridge fit (in training and in ``predict``). Default
        with the ALS methods: min(1, z / 0.2) for the release's noise multiplier z (one rating's
        worth where the noise is not negligible, the ALS item features having the scale
        of the ratings; vanishing with the noise, ``alternating_least_squares.
        default_regularization``); 1e-3 with the gradient methods.
    offset : float or None
        Public value subtracted from every rating before fitting and added back by
        ``predict``; default the middle of ``rating_range``, else 0.
    n_iter : int, optional
        ALS methods: the number of alternations T; default 1, or 3 where the noise of 4
        releases is negligible (``alternating_least_squares.default_n_iter``). Gradient
        methods: steps (rgd, rsgd) or epochs (rsvrg), as in ``PrivateERM``.
    step_size : float or callable, optional
        Gradient methods: constant or schedule ``t -> eta_t``; default noise-aware,
        divided by C.
    batch_size : int, optional
        "rsgd": the batch size (expected size for Poisson); default about sqrt(n).
    inner_steps : int, optional
        "rsvrg": inner steps per epoch; default n / 10.
    sampling : {"without_replacement", "poisson"}
        "rsgd" batch sampling (Poisson: add/remove adjacency of users).
    dataset_size : int, optional
        Poisson sampling only (and required there): the declared public number of users.
    output : {"last", "random", "average", "weighted_average"}, optional
        Gradient methods: the iterate released; default as in ``PrivateERM``.
    noise_method : str
        Gradient methods: the ``TangentGaussian`` method of the noise.
    budget : PrivacyBudget, optional
        Budget to charge; default the one active (``with budget:``) when the estimator
        was created or fitted, else a fresh PrivacyBudget(epsilon, delta) for this fit.
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).
    verbose : bool
        Gradient methods: show a progress bar. Every method starts from a fixed random
        orthonormal basis (seed 0), data-independent.
    clip_quantile : float or None
        ALS methods without ``rating_range``: q in (0, 1); a private q-quantile of the
        users' largest |rating - offset| tightens h and C to min(h, quantile) and
        sqrt(3/8) h^2 first (``mechanisms.rating_scale``), spending
        ``clip_budget_fraction`` of epsilon. None: C as given. Unused with a
        ``rating_range`` (the public scale) and with the gradient methods.
    clip_budget_fraction : float
        In (0, 1): the share of epsilon of the ``clip_quantile`` release.

    Attributes
    ----------
    components_ : numpy.ndarray, shape=[rank, n_items]
        Orthonormal rows spanning the released item subspace (``estimate_`` transposed).
    item_factors_ : numpy.ndarray, shape=[n_items, rank]
        The released item factors users complete their rows with ("als":
        the solved factors, spanning ``estimate_``; zero where "select" chose the item
        means; [n_items, 0] with "means"; gradient methods: ``estimate_``).
    item_offsets_ : numpy.ndarray, shape=[n_items]
        The released item offsets ("als"; the item means with "means" and where
        "select" chose them; zero for the gradient methods).
    regularization_ : float or None
        lambda of the users' ridge fits, in training and in ``predict`` (None: "means").
    rank_ : int
        The rank of the model users complete their rows with: ``rank``, or 0 for the
        item means ("means", or "select" choosing them).
    user_offsets_ : bool
        Whether users add their own offset: False only where "select" chose the item
        means as they are.
    n_features_in_ : int
        n_items.
    estimate_ : numpy.ndarray, shape=[n_items, rank]
        W, the released orthonormal basis ([n_items, 0] with "means").
    budget_ : PrivacyBudget
        The budget charged.
    method_ : str
        The method run ("auto" resolved).
    events_ : tuple
        The privacy events this fit charged to ``budget_``.
    noise_multiplier_ : float
        Noise standard deviation over the sensitivity of a release (an alternation, or a
        step); ``noise_multipliers_`` (dict) for every kind of query.
    n_iter_ : int
        Alternations ("als", "select") or manifold steps.
    clip_norm_ : float
        The public clip norm (the ALS methods clip at min(C, sqrt(3/8) h^2) with
        h = ``rating_scale_``).
    rating_scale_ : float or None
        ALS methods: h, the half-width of the centred ratings used (the private
        ``clip_quantile`` release where it ran, else public); None for the others.
    n_gradient_evaluations_, noise_ratio_
        Gradient methods only, as in ``PrivateERM``.
    """

    _FITTED = MC_FITTED
    _parameter_constraints: ClassVar[dict] = {
        **{name: GRADIENT_CONSTRAINTS[name] for name in (
            "epsilon", "delta", "n_iter", "step_size", "batch_size", "inner_steps",
            "sampling", "dataset_size", "output", "noise_method", "budget", "random_state",
            "secure", "verbose")},
        "rank": [PositiveInt()],
        "clip_norm": [PositiveFinite(), None],
        "method": [StrOptions({*ALS_METHODS, *GRADIENT_METHODS})],
        "rating_range": [RatingRange(), None],
        "regularization": [PositiveFinite(), None],
        "offset": [Interval(Real, -np.inf, np.inf, closed="neither"), None],
        "clip_quantile": [*PROBABILITY, None],
        "clip_budget_fraction": PROBABILITY,
    }

    def __init__(self, rank=3, epsilon=1.0, delta=1e-5, clip_norm=None, method="auto",
                 rating_range=None, regularization=None, offset=None, n_iter=None,
                 step_size=None, batch_size=None, inner_steps=None,
                 sampling="without_replacement", dataset_size=None, output=None,
                 noise_method="transport", budget=None, random_state=None, secure=False,
                 verbose=False, clip_quantile=0.5, clip_budget_fraction=0.05):
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
        self.clip_quantile = clip_quantile
        self.clip_budget_fraction = clip_budget_fraction
        self._remember_budget()

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
        self._check_params()
        budget = self._start_fit(self.epsilon, self.delta)
        data = self._check_input(X)
        n_users, n_items = data.shape
        method = self.method
        if method == "auto":
            method = auto_method(n_users, n_items, self.epsilon,
                                 als_spec(self, n_users).noise_multiplier)
        if method == "select":
            mechanism = rank_choice(als_spec(self, n_users))
        elif method == "als":
            mechanism = als_spec(self, n_users)
        elif method == "means":
            mechanism = means_spec(self, n_users)
        else:
            mechanism = gradient_spec(self, public_size(self, n_users), n_items)
        return self._fit_release(budget, method, mechanism, data, None)

    def _finish(self, fitted):
        """The item side users complete their rows with (zero offsets and the basis
        itself for the gradient methods)."""
        basis = to_numpy(fitted["estimate_"])
        fitted.setdefault("components_", basis.T.copy())
        fitted.setdefault("item_factors_", basis)
        fitted.setdefault("item_offsets_", np.zeros(len(basis)))
        fitted.setdefault("regularization_", gradient_regularization(self))
        fitted.setdefault("rank_", basis.shape[1])
        fitted.setdefault("user_offsets_", True)
        fitted.setdefault("rating_scale_", None)
        fitted["n_features_in_"] = len(basis)
        return fitted

    def _check_params(self):
        """The parameters, declaratively, then the rules across them (before the data)."""
        self._validate_params()
        check_cross_params(self)
        if self.method in ALS_METHODS and self.clip_norm is None and (
                self.rating_range is None):
            raise ValueError(
                f"method={self.method!r} needs a public bound on the ratings: pass rating_range="
                "(low, high) or clip_norm"
            )

    def _check_input(self, X):
        """Shape checks of the ratings (their values are checked by the release)."""
        data = check_array(X, "X")
        if data.ndim != 2:
            raise ValueError(f"X must have shape [n_users, n_items], got {data.shape}")
        check_sample_count(len(data), "X")
        if self.rank >= data.shape[1]:
            raise ValueError(f"rank must be < n_items = {data.shape[1]}, got {self.rank}")
        return data

    def _check_data(self, X, y=None):
        """Check every rating of X (an infinite one named by its index in X); the private
        search checks its whole data with it before any run."""
        check_ratings(self._check_input(X))

    def _user_ratings(self, X):
        data = check_array(X, "X")
        if data.ndim != 2 or data.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X must have shape [n_users, {self.n_features_in_}], got {data.shape}"
            )
        check_ratings(data)
        return centred_ratings(data, self.rating_range, public_offset(self))

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
        ratings = self._user_ratings(X)
        if self.rank_ == 0:
            return np.zeros((len(ratings), self.item_factors_.shape[1]))
        return fit_users(self.item_offsets_, self.item_factors_, ratings,
                         self.regularization_)[1]

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
            (c_u, v_u) the user's own ridge fit (``learning._local_completion``);
            offset + b_j (+ the user's shrunk offset where ``user_offsets_``) where
            ``rank_`` is 0; clipped to ``rating_range`` if given.
        """
        ratings = self._user_ratings(X)
        if self.rank_ == 0 and self.user_offsets_:  # the item means and own offsets
            completed = complete_offsets(self.item_offsets_, ratings) + public_offset(self)
        elif self.rank_ == 0:  # the item means: no user fit
            completed = np.broadcast_to(self.item_offsets_ + public_offset(self),
                                        ratings.shape).copy()
        else:
            completed = complete_rows(self.item_offsets_, self.item_factors_, ratings,
                                      self.regularization_) + public_offset(self)
        if self.rating_range is None:
            return completed
        return np.clip(completed, *(float(bound) for bound in self.rating_range))

