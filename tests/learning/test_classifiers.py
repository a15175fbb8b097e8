"""PrivateMDM, PrivateToTangentSpace and PrivateTangentSpaceClassifier: scikit-learn use,
convergence to the non-private pipelines at a huge epsilon, the accounting, the label
adjacency, pyRiemann interop."""

import math
import pickle

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDLogEuclideanMetric, SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean
from geomstats.learning.mdm import RiemannianMinimumDistanceToMean
from scipy.stats import norm
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import (
    PrivateMDM,
    PrivateTangentSpaceClassifier,
    PrivateToTangentSpace,
)
from geomstats_dp.learning._tangent_frame import (
    coordinates,
    tangent_frame,
    tangent_vector,
)
from geomstats_dp.privacy import PrivacyBudget, PrivacyLeakWarning
from geomstats_dp.privacy.stages import observe_stages
from geomstats_dp.testing import check_stage_sensitivity
from tests.conftest import shifted

HUGE = 1e6


def _classes(n_per_class=30, n_classes=3, spread=0.3, seed=0, dim=3):
    """SPD(dim) clouds around n_classes centres (distance about 0.8 from I)."""
    rng = np.random.default_rng(seed)
    points, labels = [], []
    for k in range(n_classes):
        centre = rng.standard_normal((dim, dim))
        centre = 0.8 * (centre + centre.T) / np.linalg.norm(centre + centre.T)
        noise = rng.standard_normal((n_per_class, dim, dim)) * spread / (2 * dim)
        logs = centre + (noise + np.swapaxes(noise, 1, 2)) / 2
        values, vectors = np.linalg.eigh(logs)
        points.append((vectors * np.exp(values)[:, None, :]) @ np.swapaxes(vectors, 1, 2))
        labels.append(np.full(n_per_class, k))
    return to_backend(np.concatenate(points)), np.concatenate(labels)


