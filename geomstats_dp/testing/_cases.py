"""The built-in cases: every public estimator and every method it offers, on small public
data and the active backend, with the non-private answer its release converges to.

A case is what ``check_private_estimator`` takes: an unfitted estimator, its data and,
where one exists, a non-private reference. The package's own suite runs every check on
every case (``tests/testing/test_conformance.py``); users pass their own.
"""

import math

import geomstats.backend as gs
import numpy as np
import scipy.linalg
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.learning.frechet_mean import FrechetMean
from sklearn.decomposition import PCA

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets.wordnet import poincare_to_hyperboloid
from geomstats_dp.federated import PriRFed
from geomstats_dp.learning import (
    PrivateERM,
    PrivateEstimator,
    PrivateFrechetMean,
    PrivateMatrixCompletion,
    PrivatePCA,
    PrivateStructuredPrediction,
)
from geomstats_dp.learning.mechanisms.choice import RGD_NOISE_THRESHOLD
from geomstats_dp.model_selection import (
    PrivateGridSearchCV,
    PrivateRandomizedSearchCV,
    private_score,
)
from geomstats_dp.optim import (
    HuberDistanceLoss,
    PerSampleLoss,
    SquaredDistanceLoss,
    canonical_point,
)
from geomstats_dp.privacy import calibrate_gaussian
from geomstats_dp.testing._case import (
    CHEAP_SPACES,
    N_SAMPLES,
    SEED,
    Case,
    _cloud,
    frechet_mean_reference,
    riemannian_distance,
    subspace_distance,
)
from geomstats_dp.testing._manifold_cases import manifold_cases
from geomstats_dp.testing._supervised_cases import supervised_cases


def threshold_epsilon(n_samples, dim, delta):
    """An epsilon at which ``method="auto"`` picks "two_stage" for n records and "rgd" for
    n - 1 (``learning.mechanisms.choice``): a data-dependent count flips the choice.

    The noise multiplier z of one Gaussian release is set halfway between the rule's
    thresholds for n - 1 and n records, and epsilon found by bisection.
    """
    target = RGD_NOISE_THRESHOLD * (n_samples - 0.5) / (2 * math.sqrt(dim))
    low, high = 1e-3, 1e3
    for _ in range(100):
        middle = math.sqrt(low * high)
        if calibrate_gaussian(middle, delta, 1) > target:
            low = middle
        else:
            high = middle
    return high


class SquaredEuclideanLoss(PerSampleLoss):
    """A user's own per-sample loss: |w - x|^2 / 2 on Euclidean rows, written batched."""

    def values(self, point, data):
        """Per-sample losses, shape=[n_samples]."""
        return ((point - data) ** 2).sum(axis=-1) / 2

    def gradients(self, point, data):
        """Per-sample gradients, shape=[n_samples, dim]."""
        return point - data


def user_loss(point, sample):
    """A user's loss as a plain function: a smooth absolute loss on Euclidean rows."""
    return gs.sum(gs.sqrt(1 + (point - sample) ** 2), axis=-1)


class PrivateScore(PrivateEstimator):
    """``model_selection.private_score`` as an estimator: ``fit(X, y)`` scores a public
    model, fitted beforehand, on the private records (X, y).

    Parameters
    ----------
    model : fitted estimator of geomstats_dp
        Fitted on public data.
    epsilon, delta, loss_bound, method, budget, random_state
        As ``private_score``.

    Attributes
    ----------
    score_ : float
        The released score.
    budget_ : PrivacyBudget
        The budget charged.
    """

    _FITTED = ("score_", "budget_")

    def __init__(self, model, epsilon=1.0, delta=0.0, loss_bound=1.0, method="laplace",
                 budget=None, random_state=None):
        self.model = model
        self.epsilon = epsilon
        self.delta = delta
        self.loss_bound = loss_bound
        self.method = method
        self.budget = budget
        self.random_state = random_state
        self._remember_budget()

    def __sklearn_clone__(self):
        """Clone the parameters but keep the fitted ``model`` itself (a clone of it would
        be unfitted)."""
        clone = super().__sklearn_clone__()
        clone.model = self.model
        return clone

    def fit(self, X, y=None):
        """Release the private score of ``model`` on (X, y)."""

        budget = self._start_fit(self.epsilon, self.delta or 1e-5)
        self.score_ = private_score(self.model, X, y, epsilon=self.epsilon,
                                    loss_bound=self.loss_bound, delta=self.delta,
                                    method=self.method, budget=budget,
                                    random_state=self.random_state)
        self.budget_ = budget
        return self


# -- the cases -------------------------------------------------------------------------

FRECHET_METHODS = ("auto", "rgd", "rsgd", "rsvrg", "tangent", "two_stage")


