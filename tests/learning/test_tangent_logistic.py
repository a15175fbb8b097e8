"""TangentLogisticRelease (learning.mechanisms.tangent_logistic), run by
PrivateTangentSpaceClassifier: its ledger spends epsilon, a fifth on the reference point;
the rows are the clipped logs at the base point; a public base point costs nothing."""

import math

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateTangentSpaceClassifier
from geomstats_dp.learning._tangent_frame import tangent_frame
from geomstats_dp.learning.mechanisms.logistic import LogisticRelease
from geomstats_dp.learning.mechanisms.tangent_logistic import (
    TangentLogisticRelease,
    tangent_rows,
)

from .classifier_data import gdp_epsilon, spd_classes


def test_tangent_classifier_ledger_spends_epsilon():
    X, y = spd_classes()
    model = PrivateTangentSpaceClassifier(SPDMatrices(3), classes=[0, 1, 2], n_iter=20,
                                          random_state=0).fit(X, y)
    reference, steps = model.events_
    assert reference.sensitivity == pytest.approx(6.0) and reference.n_steps == 3
    assert steps.sensitivity == pytest.approx(2.0) and steps.n_steps == 20
    mu = math.sqrt(3 / reference.noise_multiplier**2 + 20 / steps.noise_multiplier**2)
    assert gdp_epsilon(mu, 1e-5) == pytest.approx(1.0, rel=1e-4)
    assert 3 / reference.noise_multiplier**2 / mu**2 == pytest.approx(0.2)


def test_rows_are_the_logs_at_the_base_point_clipped():
    """|row_i| = min(d(x_i, p), C): the frame is orthonormal for the metric at p."""
    space = SPDMatrices(3)
    X, _ = spd_classes(n_per_class=5)
    rows = tangent_rows(space, tangent_frame(space, np.eye(3)), 0.8, X)
    distances = to_numpy(space.metric.dist(X, to_backend(np.eye(3))))
    assert (distances > 0.8).any() and (distances < 0.8).any()
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), np.minimum(distances, 0.8),
                               rtol=1e-10)


def test_a_public_base_point_charges_only_the_logistic_steps():
    space = SPDMatrices(3)
    X, y = spd_classes(n_per_class=5)
    logistic = LogisticRelease(n_samples=15, n_classes=3, n_features=6, gradient_clip=1.0,
                               regularization=0.1, n_iter=4, step_size=1.0,
                               noise_multiplier=2.0)
    mechanism = TangentLogisticRelease(space, 1.0, logistic, base_point=np.eye(3))
    assert mechanism.events() == logistic.events()
    fitted = mechanism.release((to_numpy(X), y), None, np.random.default_rng(0))
    np.testing.assert_array_equal(fitted["base_point_"], np.eye(3))
    assert fitted["coef_"].shape == (3, 6) and "noise_multipliers_" not in fitted
