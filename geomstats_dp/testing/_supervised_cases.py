"""The built-in cases of the supervised estimators: the classifiers on SPD(2) (class means,
tangent-space features and logistic regression) and geodesic regression on three spaces,
with their non-private references."""

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean
from geomstats.learning.mdm import RiemannianMinimumDistanceToMean
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import (
    PrivateGeodesicRegression,
    PrivateMDM,
    PrivateTangentSpaceClassifier,
    PrivateToTangentSpace,
    tangent_frame,
)
from geomstats_dp.learning.mechanisms.tangent_logistic import tangent_rows
from geomstats_dp.optim import canonical_point
from geomstats_dp.testing._case import (
    N_SAMPLES,
    SEED,
    Case,
    _cloud,
    frechet_mean_reference,
    riemannian_distance,
)


def _two_classes(space):
    """Two clouds of N_SAMPLES / 2 points each, on either side of the canonical point, and
    their labels."""
    first = to_numpy(_cloud(space, N_SAMPLES // 2, 0.3, SEED, offset=0.5))
    second = to_numpy(_cloud(space, N_SAMPLES // 2, 0.3, SEED + 7, offset=0.5))
    X = to_backend(np.concatenate([first, second]))
    return X, np.repeat([0, 1], N_SAMPLES // 2)


def mdm_reference(space):
    """geomstats' non-private class means (``RiemannianMinimumDistanceToMean``)."""
    def reference(X, y):
        return RiemannianMinimumDistanceToMean(space).fit(X, to_backend(y)).mean_estimates_

    return reference


def tangent_logistic_reference(space, clip_norm, regularization,
                               penalised_intercept=False):
    """scikit-learn's LogisticRegression on the clipped orthonormal tangent rows at
    geomstats' Frechet mean, scaled by 1 / clip_norm (the coefficients); with
    ``penalised_intercept`` (objective perturbation) the intercept is a penalised column
    of ones."""
    def reference(X, y):
        frame = tangent_frame(space, to_numpy(FrechetMean(space).fit(X).estimate_))
        rows = tangent_rows(space, frame, clip_norm, X) / clip_norm
        if penalised_intercept:
            rows = np.hstack([rows, np.ones((len(rows), 1))])
        binary = len(np.unique(y)) == 2  # softmax rows w0 = -w1 = w / 2: penalty lambda / 2
        model = LogisticRegression(C=(2 if binary else 1) / (len(rows) * regularization),
                                   fit_intercept=not penalised_intercept, tol=1e-12,
                                   max_iter=10_000).fit(rows, y)
        coef = model.coef_[:, :-1] if penalised_intercept else model.coef_
        return np.concatenate([-coef / 2, coef / 2]) if binary else coef

    return reference


def _classifier_cases():
    space = SPDMatrices(2)
    X, y = _two_classes(space)
    cases = [Case(f"PrivateMDM(labels={labels!r},space=spd)",
                  PrivateMDM(space, labels=labels, classes=[0, 1], random_state=SEED), X, y,
                  reference=mdm_reference(space), tolerance=5e-2)
             for labels in ("private", "public")]
    cases.append(Case("PrivateToTangentSpace(space=spd)",
                      PrivateToTangentSpace(space, reference_clip_norm=1.0,
                                            random_state=SEED), X,
                      reference=frechet_mean_reference(space),
                      distance=riemannian_distance(space), tolerance=5e-2))
    classifier = PrivateTangentSpaceClassifier(
        space, classes=[0, 1], reference_clip_norm=1.0, regularization=0.1, step_size=1.0,
        n_iter=200, random_state=SEED)
    cases.append(Case("PrivateTangentSpaceClassifier(space=spd)", classifier, X, y,
                      reference=tangent_logistic_reference(space, 1.0, 0.1),
                      tolerance=5e-2))
    objective = PrivateTangentSpaceClassifier(
        space, classes=[0, 1], reference_clip_norm=1.0, regularization=0.1,
        method="objective_perturbation", random_state=SEED)
    cases.append(Case("PrivateTangentSpaceClassifier(method='objective_perturbation',"
                      "space=spd)", objective, X, y,
                      reference=tangent_logistic_reference(space, 1.0, 0.1, True),
                      tolerance=5e-2))
    return cases


def geodesic_data(space, n_samples, seed, noise=0.05):
    """A covariate uniform on [-1, 1] [n, 1] and responses scattered (tangent Gaussian,
    ``noise`` per coordinate) around a geodesic through a point near the canonical one."""
    rng = np.random.default_rng(seed)
    start = canonical_point(space)
    point = space.metric.exp(space.to_tangent(to_backend(
        rng.normal(scale=0.3, size=space.shape)), start), start)
    vec = space.to_tangent(to_backend(rng.normal(scale=0.5, size=space.shape)), point)
    x = rng.uniform(-1.0, 1.0, n_samples)
    fitted = space.metric.exp(gs.einsum("k,...->k...", to_backend(x), vec), point)
    scatter = space.to_tangent(to_backend(rng.normal(scale=noise, size=(
        n_samples, *space.shape))), fitted)
    return to_backend(x[:, None]), space.metric.exp(scatter, fitted)


def geodesic_regression_reference(space):
    """The (p, v) minimising the mean of d(Exp_p(x_i v), y_i)^2 / 2, by scipy's BFGS on
    the loss values alone (numerical gradients), p = Exp_{p0}(a) and v the transport of b
    from the canonical point p0; returns v (``coef_`` for x_range (-1, 1))."""
    start = canonical_point(space)

    def unpack(params):
        a, b = np.split(params, 2)
        point = space.metric.exp(space.to_tangent(to_backend(a), start), start)
        vec = space.metric.parallel_transport(space.to_tangent(to_backend(b), start),
                                              start, end_point=point)
        return point, vec

    def reference(X, y):
        x = to_backend(to_numpy(X)[:, 0])

        def objective(params):
            point, vec = unpack(params)
            fitted = space.metric.exp(gs.einsum("k,...->k...", x, vec), point)
            return float(to_numpy(gs.mean(space.metric.squared_dist(fitted, y))) / 2)

        size = int(np.prod(space.shape))
        found = minimize(objective, np.zeros(2 * size), method="BFGS",
                         options={"gtol": 1e-10})
        return to_numpy(unpack(found.x)[1])

    return reference


def _regression_cases():
    cases = []
    for name, space in (("sphere", Hypersphere(2)), ("hyperboloid", Hyperboloid(2)),
                        ("euclidean", Euclidean(2))):
        X, y = geodesic_data(space, N_SAMPLES, SEED)
        cases.append(Case(f"PrivateGeodesicRegression(space={name})",
                          PrivateGeodesicRegression(space, random_state=SEED), X, y,
                          reference=geodesic_regression_reference(space), tolerance=5e-2))
    return cases


def supervised_cases():
    """The classifier and regression cases, on the active backend.

    Returns
    -------
    cases : list of Case
    """
    return [*_classifier_cases(), *_regression_cases()]
