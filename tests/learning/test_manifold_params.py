"""The shared parameters and fit of the manifold estimators (``_manifold_params``):
scikit-learn's estimator checks on PrivateKMeans, PrivateTangentPCA and
PrivateGeometricMedian, with the expected failures of every manifold estimator
(``test_sklearn_checks``: the space fixes a point's shape, the checks vary it)."""

import pickle
import warnings

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import check_estimator

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import (
    PrivateGeometricMedian,
    PrivateKMeans,
    PrivateTangentPCA,
)
from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.testing._manifold_cases import planted_clusters
from tests.learning.test_sklearn_checks import (
    COMMON,
    SAMPLE_WEIGHTS,
    SHAPE,
    SHAPED,
    _because,
)

PASSING = {"check_n_features_in"}  # n_features_in_ is set by fit
SHAPED_HERE = tuple(name for name in SHAPED if name not in PASSING)
TRANSFORMER_CHECKS = ("check_transformer_data_not_an_array", "check_transformer_general",
                      "check_transformer_preserve_dtypes")
EXPECTED = {
    "PrivateKMeans": {**COMMON, **_because(SHAPE, SHAPED_HERE, TRANSFORMER_CHECKS)},
    "PrivateTangentPCA": {**COMMON, **_because(SHAPE, SHAPED_HERE, TRANSFORMER_CHECKS)},
    "PrivateGeometricMedian": {**COMMON, **_because(SHAPE, SHAPED_HERE, SAMPLE_WEIGHTS),
                               "check_all_zero_sample_weights_error": SHAPE},
}
ESTIMATORS = [PrivateKMeans(Euclidean(2), 2, epsilon=1e3, random_state=0),
              PrivateTangentPCA(Euclidean(2), 1, epsilon=1e3, random_state=0),
              PrivateGeometricMedian(Euclidean(2), epsilon=1e3, n_iter=3, random_state=0)]


@pytest.mark.backend_independent
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda est: type(est).__name__)
def test_scikit_learn_estimator_checks(estimator):
    """Every check passes except the declared ones, and each declared one does fail."""
    expected = EXPECTED[type(estimator).__name__]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, expected_failed_checks=expected, on_fail=None)
    failed = {r["check_name"]: repr(r["exception"]) for r in results if r["status"] == "failed"}
    assert failed == {}
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    assert passed & set(expected) == set()


SPHERE = Hypersphere(2)


def _estimators():
    return [PrivateKMeans(SPHERE, 3, epsilon=5.0, clip_norm=0.5, random_state=0),
            PrivateTangentPCA(SPHERE, 1, epsilon=5.0, random_state=0),
            PrivateGeometricMedian(SPHERE, epsilon=5.0, random_state=0)]


def _release(estimator):
    for name in ("cluster_centers_", "components_", "estimate_"):
        if hasattr(estimator, name):
            return to_numpy(getattr(estimator, name))
    raise AssertionError(name)


@pytest.fixture(scope="module")
def clusters():
    return planted_clusters(SPHERE, 3, 60, 0.1, 0)


@pytest.mark.parametrize("template", _estimators(), ids=lambda est: type(est).__name__)
def test_clone_pickle_and_refit_give_the_same_release(template, clusters):
    """A clone, and an unpickled fitted estimator, reproduce the release of the same
    seed; the parameters are stored unchanged."""
    fitted = clone(template).fit(clusters)
    again = clone(template).fit(clusters)
    np.testing.assert_allclose(_release(fitted), _release(again))
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_allclose(_release(restored), _release(fitted))
    params, cloned = template.get_params(), clone(template).get_params()
    assert type(cloned.pop("space")) is type(params.pop("space"))
    assert cloned == params