def _gdp_epsilon(mu, delta):
    """The epsilon of mu-GDP at delta (Dong, Roth & Su 2019), by bisection."""
    def delta_of(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    low, high = 0.0, 100.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if delta_of(middle) > delta else (low, middle)
    return high


# -- PrivateMDM -----------------------------------------------------------------------

@pytest.mark.parametrize("labels", ["private", "public"])
def test_mdm_converges_to_geomstats_mdm(labels):
    space = SPDMatrices(3)
    X, y = _classes()
    model = PrivateMDM(space, epsilon=HUGE, labels=labels, classes=[0, 1, 2], n_iter=10,
                       clip_norm=2.0, random_state=0).fit(X, y)
    reference = RiemannianMinimumDistanceToMean(space).fit(X, to_backend(y))
    for k in range(3):
        assert float(space.metric.dist(model.centroids_[k],
                                       reference.mean_estimates_[k])) < 1e-3
    np.testing.assert_array_equal(model.predict(X), to_numpy(reference.predict(X)))
    distances = model.transform(X)
    assert distances.shape == (len(X), 3)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    expected = np.exp(-distances**2) / np.exp(-distances**2).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(proba, expected)


def test_mdm_ledger_is_the_gaussian_composition():
    """Private labels: counts (sensitivity sqrt 2) and n_iter rounds of class sums
    (sensitivity 2C), composing to epsilon exactly; public labels: the sums alone."""
    X, y = _classes()
    space = SPDMatrices(3)
    model = PrivateMDM(space, epsilon=1.0, clip_norm=1.5, n_iter=4, classes=[0, 1, 2],
                       random_state=0).fit(X, y)
    counts, sums = model.events_
    assert counts.sensitivity == pytest.approx(math.sqrt(2))
    assert sums.sensitivity == pytest.approx(3.0) and sums.n_steps == 4
    mu = math.sqrt(1 / counts.noise_multiplier**2 + 4 / sums.noise_multiplier**2)
    assert _gdp_epsilon(mu, 1e-5) == pytest.approx(1.0, rel=1e-4)
    assert model.budget_.spent_epsilon == pytest.approx(1.0, rel=1e-4)
    public = PrivateMDM(space, labels="public", n_iter=4, random_state=0).fit(X, y)
    (only,) = public.events_
    assert _gdp_epsilon(math.sqrt(4) / only.noise_multiplier, 1e-5) == pytest.approx(
        1.0, rel=1e-4)


def test_mdm_divides_by_the_released_counts():
    """With private labels the class steps use the noisy counts, never the exact ones: a
    released count changed by an observer changes the centroid of its class."""
    X, y = _classes()
    space = SPDMatrices(3)
    model = PrivateMDM(space, classes=[0, 1, 2], n_iter=1, random_state=0)

    def fit(bump):
        def observer(stage):
            released = stage.release()
            return released + bump if stage.label.endswith("class counts") else released
        with observe_stages(observer):
            return clone(model).fit(X, y).centroids_

    assert float(space.metric.dist(fit(0.0)[0], fit(25.0)[0])) > 1e-3


def _label_neighbours(X, y, space):
    """Record 0 moved to another class: same point, a far point, the other class's point."""
    far = to_numpy(space.metric.exp(to_backend(5.0 * np.eye(3) / math.sqrt(3)),
                                    to_backend(np.eye(3))))
    for name, point in [("same point", to_numpy(X[0])), ("far", far),
                        ("other", to_numpy(X[-1]))]:
        X2, y2 = np.array(to_numpy(X)), y.copy()
        X2[0], y2[0] = point, y[-1]
        yield name, to_backend(X2), y2


@pytest.mark.parametrize("estimator", [
    PrivateMDM(SPDMatrices(3), classes=[0, 1, 2], n_iter=2),
    PrivateTangentSpaceClassifier(SPDMatrices(3), classes=[0, 1, 2], n_iter=5),
], ids=["mdm", "tangent"])
def test_a_record_changing_class_moves_each_stage_within_its_sensitivity(estimator):
    space = SPDMatrices(3)
    X, y = _classes(n_per_class=10)
    check_stage_sensitivity(estimator, X, y, neighbours=list(_label_neighbours(X, y, space)))


def test_mdm_refuses_labels_outside_the_classes_and_warns_on_inferred_classes():
    X, y = _classes(n_per_class=5)
    space = SPDMatrices(3)
    with pytest.raises(ValueError, match=r"y holds labels outside classes at indices \[10"):
        PrivateMDM(space, classes=[0, 1], random_state=0).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="classes were read"):
        PrivateMDM(space, random_state=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'labels' parameter"):
        PrivateMDM(space, labels="secret").fit(X, y)
    with pytest.raises(NotFittedError):
        PrivateMDM(space).predict(X)


# -- tangent space --------------------------------------------------------------------

LOG_EUCLIDEAN = SPDMatrices(3)
LOG_EUCLIDEAN.equip_with_metric(SPDLogEuclideanMetric)


@pytest.mark.parametrize("space", [SPDMatrices(3), LOG_EUCLIDEAN, Hypersphere(3)],
                         ids=["ai", "le", "sphere"])
def test_frame_coordinates_are_an_isometry(space):
    """<c_i, c_j> = <Log_p x_i, Log_p x_j>_p, and the coordinates map back to the logs."""
    X = (_classes(n_per_class=4)[0] if isinstance(space, SPDMatrices)
         else space.random_riemannian_normal(mean=space.random_point(), n_samples=12))
    point = X[1]
    frame = tangent_frame(space, to_numpy(point))
    rows = coordinates(space, frame, X)
    logs = space.metric.log(X, point)
    gram = np.stack([to_numpy(space.metric.inner_product(logs, log, point)) for log in logs])
    np.testing.assert_allclose(rows @ rows.T, gram, atol=1e-8)
    np.testing.assert_allclose(to_numpy(tangent_vector(space, frame, rows)), to_numpy(logs),
                               atol=1e-8)


def test_transformer_with_a_public_base_point_charges_nothing_and_clips():
    space = SPDMatrices(3)
    X, _ = _classes()
    budget = PrivacyBudget(1.0, 1e-5)
    model = PrivateToTangentSpace(space, base_point=np.eye(3), clip_norm=0.5,
                                  budget=budget).fit(X)
    assert model.events_ == () and budget.spent_epsilon == 0
    rows = model.transform(X)
    distances = to_numpy(space.metric.dist(X, to_backend(np.eye(3))))
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), np.minimum(distances, 0.5))


