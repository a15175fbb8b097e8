"""PrivateTangentPCA: principal components of the log-maps at a private or public point."""

from numbers import Real
from typing import ClassVar

import geomstats.backend as gs
import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning._data import check_points
from geomstats_dp.learning._manifold_params import (
    COMMON_CONSTRAINTS,
    POSITIVE,
    POSITIVE_INT,
    ManifoldEstimator,
)
from geomstats_dp.learning.mechanisms.base import run_release
from geomstats_dp.learning.mechanisms.tangent_pca import (
    ATOL,
    TangentPCARelease,
)
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.privacy import share_noise_multipliers

TANGENT_PCA_FITTED = ("base_point_", "components_", "explained_variance_",
                      "explained_variance_ratio_", "noise_multipliers_", "budget_",
                      "events_", "n_features_in_")


class PrivateTangentPCA(TransformerMixin, ManifoldEstimator):
    """Differentially private tangent PCA on a geomstats manifold.

    The records' log-maps at a base point b (public, or a private mean), in coordinates
    of a metric-orthonormal basis of T_b and clipped to ``clip_norm`` C, give a noisy
    second-moment matrix (Analyze Gauss, Dwork, Talwar, Thakurta & Zhang 2014) whose
    top eigenvectors are the components (``learning.mechanisms.tangent_pca``). At the
    Frechet mean the log-maps have mean zero, so their second moment is their
    covariance, as in geomstats' ``TangentPCA``. The release is (epsilon, delta)-DP under
    replace-one adjacency: sensitivities 2C/n (each of the base point's tangent-mean
    steps) and sqrt(2) C^2 / n (the second moment), composed exactly in Gaussian DP.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric.
    n_components : int
        k, the number of components, at most the dimension of the space.
    epsilon : float
        Privacy parameter of this release, > 0.
    delta : float
        In (0, 1).
    clip_norm : float
        C, the public radius of the data around the base point: a log-map longer than C
        is scaled down to it.
    base_point : array-like, shape=[*space.shape], optional
        A public base point (not derived from the data); default a private mean, three
        noisy tangent-mean steps from the canonical point taking
        ``mean_budget_fraction`` of the budget.
    mean_budget_fraction : float
        In (0, 1): the share of the Gaussian-DP budget mu^2 of the private base point.
    noise_method : str
        ``TangentGaussian`` method of the base point's tangent noise.
    budget : PrivacyBudget, optional
        Budget to charge; default the one active when the estimator was created or
        fitted, else a fresh PrivacyBudget(epsilon, delta).
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).

    Attributes
    ----------
    base_point_ : array-like, shape=[*space.shape]
        The base point (released, or the public one).
    components_ : array-like, shape=[n_components, *space.shape]
        The released components: tangent vectors at ``base_point_``, orthonormal in the
        metric (in ambient coordinates, as geomstats' ``TangentPCA`` on the sphere).
    explained_variance_ : numpy.ndarray, shape=[n_components]
        The top eigenvalues of the noisy second moment (may be negative at small
        epsilon).
    explained_variance_ratio_ : numpy.ndarray, shape=[n_components]
        Their positive parts over the sum of the positive eigenvalues.
    noise_multipliers_ : dict
        Noise standard deviation over sensitivity of each release.
    budget_ : PrivacyBudget
    events_ : tuple
    n_features_in_ : int
        Coordinates of a point (prod(space.shape)).
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "n_components": [POSITIVE_INT],
        "clip_norm": [POSITIVE],
        "base_point": [None, "array-like"],
        "mean_budget_fraction": [Interval(Real, 0, 1, closed="neither")],
    }
    _FINITE = ("epsilon", "clip_norm")
    _FITTED = TANGENT_PCA_FITTED

    def __init__(self, space, n_components=2, epsilon=1.0, delta=1e-5, clip_norm=1.0,
                 base_point=None, mean_budget_fraction=0.25, noise_method="transport",
                 budget=None, random_state=None, secure=False):
        self.space = space
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.base_point = base_point
        self.mean_budget_fraction = mean_budget_fraction
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self._remember_budget()

    def fit(self, X, y=None):
        """Release private principal components of the log-maps of ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]
            Points on the space (n_samples >= 2); values are checked once the budget is.
        y : None
            Ignored.

        Returns
        -------
        self : PrivateTangentPCA
        """
        budget, points = self._begin_fit(X)
        dim = int(self.space.dim)
        if self.n_components > dim:
            raise ValueError(f"n_components must be at most the dimension {dim} of the "
                             f"space, got {self.n_components}")
        base = None
        if self.base_point is not None:
            base = to_numpy(check_init_point(self.space, self.base_point, ATOL,
                                             "base_point"))
            mean_multiplier, matrix_multiplier = None, share_noise_multipliers(
                self.epsilon, self.delta, [1.0])[0]
        else:
            share = self.mean_budget_fraction
            mean_multiplier, matrix_multiplier = share_noise_multipliers(
                self.epsilon, self.delta, [share / 3, share / 3, share / 3, 1 - share])[2:]
        mechanism = TangentPCARelease(self.space, len(points), self.n_components,
                                      float(self.clip_norm), base, mean_multiplier,
                                      matrix_multiplier, self.noise_method)
        fitted = run_release(mechanism, budget, points, None, self.random_state,
                             self.secure)
        return self._end_fit(fitted, budget)

    def transform(self, X):
        """The coordinates of the log-maps of ``X`` at ``base_point_`` on the components.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]

        Returns
        -------
        X_new : numpy.ndarray, shape=[n_samples, n_components]
        """
        check_is_fitted(self, "components_")
        points = to_backend(check_points(self.space, X, ATOL, min_samples=1))
        logs = self.space.metric.log(points, self.base_point_)
        return np.stack([np.atleast_1d(to_numpy(self.space.metric.inner_product(
            logs, component, self.base_point_))) for component in self.components_], axis=-1)

    def inverse_transform(self, X):
        """Exp at ``base_point_`` of the tangent vectors with these component scores.

        Parameters
        ----------
        X : array-like, shape=[n_samples, n_components]

        Returns
        -------
        points : array-like, shape=[n_samples, *space.shape]
        """
        check_is_fitted(self, "components_")
        scores = np.asarray(to_numpy(X), dtype=float)
        if scores.ndim != 2 or scores.shape[1] != len(self.components_):
            raise ValueError(f"X must have shape [n_samples, {len(self.components_)}], got "
                             f"{scores.shape}")
        tangent = gs.einsum("nk,k...->n...", to_backend(scores), self.components_)
        return self.space.metric.exp(tangent, self.base_point_)
