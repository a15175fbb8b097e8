"""PrivateToTangentSpace and PrivateTangentSpaceClassifier: a public base point charges
nothing and the rows are clipped; convergence to tangent coordinates and scikit-learn's
logistic regression at a huge epsilon."""

import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean
from sklearn.linear_model import LogisticRegression

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateTangentSpaceClassifier, PrivateToTangentSpace
from geomstats_dp.learning._tangent_frame import coordinates, tangent_frame
from geomstats_dp.privacy import PrivacyBudget

from .classifier_data import HUGE, spd_classes


def test_transformer_with_a_public_base_point_charges_nothing_and_clips():
    space = SPDMatrices(3)
    X, _ = spd_classes()
    budget = PrivacyBudget(1.0, 1e-5)
    model = PrivateToTangentSpace(space, base_point=np.eye(3), clip_norm=0.5,
                                  budget=budget).fit(X)
    assert model.events_ == () and budget.spent_epsilon == 0
    rows = model.transform(X)
    distances = to_numpy(space.metric.dist(X, to_backend(np.eye(3))))
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), np.minimum(distances, 0.5))


def test_tangent_classifier_converges_to_tangent_space_and_logistic_regression():
    space = SPDMatrices(3)
    X, y = spd_classes(spread=1.5)
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
