"""PrivateFrechetMean runs on every space TangentGaussian has a transport for."""

import geomstats.backend as gs
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.spd_matrices import (
    SPDBuresWassersteinMetric,
    SPDLogEuclideanMetric,
    SPDMatrices,
)
from geomstats.geometry.stiefel import Stiefel

from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.optim import canonical_point


def _spd(metric_class):
    space = SPDMatrices(3)
    if metric_class is not None:
        space.equip_with_metric(metric_class)
    return space


SPACES = {
    "spd_affine": lambda: _spd(None),
    "spd_bures_wasserstein": lambda: _spd(SPDBuresWassersteinMetric),
    "spd_log_euclidean": lambda: _spd(SPDLogEuclideanMetric),
    "sphere": lambda: Hypersphere(3),
    "hyperboloid": lambda: Hyperboloid(3),
    "poincare_ball": lambda: PoincareBall(3),
    "grassmannian": lambda: Grassmannian(4, 2),
    "stiefel": lambda: Stiefel(4, 2),
    "euclidean": lambda: Euclidean(3),
}


@pytest.mark.parametrize("name", sorted(SPACES))
def test_release_lies_on_the_space_and_moves_towards_the_data(name):
    space = SPACES[name]()
    start = canonical_point(space)
    center = space.metric.exp(
        TangentGaussian(space).sample(start, sigma=0.5, random_state=0), start
    )
    spread = TangentGaussian(space).sample(center, n_samples=100, sigma=0.1, random_state=1)
    points = space.metric.exp(spread, center)
    estimator = PrivateFrechetMean(space, epsilon=5.0, clip_norm=2.0, random_state=2)
    estimate = estimator.fit(points).estimate_
    assert bool(gs.all(space.belongs(estimate, atol=1e-6)))
    # at epsilon = 5 with 100 points the release is closer to the data's centre than the
    # data-independent start is
    assert float(space.metric.dist(estimate, center)) < float(space.metric.dist(start, center))
    assert estimator.budget_.spent_epsilon == pytest.approx(5.0, rel=1e-3)