def _frechet_mean_cases():
    cases = []
    for space_name, make in CHEAP_SPACES.items():
        space = make()
        X = _cloud(space, N_SAMPLES, 0.5, SEED)
        methods = FRECHET_METHODS if space_name == "sphere" else ("rgd", "two_stage")
        for method in methods:
            estimator = PrivateFrechetMean(space, epsilon=1.0, clip_norm=1.0, method=method,
                                           random_state=SEED)
            cases.append(Case(f"PrivateFrechetMean(method={method!r},space={space_name})",
                              estimator, X, reference=frechet_mean_reference(space),
                              distance=riemannian_distance(space), tolerance=5e-2))
    space = Hypersphere(2)
    X = _cloud(space, N_SAMPLES, 0.2, SEED, offset=0.2)
    center = to_numpy(canonical_point(space))
    laplace = PrivateFrechetMean(space, epsilon=1.0, method="laplace", center=center,
                                 radius=0.5, random_state=SEED)
    cases.append(Case("PrivateFrechetMean(method='laplace',space=sphere)", laplace, X,
                      reference=frechet_mean_reference(space),
                      distance=riemannian_distance(space), tolerance=5e-2))
    cases += _extrinsic_cases()
    flat = Euclidean(2)
    X = to_backend(np.random.default_rng(SEED).uniform(-0.5, 0.5, (N_SAMPLES, 2)))
    at_threshold = PrivateFrechetMean(flat, epsilon=threshold_epsilon(N_SAMPLES, 2, 1e-5),
                                      clip_norm=1.0, random_state=SEED)
    cases.append(Case("PrivateFrechetMean(method='auto',space=euclidean,at_threshold)",
                      at_threshold, X, reference=frechet_mean_reference(flat),
                      distance=riemannian_distance(flat), tolerance=5e-2))
    return cases


def extrinsic_mean_reference(X, y=None):
    """The projected extrinsic mean, in numpy and scipy: unit vectors' mean normalised
    (sphere, X of shape [n, p]) or expm of the mean matrix logarithm (SPD, [n, m, m])."""
    points = to_numpy(X)
    if points.ndim == 2:
        mean = points.mean(axis=0)
        return mean / np.linalg.norm(mean)
    return scipy.linalg.expm(np.mean([scipy.linalg.logm(point).real for point in points],
                                     axis=0))


def _extrinsic_cases():
    """method="extrinsic" on the sphere (C = 1 intrinsic) and SPD (C = 2: nothing is
    clipped, so the release converges to the log-Euclidean mean)."""
    cases = []
    for space_name, clip_norm in (("sphere", 1.0), ("spd", 2.0)):
        space = CHEAP_SPACES[space_name]()
        estimator = PrivateFrechetMean(space, epsilon=1.0, clip_norm=clip_norm,
                                       method="extrinsic", random_state=SEED)
        cases.append(Case(f"PrivateFrechetMean(method='extrinsic',space={space_name})",
                          estimator, _cloud(space, N_SAMPLES, 0.5, SEED),
                          reference=extrinsic_mean_reference,
                          distance=riemannian_distance(space), tolerance=5e-2))
    return cases


def _erm_cases():
    sphere = Hypersphere(2)
    X = _cloud(sphere, N_SAMPLES, 0.5, SEED)
    huber = PrivateERM(sphere, HuberDistanceLoss(sphere, 2.0), epsilon=1.0, clip_norm=1.0,
                       random_state=SEED)
    flat = Euclidean(2)
    rows = to_backend(np.random.default_rng(SEED).uniform(-0.5, 0.5, (N_SAMPLES, 2)))
    own = PrivateERM(flat, SquaredEuclideanLoss(flat), epsilon=1.0, clip_norm=1.0,
                     n_iter=10, random_state=SEED)
    plain = PrivateERM(flat, user_loss, epsilon=1.0, clip_norm=2.0, n_iter=10,
                       random_state=SEED)
    return [
        Case("PrivateERM(loss=HuberDistanceLoss,space=sphere)", huber, X,
             reference=frechet_mean_reference(sphere), distance=riemannian_distance(sphere),
             tolerance=5e-2),
        Case("PrivateERM(loss=PerSampleLoss,space=euclidean)", own, rows,
             reference=frechet_mean_reference(flat), distance=riemannian_distance(flat),
             tolerance=5e-2),
        Case("PrivateERM(loss=callable,space=euclidean)", plain, rows),
    ]


def _pca_data():
    rng = np.random.default_rng(SEED)
    X = rng.standard_normal((N_SAMPLES * 2, 4)) + 3 * np.outer(rng.standard_normal(
        N_SAMPLES * 2), [1, 1, 0, 0])
    return X / np.linalg.norm(X, axis=1).max()


def _pca_reference(X, y=None):
    return PCA(1).fit(to_numpy(X)).components_


def _pca_cases():
    X = to_backend(_pca_data())
    settings = [{"method": method} for method in ("auto", "analyze_gauss", "rgd")] + [
        {"method": "analyze_gauss", "start_shrinkage": 1.0}]
    return [Case("PrivatePCA(" + ",".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")",
                 PrivatePCA(1, data_norm=1.0, random_state=SEED, **kwargs), X,
                 reference=_pca_reference, distance=subspace_distance, tolerance=5e-2)
            for kwargs in settings]


