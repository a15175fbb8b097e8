"""The squared distance's clipped gradient for one record, in closed form: the batch-one
route of a DP-RSGD step on the sphere and on Euclidean space.

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
    sums : callable
        The loss's general ``sums(data) -> (norms, weighted_sum)`` at ``base_point``.
    base_point : array-like, shape=[d]
    sphere : bool
        The sphere's gradient (else Euclidean space's).
    """

    def __init__(self, sums, base_point, sphere):
        self.sums = sums
        self.base_point = base_point
        self.sphere = sphere

    def __call__(self, data):
        """The general route: ``(norms [k], weighted_sum)`` of the records ``data``."""
        return self.sums(data)

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
        if self.sphere:
            cosine = min(1.0, max(-1.0, float(record.dot(point))))
            angle = math.acos(cosine)
            if angle == 0:
                gradient = point - record
            else:
                gradient = add_scaled(point * (angle / math.tan(angle)),
                                      -angle / math.sin(angle), record)
        else:
            gradient = point - record
        norm = math.sqrt(float(gradient.dot(gradient)))
        if not norm < math.inf:  # a record whose gradient is not finite adds nothing
            return gs.zeros_like(point)
        return gradient * (coefficient * (clip_norm / max(norm, clip_norm)))
