"""The search and the private score on every estimator of the library.

Each search plans its candidates' events without reading data, charges exactly one
SelectionEvent (plus the refit's own events) within its epsilon, and releases a candidate of
its grid; the per-record losses are those of the estimator's released quantities.
"""

import math

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets.wordnet import poincare_to_hyperboloid
from geomstats_dp.federated import PriRFed
from geomstats_dp.learning import (
    PrivateERM,
    PrivateFrechetMean,
    PrivateMatrixCompletion,
    PrivatePCA,
    PrivateStructuredPrediction,
)
from geomstats_dp.model_selection import PrivateGridSearchCV, record_losses
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.privacy import PrivacyBudget, SelectionEvent, compose
from tests.optim.data import cloud


def _pca():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4)) + 3 * np.outer(rng.standard_normal(80), [1, 1, 0, 0])
    X /= np.linalg.norm(X, axis=1).max()
    return PrivatePCA(1, data_norm=1.0, n_iter=10), {"step_size": [0.05, 0.5]}, (X,), 1.0


def _matrix_completion():
    rng = np.random.default_rng(1)
    full = rng.standard_normal((60, 2)) @ rng.standard_normal((2, 8))
    ratings = np.where(rng.random(full.shape) < 0.6, full, np.nan)
    estimator = PrivateMatrixCompletion(rank=2, clip_norm=5.0, n_iter=10, batch_size=10)
    return estimator, {"step_size": [0.01, 0.1]}, (ratings,), 20.0


def _structured_prediction():
    rng = np.random.default_rng(2)
    x = np.sort(rng.uniform(0, 1, 40))
    ball = np.stack([0.6 * x - 0.3, 0.3 * np.sin(4 * x)], axis=1)
    estimator = PrivateStructuredPrediction(Hyperboloid(2), clip_norm=3.0, n_iter=5,
                                            regularization=1e-2, method="rgd")
    return estimator, {"bandwidth": [0.1, 0.3]}, (x[:, None], poincare_to_hyperboloid(ball)), 4.0


def _erm():
    space = Euclidean(2)

    def loss(point, sample):
        return 0.5 * ((point - sample) ** 2).sum()

    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (60, 2))
    estimator = PrivateERM(space, SquaredDistanceLoss(space), clip_norm=2.0, n_iter=10)
    return estimator, {"step_size": [0.05, 0.5]}, (X,), 4.0


def _laplace_mean():
    space = Hypersphere(2)
    center = np.array([0.0, 0.0, 1.0])  # the public centre of the data's ball
    X = space.metric.exp(to_backend(0.3 * np.random.default_rng(4).uniform(
        -1, 1, (60, 2)) @ np.eye(2, 3)), to_backend(center))
    estimator = PrivateFrechetMean(space, method="laplace", center=center, radius=0.5)
    return estimator, {"radius": [0.45, 0.5]}, (X,), 2.0  # the Laplace solver: r < pi / 6


def _prirfed():
    rng = np.random.default_rng(5)
    agents = [rng.uniform(-1, 1, (size, 2)) for size in (20, 30, 40)]
    return PriRFed(Euclidean(2), clip_norm=2.0), {"n_rounds": [1, 3]}, (agents,), 4.0


CASES = {"pca": _pca, "matrix_completion": _matrix_completion,
         "structured_prediction": _structured_prediction, "erm": _erm,
         "laplace_mean": _laplace_mean, "prirfed": _prirfed}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("refit", [True, False])
def test_search_works_with_every_estimator(name, refit):
    estimator, grid, data, bound = CASES[name]()
    budget = PrivacyBudget(6.0, 1e-5)
    search = PrivateGridSearchCV(estimator, grid, epsilon=6.0, delta=1e-5, loss_bound=bound,
                                 refit=refit, budget=budget, random_state=0).fit(*data)
    assert search.best_params_ in search.cv_results_["params"]
    assert isinstance(budget.events[0], SelectionEvent)
    assert budget.spent_epsilon <= 6.0 * (1 + 1e-9)
    assert budget.events == search.events_
    assert math.isfinite(search.best_score_)


@pytest.mark.parametrize("name", ["pca", "matrix_completion", "erm", "laplace_mean"])
def test_record_losses_are_finite_and_non_negative(name):
    estimator, _, data, _ = CASES[name]()
    estimator.set_params(epsilon=5.0, budget=PrivacyBudget(5.0, 1e-5), random_state=0)
    estimator.fit(*data)
    losses = record_losses(estimator, *data)
    assert losses.shape == (len(data[0]),)
    assert np.isfinite(losses).all() and (losses >= -1e-12).all()


def test_frechet_mean_losses_are_half_squared_distances():
    space = Hypersphere(2)
    X = cloud(space, 20, 0.5, 5)
    estimator = PrivateFrechetMean(space, epsilon=5.0, clip_norm=1.0, random_state=0,
                                   budget=PrivacyBudget(5.0, 1e-5)).fit(X)
    points, mean = to_numpy(X), to_numpy(estimator.estimate_)
    angles = np.arccos(np.clip(points @ mean, -1.0, 1.0))
    np.testing.assert_allclose(record_losses(estimator, X), angles**2 / 2, atol=1e-6)


def test_pca_losses_are_reconstruction_errors():
    estimator, _, (X,), _ = _pca()
    estimator.set_params(epsilon=5.0, budget=PrivacyBudget(5.0, 1e-5), random_state=0)
    estimator.fit(X)
    w = to_numpy(estimator.components_)[0]
    centred = X - to_numpy(estimator.mean_)  # the private mean (the default centring)
    assert np.abs(to_numpy(estimator.mean_)).sum() > 0
    residuals = centred - np.outer(centred @ w, w)
    np.testing.assert_allclose(record_losses(estimator, X), (residuals**2).sum(axis=1),
                               atol=1e-10)


def test_refit_events_fit_the_rest_of_the_budget():
    estimator, grid, (X,), bound = _erm()
    budget = PrivacyBudget(3.0, 1e-5)
    search = PrivateGridSearchCV(estimator, grid, epsilon=3.0, loss_bound=bound,
                                 budget=budget, random_state=1).fit(to_backend(X))
    refit = search.best_estimator_.events_
    assert refit and search.refit_epsilon_ > 0
    assert compose((search.events_[0], *refit), 1e-5).epsilon == pytest.approx(3.0, rel=1e-3)


def test_prirfed_losses_are_half_squared_distances():
    from geomstats_dp.federated import PriRFed

    rng = np.random.default_rng(6)
    agents = [rng.uniform(-1, 1, (20, 2)) for _ in range(3)]
    estimator = PriRFed(Euclidean(2), epsilon=5.0, n_rounds=2, n_sampled=2, clip_norm=2.0,
                        random_state=0, budget=PrivacyBudget(5.0, 1e-5)).fit(agents)
    held_out = rng.uniform(-1, 1, (10, 2))
    expected = ((held_out - to_numpy(estimator.estimate_)) ** 2).sum(axis=1) / 2
    np.testing.assert_allclose(record_losses(estimator, held_out), expected, atol=1e-10)
