"""PrivateGeodesicRegression and its mechanism: geomstats' GeodesicRegression at a huge
epsilon, the public covariate range, prediction, refused inputs, the events charged, the
error shrinking with n."""

import os
import pickle

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from sklearn.base import clone

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateGeodesicRegression
from geomstats_dp.learning.mechanisms.geodesic_regression import (
    GeodesicRegressionRelease,
    scale_covariate,
)
from geomstats_dp.optim import canonical_point
from geomstats_dp.privacy import PrivacyBudget, PrivacyLeakWarning
from geomstats_dp.testing._supervised_cases import (
    geodesic_data,
    geodesic_regression_reference,
)
from tests.conftest import shifted

SPHERE = Hypersphere(2)
BACKEND = os.environ.get("GEOMSTATS_BACKEND", "numpy")
AUTODIFF = BACKEND in ("autograd", "pytorch")


@pytest.mark.skipif(not AUTODIFF, reason="geomstats' GeodesicRegression needs autodiff")
@pytest.mark.parametrize("space", [SPHERE, Hyperboloid(2)], ids=["sphere", "hyperboloid"])
def test_huge_epsilon_matches_geomstats_geodesic_regression(space):
    from geomstats.learning.geodesic_regression import GeodesicRegression

    if BACKEND == "autograd" and isinstance(space, Hyperboloid):
        pytest.skip("geomstats' extrinsic GeodesicRegression returns v = 0 on the "
                    "hyperboloid with autograd (scipy reports a loss of precision)")

    X, y = geodesic_data(space, 60, 1)
    reference = GeodesicRegression(space, center_X=False, method="extrinsic",
                                   initialization="frechet").fit(X[:, 0], y)
    fitted = PrivateGeodesicRegression(space, epsilon=1e6, random_state=0).fit(X, y)
    assert float(space.metric.dist(fitted.intercept_, reference.intercept_)) < 2e-3
    np.testing.assert_allclose(to_numpy(fitted.coef_), to_numpy(reference.coef_), atol=2e-3)


@pytest.mark.parametrize("space", [SPHERE, Euclidean(2)], ids=["sphere", "euclidean"])
def test_huge_epsilon_matches_a_minimiser_of_the_loss_values(space):
    X, y = geodesic_data(space, 60, 2)
    coef = geodesic_regression_reference(space)(X, y)
    fitted = PrivateGeodesicRegression(space, epsilon=1e6, random_state=0).fit(X, y)
    np.testing.assert_allclose(to_numpy(fitted.coef_), coef, atol=2e-3)


def test_covariate_range_is_a_change_of_units():
    X, y = geodesic_data(SPHERE, 40, 3)
    first = PrivateGeodesicRegression(SPHERE, epsilon=2.0, random_state=5).fit(X, y)
    moved = PrivateGeodesicRegression(SPHERE, x_range=(0.0, 6.0), epsilon=2.0,
                                      random_state=5).fit(3 * X + 3, y)
    np.testing.assert_allclose(to_numpy(moved.intercept_), to_numpy(first.intercept_),
                               atol=1e-10)
    np.testing.assert_allclose(3 * to_numpy(moved.coef_), to_numpy(first.coef_), atol=1e-10)
    np.testing.assert_allclose(to_numpy(moved.predict(3 * X + 3)),
                               to_numpy(first.predict(X)), atol=1e-10)


def test_scale_covariate_maps_the_range_to_the_unit_interval_and_clips():
    np.testing.assert_allclose(scale_covariate([0.0, 1.0, 2.0, -5.0, 9.0], (0.0, 2.0)),
                               [-1.0, 0.0, 1.0, -1.0, 1.0])


def test_predict_is_the_geodesic_clipped_to_the_range():
    X, y = geodesic_data(SPHERE, 40, 4)
    fitted = PrivateGeodesicRegression(SPHERE, epsilon=1.0, random_state=0).fit(X, y)
    x = np.array([[-0.5], [0.25], [7.0]])
    expected = SPHERE.metric.exp(to_backend(np.array([-0.5, 0.25, 1.0]))[:, None]
                                 * fitted.coef_, fitted.intercept_)
    np.testing.assert_allclose(to_numpy(fitted.predict(x)), to_numpy(expected), atol=1e-12)
    with pytest.warns(PrivacyLeakWarning):
        assert fitted.score(X, y) <= 0