def test_tangent_classifier_converges_to_tangent_space_and_logistic_regression():
    space = SPDMatrices(3)
    X, y = _classes(spread=1.5)
    mean = to_numpy(FrechetMean(space).fit(X).estimate_)
    lam = 0.05
    model = PrivateTangentSpaceClassifier(space, epsilon=HUGE, classes=[0, 1, 2],
                                          base_point=mean, clip_norm=2.0,
                                          regularization=lam, step_size=1.0, n_iter=400,
                                          random_state=0).fit(X, y)
    rows = to_numpy(coordinates(space, tangent_frame(space, mean), X)) / 2.0
    assert np.linalg.norm(rows, axis=1).max() < 1  # nothing clipped
    reference = LogisticRegression(C=1 / (len(rows) * lam), tol=1e-12,
                                   max_iter=10_000).fit(rows, y)
    np.testing.assert_allclose(model.coef_ - model.coef_.mean(axis=0),
                               reference.coef_ - reference.coef_.mean(axis=0), atol=1e-2)
    np.testing.assert_array_equal(model.predict(X), reference.predict(rows))


def test_tangent_classifier_ledger_spends_epsilon():
    X, y = _classes()
    model = PrivateTangentSpaceClassifier(SPDMatrices(3), classes=[0, 1, 2], n_iter=20,
                                          random_state=0).fit(X, y)
    reference, steps = model.events_
    assert reference.sensitivity == pytest.approx(6.0) and reference.n_steps == 3
    assert steps.sensitivity == pytest.approx(2.0) and steps.n_steps == 20
    mu = math.sqrt(3 / reference.noise_multiplier**2 + 20 / steps.noise_multiplier**2)
    assert _gdp_epsilon(mu, 1e-5) == pytest.approx(1.0, rel=1e-4)
    assert 3 / reference.noise_multiplier**2 / mu**2 == pytest.approx(0.2)


# -- scikit-learn and pyRiemann -------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda space: PrivateMDM(space, epsilon=5.0, classes=[0, 1, 2], random_state=0),
    lambda space: PrivateTangentSpaceClassifier(space, epsilon=5.0, classes=[0, 1, 2],
                                                n_iter=20, random_state=0),
    lambda space: make_pipeline(PrivateToTangentSpace(space, epsilon=5.0, random_state=0),
                                LogisticRegression()),
], ids=["mdm", "tangent", "transformer"])
def test_clone_pickle_and_cross_validation(make):
    space = SPDMatrices(3)
    X, y = _classes(seed=shifted(1))
    model = make(space)
    scores = cross_val_score(model, X, y, cv=StratifiedKFold(3, shuffle=True,
                                                             random_state=0))
    assert scores.mean() > 0.8  # three separated classes, epsilon 5
    fitted = clone(model).fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))


def test_private_grid_search_over_the_mdm():
    from geomstats_dp.model_selection import PrivateGridSearchCV

    X, y = _classes()
    search = PrivateGridSearchCV(
        PrivateMDM(SPDMatrices(3), classes=[0, 1, 2]), {"clip_norm": [0.5, 1.0]},
        epsilon=4.0, loss_bound=1.0, random_state=0).fit(X, y)
    assert search.best_params_["clip_norm"] in (0.5, 1.0)
    assert search.budget_.spent_epsilon <= 4.0 * (1 + 1e-9)


def test_pyriemann_covariances_go_straight_in():
    pyriemann = pytest.importorskip("pyriemann")
    rng = np.random.default_rng(shifted(0))
    n_trials, n_channels, n_times = 60, 4, 200
    y = np.repeat([0, 1], n_trials // 2)
    scales = np.where(y[:, None] == 0, [1.0, 1.0, 2.0, 2.0], [2.0, 2.0, 1.0, 1.0])
    signals = rng.standard_normal((n_trials, n_channels, n_times)) * scales[:, :, None]
    space = SPDMatrices(n_channels)
    for model in (PrivateMDM(space, epsilon=10.0, classes=[0, 1], random_state=0),
                  PrivateTangentSpaceClassifier(space, epsilon=10.0, classes=[0, 1],
                                                random_state=0)):
        pipeline = make_pipeline(pyriemann.estimation.Covariances(), model)
        assert cross_val_score(pipeline, signals, y, cv=3).mean() > 0.9


@pytest.mark.backend_independent
@pytest.mark.parametrize("estimator", [PrivateMDM, PrivateToTangentSpace,
                                       PrivateTangentSpaceClassifier])
def test_docstring_parameters_are_the_constructor_signature(estimator):
    import inspect
    import re

    section = estimator.__doc__.split("Parameters\n    ----------\n")[1].split("\n\n")[0]
    documented = re.findall(r"^    (\w+) :", section, flags=re.MULTILINE)
    assert documented == list(inspect.signature(estimator.__init__).parameters)[1:]
