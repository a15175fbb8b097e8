"""The Huber distance loss: a robust mean whose per-sample pull is capped at a radius."""

import geomstats.backend as gs

from geomstats_dp._validation import check_positive_finite
from geomstats_dp.optim.clipping import clip_tangent_vectors
from geomstats_dp.optim.losses import SquaredDistanceLoss


class HuberDistanceLoss(SquaredDistanceLoss):
    """f(x; z) = h_D(d(x, z)): d^2 / 2 up to ``radius`` D, D d - D^2 / 2 beyond.

    Its minimiser is the Huber mean (a robust Frechet mean); its gradient
    -clip_D(Log_x(z)) has norm min(d(x, z), D) <= D, so with ``clip_norm`` >= D nothing is
    clipped and the private release is unbiased for the Huber mean. Its samples are points
    of the space, so the tangent releases ("tangent", "two_stage") apply.

    Parameters
    ----------
    space : Manifold
    radius : float
        D > 0.
    atol : float
        Tolerance of the check that data points lie on the space.
    """

    def __init__(self, space, radius, atol=1e-6):
        super().__init__(space, atol)
        self.radius = check_positive_finite(radius, "radius")

    def values(self, point, data):
        """h_D(d(x, z_i)) for each sample, shape=[k]."""
        dist = self.space.metric.dist(data, point)
        far = dist > self.radius
        return gs.where(far, self.radius * dist - self.radius**2 / 2, dist**2 / 2)

    def gradients(self, point, data):
        """-clip_D(Log_x(z_i)) for each sample, shape=[k, *space.shape]."""
        logs = self.space.metric.log(data, point)
        return -clip_tangent_vectors(self.space.metric, logs, point, self.radius)