def test_spaces_without_closed_form_gradients_are_refused_by_fit_before_the_budget():
    """scikit-learn's convention: __init__ stores the space; fit refuses it, charging
    nothing."""
    estimator = PrivateGeodesicRegression(SPDMatrices(2))
    budget = PrivacyBudget(1.0, 1e-5)
    estimator.set_params(budget=budget)
    with pytest.raises(ValueError, match="Hypersphere"):
        estimator.fit(np.zeros((5, 1)), SPDMatrices(2).random_point(5))
    assert budget.spent_epsilon == 0


@pytest.mark.parametrize(("X", "y", "params", "match"), [
    (np.zeros((5, 2)), None, {}, r"X must have shape \[n_samples, 1\]"),
    (np.zeros((5, 1)), "short", {}, "same number of records"),
    (np.zeros((5, 1)), None, {"x_range": (1.0, 1.0)}, "x_range must be"),
])
def test_bad_inputs_are_refused_before_the_budget(X, y, params, match):
    _, points = geodesic_data(SPHERE, 5, 0)
    y = points[:3] if isinstance(y, str) else points
    budget = PrivacyBudget(1.0, 1e-5)
    estimator = PrivateGeodesicRegression(SPHERE, budget=budget, **params)
    with pytest.raises(ValueError, match=match):
        estimator.fit(X, y)
    assert budget.spent_epsilon == 0


def test_events_are_the_steps_at_sensitivity_two_c_over_n():
    mechanism = GeodesicRegressionRelease(SPHERE, 1, 50, 1.0, 1e-5, 30, 0.5, (-1.0, 1.0),
                                          to_numpy(canonical_point(SPHERE)))
    (event,) = mechanism.events()
    assert event.n_steps == 30
    assert event.sensitivity == pytest.approx(2 * 0.5 / 50)


def test_clone_and_pickle_keep_the_release():
    X, y = geodesic_data(SPHERE, 20, 6)
    fitted = PrivateGeodesicRegression(SPHERE, epsilon=1.0, random_state=0).fit(X, y)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(to_numpy(restored.coef_), to_numpy(fitted.coef_))
    assert clone(fitted).get_params()["x_range"] == (-1.0, 1.0)
    assert not hasattr(clone(fitted), "coef_")


@pytest.mark.slow
def test_error_shrinks_with_n():
    errors = {}
    for n_samples in (40, 1600):
        found = []
        for seed in range(3):
            X, y = geodesic_data(SPHERE, n_samples, shifted(seed))
            coef = geodesic_regression_reference(SPHERE)(X, y)
            fitted = PrivateGeodesicRegression(SPHERE, epsilon=1.0,
                                               random_state=shifted(seed)).fit(X, y)
            found.append(np.linalg.norm(to_numpy(fitted.coef_) - coef))
        errors[n_samples] = np.mean(found)
    assert errors[1600] < errors[40] / 2


def test_cross_validation_charges_every_fit():
    from sklearn.model_selection import cross_val_score

    X, y = geodesic_data(SPHERE, 30, 7)
    budget = PrivacyBudget(3.0, 3e-5)
    with pytest.warns(PrivacyLeakWarning):
        scores = cross_val_score(PrivateGeodesicRegression(SPHERE, budget=budget,
                                                           random_state=0),
                                 to_numpy(X), to_numpy(y), cv=3)
    assert scores.shape == (3,) and np.all(scores <= 0)
    assert len(budget.events) == 3  # one DP-RGD event per fit, composed by the budget
    assert 1.0 < budget.spent_epsilon <= 3.0


@pytest.mark.slow
@pytest.mark.skipif(BACKEND != "numpy", reason="thousands of fits: numpy")
def test_check_audit_refutes_only_the_halved_noise_twin():
    """One step of size 1 from (0, 0) on R^1: the record (0, 0) adds nothing, the other
    (x = 1, y = +-FAR) pulls (p, v) by its clipped gradient +-(C, C) / sqrt(2): the mean
    moves by its whole sensitivity 2C/n along (1, 1)."""
    from geomstats_dp.testing._audit import check_audit, projection_statistic
    from tests.testing.test_audit import DELTA, EPSILON, FAR

    estimator = PrivateGeodesicRegression(Euclidean(1), epsilon=EPSILON, delta=DELTA,
                                          n_iter=1, step_size=1.0, init_point=np.zeros(1))
    X = np.array([[0.0], [1.0]])
    check_audit(estimator, X, X, np.array([[0.0], [FAR]]), np.array([[0.0], [-FAR]]),
                release=lambda fitted: np.concatenate([to_numpy(fitted.intercept_),
                                                       to_numpy(fitted.coef_)]),
                statistic=projection_statistic([1.0, 1.0]), random_state=shifted(0))