def _matrix_completion_cases():
    rng = np.random.default_rng(SEED)
    full = rng.standard_normal((N_SAMPLES, 2)) @ rng.standard_normal((2, 6))
    ratings = to_backend(np.where(rng.random(full.shape) < 0.6, full, np.nan))
    return [Case(f"PrivateMatrixCompletion(method={method!r})",
                 PrivateMatrixCompletion(rank=2, clip_norm=5.0, method=method, n_iter=5,
                                         batch_size=10, random_state=SEED), ratings)
            for method in ("select", "als", "means", "rgd", "rsgd", "rsvrg")]


def _structured_prediction_cases():
    rng = np.random.default_rng(SEED)
    x = np.sort(rng.uniform(0, 1, N_SAMPLES))
    ball = np.stack([0.6 * x - 0.3, 0.3 * np.sin(4 * x)], axis=1)
    X, Y = to_backend(x[:, None]), poincare_to_hyperboloid(to_backend(ball))
    labels = PrivateStructuredPrediction(Hyperboloid(2), clip_norm=3.0, bandwidth=0.3,
                                         regularization=1e-2, random_state=SEED)
    cases = [Case("PrivateStructuredPrediction(method='labels',space=hyperboloid)", labels,
                  X, Y)]
    circle = Hypersphere(1)
    angles = 2 * np.pi * x + 0.2 * rng.standard_normal(N_SAMPLES)  # all around the circle
    directions = to_backend(np.stack([np.cos(angles), np.sin(angles)], axis=1))

    def projected_mean(X, y):  # base_point_: the released mean, projected
        mean = np.mean(to_numpy(y), axis=0)
        return to_backend(mean / np.linalg.norm(mean))

    cases.append(Case("PrivateStructuredPrediction(method='auto',space=circle)",
                      PrivateStructuredPrediction(circle, random_state=SEED), X, directions,
                      reference=projected_mean, distance=riemannian_distance(circle)))
    for method in ("rgd", "rsgd", "rsvrg"):  # released at predict, row by row
        estimator = PrivateStructuredPrediction(
            Hyperboloid(2), epsilon=5.0, clip_norm=1.0, n_iter=5, bandwidth=0.2,
            regularization=1e-2, method=method, random_state=SEED)
        cases.append(Case(f"PrivateStructuredPrediction(method={method!r},"
                          "space=hyperboloid)", estimator, X, Y, predict=X[:2]))
    return cases


def _federated_cases():
    flat = Euclidean(2)
    rng = np.random.default_rng(SEED)
    agents = [to_backend(rng.uniform(-0.5, 0.5, (size, 2))) for size in (8, 10, 12)]

    def reference(X, y=None):
        return FrechetMean(flat).fit(to_backend(np.concatenate(
            [to_numpy(agent) for agent in X]))).estimate_

    return [Case("PriRFed(engine='local',space=euclidean)",
                 PriRFed(flat, clip_norm=1.0, engine="local", random_state=SEED), agents,
                 reference=reference, distance=riemannian_distance(flat), tolerance=5e-2,
                 sampled=False)]


def _search_cases():
    flat = Euclidean(2)
    X = to_backend(np.random.default_rng(SEED).uniform(-0.5, 0.5, (N_SAMPLES // 2, 2)))
    erm = PrivateERM(flat, SquaredDistanceLoss(flat), clip_norm=1.0, n_iter=3)
    grid = PrivateGridSearchCV(erm, {"step_size": [0.1, 0.5]}, epsilon=2.0,
                               loss_bound=2.0, random_state=SEED)
    randomized = PrivateRandomizedSearchCV(erm, {"step_size": [0.1, 0.3, 0.5]}, n_iter=2,
                                           epsilon=2.0, loss_bound=2.0, random_state=SEED)
    public = PrivateFrechetMean(flat, epsilon=1.0, clip_norm=1.0, random_state=SEED).fit(
        to_backend(np.zeros((2, 2))))
    return [
        Case("PrivateGridSearchCV(PrivateERM)", grid, X, slow=True, sampled=False),
        Case("PrivateRandomizedSearchCV(PrivateERM)", randomized, X, slow=True,
             sampled=False),
        Case("private_score(PrivateFrechetMean,method='laplace')",
             PrivateScore(public, epsilon=1.0, loss_bound=1.0, random_state=SEED), X),
    ]


def built_in_cases():
    """Every public estimator and every method it offers, on the active backend.

    Returns
    -------
    cases : list of Case
    """
    return [*_frechet_mean_cases(), *_erm_cases(), *_pca_cases(),
            *_matrix_completion_cases(), *_structured_prediction_cases(),
            *_federated_cases(), *_search_cases(), *manifold_cases(),
            *supervised_cases()]
