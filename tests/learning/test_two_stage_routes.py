"""The two-stage release's one-pass localisation and closed-form maps release what the
plain route releases: for a fixed seed, the estimate of a fit equals, to rounding, that
of a fit whose localisation computes the distances to the coarse point with geomstats'
``log`` and ``norm`` and then a second gradient pass, whose steps use geomstats' ``exp``
and whose settled mean is the Karcher iteration written here with geomstats' maps.
"""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateERM, PrivateFrechetMean
from geomstats_dp.learning.mechanisms import tangent
from geomstats_dp.optim import HuberDistanceLoss
from geomstats_dp.optim.geodesics import Geodesics
from geomstats_dp.optim.oracle import GradientOracle
from tests.learning.test_mean_methods import FAR_POLE, FAR_SPD, _points_around


def two_passes(self, point, choose_clip):
    """The localisation as it was: geomstats' norms of the gradients, then the sum."""
    grads = self.loss.tangent_gradients(point, self.data)
    clip_norm = choose_clip(to_numpy(self.metric.norm(grads, point)))
    return clip_norm, self.clipped_sum(point, clip_norm)


def geomstats_karcher_mean(space, points, weights, base_point, n_iter=20, tol=0.0):
    """n_iter steps x <- Exp_x(sum_i w_i Log_x(x_i)) with geomstats' maps (all of them:
    ``tol`` is ignored, so the release's stopped iteration is checked against the full
    one)."""
    point = base_point
    for _ in range(n_iter):
        logs = space.metric.log(points, point)
        point = space.metric.exp(
            to_backend(np.einsum("k,k...->...", to_numpy(weights), to_numpy(logs))), point)
    return point


def _fit(space, points, radius, seed):
    settings = {"epsilon": 8.0, "delta": 1e-5, "clip_norm": 3.0, "method": "two_stage",
                "random_state": seed}
    if radius is None:
        return PrivateFrechetMean(space, **settings).fit(points)
    return PrivateERM(space, HuberDistanceLoss(space, radius), **settings).fit(points)


CASES = {
    "spd": (lambda: SPDMatrices(2), FAR_SPD, None),
    "spd3": (lambda: SPDMatrices(3), np.diag([4.0, 1.0, 0.3]), None),
    "sphere": (lambda: Hypersphere(2), FAR_POLE, None),
    "spd_huber": (lambda: SPDMatrices(2), FAR_SPD, 0.5),
    "sphere_huber": (lambda: Hypersphere(2), FAR_POLE, 0.5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_release_equals_the_plain_route(monkeypatch, seed_shift, name):
    make_space, center, radius = CASES[name]
    space, points = _points_around(make_space(), center, 1000, seed_shift, spread=0.4)
    found = _fit(space, points, radius, seed_shift)
    with monkeypatch.context() as patch:
        patch.setattr(GradientOracle, "norms_then_clipped_sum", two_passes)
        patch.setattr(tangent, "geodesics_for", lambda space: Geodesics(space.metric))
        patch.setattr(tangent, "karcher_mean", geomstats_karcher_mean)
        expected = _fit(space, points, radius, seed_shift)
    assert found.n_iter_ == expected.n_iter_ >= 3
    assert found.clip_norm_ == expected.clip_norm_
    assert found.n_gradient_evaluations_ == expected.n_gradient_evaluations_
    np.testing.assert_allclose(to_numpy(found.estimate_), to_numpy(expected.estimate_),
                               rtol=1e-9, atol=1e-11)
