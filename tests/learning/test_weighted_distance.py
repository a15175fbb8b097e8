"""The weighted (Huber) squared distance of one structured prediction."""

import numpy as np
from geomstats.geometry.hyperboloid import Hyperboloid

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets.wordnet import poincare_to_hyperboloid
from geomstats_dp.learning._weighted_distance import WeightedSquaredDistanceLoss
from geomstats_dp.optim import PairedSamples

SPACE = Hyperboloid(2)


def test_huber_loss_caps_each_pull_at_the_radius():
    """Gradient -c clip_D(Log_w(y)); value c (D d - D^2 / 2) beyond D, c d^2 / 2 within."""
    points = poincare_to_hyperboloid(np.array([[0.1, 0.0], [0.0, 0.9], [-0.95, 0.0]]))
    base = to_backend(points[0])
    data = PairedSamples(to_backend(np.array([2.0, -0.5])), to_backend(points[1:]))
    loss = WeightedSquaredDistanceLoss(SPACE, radius=1.5)
    dist = to_numpy(SPACE.metric.dist(to_backend(points[1:]), base))
    assert (dist > 1.5).all()  # both targets are beyond the radius
    grads = loss.gradients(base, data)
    norms = to_numpy(SPACE.metric.norm(grads, base))
    assert np.allclose(norms, [2.0 * 1.5, 0.5 * 1.5])
    logs = to_numpy(SPACE.metric.log(to_backend(points[1:]), base))
    directions = -np.array([2.0, -0.5])[:, None] * logs / dist[:, None]
    assert np.allclose(to_numpy(grads), 1.5 * directions)
    values = to_numpy(loss.values(base, data))
    assert np.allclose(values, [2.0, -0.5] * (1.5 * dist - 1.5**2 / 2))
    near = WeightedSquaredDistanceLoss(SPACE, radius=10.0)
    assert np.allclose(to_numpy(near.values(base, data)), [2.0, -0.5] * dist**2 / 2)
    assert np.allclose(to_numpy(near.gradients(base, data)),
                       -np.array([2.0, -0.5])[:, None] * logs)
