"""The squared distance's clipped gradient for one record, in closed form: the batch-one
route of a DP-RSGD step on the sphere, the hyperboloid and Euclidean space.

``SquaredDistanceLoss.gradient_sums`` returns, on these spaces, the loss's general
chunked sums with one more method, ``clipped_one(record, coefficient, clip_norm)``: the
vector c clip_C(-Log_x(z)) of one record z, in scalars and a few array operations
(numpy or the active backend's arrays: a torch tensor stays one), without the chunks'
per-sample arrays, einsum and masks (``oracle.GradientOracle.clipped_sum`` takes it for
a batch of one). The gradient is

- on the sphere, -Log_x(z) = (theta / tan theta) x - (theta / sin theta) z with
  theta = arccos <x, z> (``geodesics.sphere_log``, the limits 1 and 1 at theta = 0). It
  is tangent at x by construction (<x, Log_x(z)> = 0 for |x| = 1, which the iterates keep
  to ``onto_space.SPHERE_TOLERANCE``), so it is not projected again here: the step
  projects its noisy direction once (``geodesics.SphereGeodesics.step``);
- on the hyperboloid, -Log_x(z) = (theta / tanh theta) x - (theta / sinh theta) z with
  cosh theta = -<x, z> (Minkowski; geomstats' ``HyperboloidMetric.log``), tangent by
  construction as well, its norm the Minkowski one;
- on Euclidean space, x - z.

Its norm is that of the vector summed, and the clip factor that of ``clip_factors``
(min(1, C / norm), exactly 1 within C, 0 for a non-finite norm).
"""

import math

import geomstats.backend as gs

from geomstats_dp._backend import add_scaled


class OneRecordSums:
    """``gradient_sums``' chunked sums with a closed-form one-record route.

    Parameters
    ----------
    general_sums : callable
        ``general_sums() -> sums``: the loss's general ``sums(data) -> (norms,
        weighted_sum)`` at ``base_point``, made on first use.
    base_point : array-like, shape=[d]
    kind : {"sphere", "hyperboloid", "euclidean"}
        Whose gradient.
    """

    def __init__(self, general_sums, base_point, kind):
        self.general_sums = general_sums
        self.base_point = base_point
        self.kind = kind
        self._sums = None

    def __call__(self, data):
        """The general route: ``(norms [k], weighted_sum)`` of the records ``data``."""
        if self._sums is None:
            self._sums = self.general_sums()
        return self._sums(data)

    def clipped_one(self, record, coefficient, clip_norm):
        """coefficient * clip_C(-Log_x(z)) for one record z.

        Parameters
        ----------
        record : array-like, shape=[d]
        coefficient : float
            The record's weight in the sum (scale * w_i).
        clip_norm : float

        Returns
        -------
        tangent_vec : array-like, shape=[d]
        """
        point = self.base_point
        if self.kind == "euclidean":
            gradient = point - record
        else:
            dot = float(record.dot(point))
            if self.kind == "sphere":
                angle = math.acos(min(1.0, max(-1.0, dot)))
                even, odd = math.tan, math.sin
            else:  # -<x, z> = cosh theta >= 1
                angle = math.acosh(max(1.0, 2 * float(record[0]) * float(point[0]) - dot))
                even, odd = math.tanh, math.sinh
            if angle == 0:
                gradient = point - record
            else:
                gradient = add_scaled(point * (angle / even(angle)), -angle / odd(angle),
                                      record)
        squared = float(gradient.dot(gradient))
        if self.kind == "hyperboloid":
            squared = max(squared - 2 * float(gradient[0]) ** 2, 0.0)
        norm = math.sqrt(squared)
        if not norm < math.inf:  # a record whose gradient is not finite adds nothing
            return gs.zeros_like(point)
        return gradient * (coefficient * (clip_norm / max(norm, clip_norm)))
