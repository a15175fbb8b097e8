"""Per-record validation losses of fitted estimators, from their releases only, against
closed forms computed here."""

import math

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere
from sklearn.linear_model import LinearRegression

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import (
    PrivateERM,
    PrivateFrechetMean,
    PrivateMDM,
    PrivatePCA,
    PrivateStructuredPrediction,
)
from geomstats_dp.model_selection.validation_losses import (
    default_loss_bound,
    record_losses,
    record_shapes,
)
from geomstats_dp.optim import HuberDistanceLoss, SquaredDistanceLoss


def test_frechet_mean_loss_is_half_the_squared_distance_to_the_release():
    rng = np.random.default_rng(0)
    estimator = PrivateFrechetMean(Euclidean(3), epsilon=1.0, delta=1e-5, clip_norm=2.0,
                                   random_state=0).fit(rng.normal(size=(40, 3)))
    held_out = rng.normal(size=(6, 3))
    expected = ((held_out - to_numpy(estimator.estimate_)) ** 2).sum(axis=1) / 2
    np.testing.assert_allclose(record_losses(estimator, held_out), expected, rtol=1e-10)
    assert record_shapes(estimator) == ((3,), None)


def test_pca_loss_is_the_squared_reconstruction_error():
    rng = np.random.default_rng(1)
    estimator = PrivatePCA(n_components=1, epsilon=1.0, delta=1e-5, data_norm=3.0,
                           random_state=0).fit(rng.normal(size=(50, 3)) / 3)
    held_out = rng.normal(size=(5, 3)) / 3
    centred = held_out - to_numpy(estimator.mean_)
    direction = to_numpy(estimator.components_)[0]
    residual = centred - np.outer(centred @ direction, direction)
    np.testing.assert_allclose(record_losses(estimator, held_out),
                               (residual**2).sum(axis=1), rtol=1e-8, atol=1e-12)
    assert record_shapes(estimator) == ((3,), None)


def test_a_non_finite_record_gives_a_non_finite_loss_without_raising():
    space = Hypersphere(2)
    data = to_numpy(space.random_uniform(20))
    estimator = PrivateFrechetMean(space, epsilon=1.0, delta=1e-5, clip_norm=1.0,
                                   random_state=0).fit(data)
    held_out = data[:3].copy()
    held_out[1] = np.nan
    losses = record_losses(estimator, held_out)
    assert losses.shape == (3,) and np.isfinite(losses[[0, 2]]).all()
    assert not np.isfinite(losses[1])


@pytest.mark.backend_independent
def test_another_estimator_raises_naming_its_class():
    with pytest.raises(TypeError, match="estimator must be an estimator of geomstats_dp.*"
                                        "got LinearRegression"):
        record_losses(LinearRegression(), np.ones((2, 2)))


def test_default_loss_bounds_hold_for_the_farthest_records():
    """Each bound is attained on the sphere: a record at the antipode of the release."""
    sphere = Hypersphere(2)
    north, south = to_backend(np.array([0.0, 0.0, 1.0])), to_backend(np.array([[0.0, 0.0, -1.0]]))
    cases = [
        (PrivateFrechetMean(sphere, clip_norm=1.0), math.pi**2 / 2),
        (PrivateERM(sphere, SquaredDistanceLoss(sphere), clip_norm=1.0), math.pi**2 / 2),
        (PrivateERM(sphere, HuberDistanceLoss(sphere, 0.5), clip_norm=1.0),
         0.5 * math.pi - 0.125),
        (PrivateStructuredPrediction(sphere), math.pi**2),
    ]
    for estimator, bound in cases:
        assert default_loss_bound(estimator) == pytest.approx(bound, rel=1e-12)
    for loss in (SquaredDistanceLoss(sphere), HuberDistanceLoss(sphere, 0.5)):
        farthest = float(to_numpy(loss.values(north, south))[0])
        assert farthest == pytest.approx(default_loss_bound(
            PrivateERM(sphere, loss, clip_norm=1.0)), rel=1e-9)
    assert default_loss_bound(PrivateMDM(sphere)) == 1.0  # a 0-1 loss
    for estimator in (PrivateFrechetMean(Euclidean(2), clip_norm=1.0),
                      PrivatePCA(1, data_norm=1.0),
                      PrivateERM(sphere, lambda x, z: 0.0, clip_norm=1.0)):
        assert default_loss_bound(estimator) is None