@pytest.mark.parametrize("template", _estimators(), ids=lambda est: type(est).__name__)
def test_unfitted_raises_not_fitted(template, clusters):
    method = next(getattr(template, name) for name in ("predict", "transform", "score")
                  if hasattr(template, name))
    with pytest.raises(NotFittedError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        method(clusters)


@pytest.mark.parametrize(("template", "params", "argument"), [
    (PrivateKMeans(SPHERE), {"n_clusters": 0}, "n_clusters"),
    (PrivateKMeans(SPHERE), {"init": "kmeans++"}, "init"),
    (PrivateKMeans(SPHERE), {"clip_norm": float("inf")}, "clip_norm"),
    (PrivateKMeans(SPHERE), {"init": np.zeros((2, 3))}, "init"),
    (PrivateTangentPCA(SPHERE), {"n_components": 3}, "n_components"),
    (PrivateTangentPCA(SPHERE), {"mean_budget_fraction": 1.0}, "mean_budget_fraction"),
    (PrivateTangentPCA(SPHERE), {"base_point": np.zeros(3)}, "base_point"),
    (PrivateGeometricMedian(SPHERE), {"epsilon": -1.0}, "epsilon"),
    (PrivateGeometricMedian(SPHERE), {"n_iter": 1.5}, "n_iter"),
    (PrivateGeometricMedian(SPHERE), {"random_state": 0, "secure": True}, "random_state"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_bad_parameters_are_refused_before_the_budget(template, params, argument,
                                                      clusters):
    """A bad parameter raises ValueError or TypeError naming it, charging nothing and
    leaving the estimator unfitted."""
    budget = PrivacyBudget(10.0, 1e-3)
    estimator = clone(template).set_params(budget=budget, **params)
    with pytest.raises((ValueError, TypeError), match=argument):
        estimator.fit(clusters)
    assert budget.spent_epsilon == 0
    assert not any(name.endswith("_") and not name.startswith("_") for name in vars(estimator))


@pytest.mark.parametrize("template", _estimators(), ids=lambda est: type(est).__name__)
def test_budget_checked_before_any_value_is_read(template, clusters):
    """On a budget too small, a dataset holding NaN raises BudgetExceededError (the
    budget), not the value check's ValueError."""
    from geomstats_dp.privacy import BudgetExceededError

    bad = np.array(to_numpy(clusters))
    bad[3, 0] = np.nan
    estimator = clone(template).set_params(budget=PrivacyBudget(1.0, 1e-5))
    with pytest.raises(BudgetExceededError):
        estimator.fit(to_backend(bad))


def test_pipeline_and_cross_val_score(clusters):
    """Tangent PCA then k-means in a Pipeline; the median's score in cross_val_score."""
    pipeline = Pipeline([("pca", PrivateTangentPCA(SPHERE, 2, epsilon=5.0, random_state=0)),
                         ("kmeans", PrivateKMeans(Euclidean(2), 3, epsilon=5.0,
                                                  clip_norm=0.5, random_state=0))])
    labels = pipeline.fit(clusters).predict(clusters)
    assert labels.shape == (60,) and set(np.unique(labels)) <= {0, 1, 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = cross_val_score(PrivateGeometricMedian(SPHERE, epsilon=5.0, random_state=0),
                                 to_numpy(clusters), cv=3)
    assert scores.shape == (3,) and np.all(scores < 0)


def test_pyriemann_covariances_go_straight_in():
    """pyRiemann's Covariances, then the private tangent PCA and k-means on its scores:
    two planted classes of signals (channel 0 or channel 2 louder) are told apart."""
    pyriemann = pytest.importorskip("pyriemann.estimation")
    from geomstats.geometry.spd_matrices import SPDMatrices
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(0)
    scales = np.where(np.arange(200)[:, None] < 100, [3.0, 1.0, 1.0], [1.0, 1.0, 3.0])
    signals = rng.standard_normal((200, 3, 100)) * scales[:, :, None]
    pipeline = Pipeline([
        ("covariances", pyriemann.Covariances()),
        ("pca", PrivateTangentPCA(SPDMatrices(3), 1, epsilon=1e3, clip_norm=3.0,
                                  random_state=0)),
        ("kmeans", PrivateKMeans(Euclidean(1), 2, epsilon=1e3, clip_norm=2.0,
                                 random_state=0)),
    ])
    labels = pipeline.fit(signals).predict(signals)
    assert adjusted_rand_score(np.arange(200) < 100, labels) > 0.9
