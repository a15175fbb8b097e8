"""The loss of one structured prediction: a weighted (Huber) squared distance to the
targets, and its non-private minimiser (the reference of the private releases)."""

import geomstats.backend as gs

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning._data import check_points
from geomstats_dp.learning.mechanisms.tangent_labels import ATOL
from geomstats_dp.optim import (
    FullBatch,
    PairedSamples,
    PerSampleLoss,
    clip_tangent_vectors,
    minimize,
)


class WeightedSquaredDistanceLoss(PerSampleLoss):
    """f(w; (c, y)) = c h_D(d(w, y)) with a public coefficient c of any sign.

    h_D is the squared distance d^2 / 2 up to ``radius`` D and its linear (Huber)
    continuation D d - D^2 / 2 beyond (D = None: d^2 / 2 everywhere). Its gradient is
    -c clip_D(Log_w(y)), of norm |c| min(d(w, y), D): targets farther than D pull with a
    bounded force, which keeps DP-RGD stable on hyperbolic data, where negative weights
    and far iterates would otherwise give gradients growing with the distance. Data are
    ``PairedSamples(coefficients [n], targets [n, *space.shape])``.

    Parameters
    ----------
    space : Manifold
    radius : float or None
        D.
    atol : float
        Tolerance of the check that targets lie on the space.
    """

    def __init__(self, space, radius=None, atol=ATOL):
        super().__init__(space)
        self.radius = radius
        self.atol = atol

    def check_data(self, data):
        """The pairs as backend arrays, the targets checked to lie on the space."""
        pairs = super().check_data(data)
        check_points(self.space, to_numpy(pairs.y), self.atol, min_samples=1, name="Y")
        return pairs

    def values(self, point, data):
        """c_i h_D(d(w, y_i)), shape=[k]."""
        dist = self.space.metric.dist(data.y, point)
        if self.radius is None:
            return data.X * dist**2 / 2
        radius = self.radius
        far = dist > radius
        huber = gs.where(far, radius * dist - radius**2 / 2, dist**2 / 2)
        return data.X * huber

    def gradients(self, point, data):
        """-c_i clip_D(Log_w(y_i)), shape=[k, *space.shape]."""
        logs = self.space.metric.log(data.y, point)
        if self.radius is not None:
            logs = clip_tangent_vectors(self.space.metric, logs, point, self.radius)
        return gs.einsum("k,k...->k...", -data.X, logs)


def nonprivate_prediction(space, weights, targets, n_iter=100, step_size=0.5,
                          init_point=None, radius=None):
    """The non-private minimiser of sum_i a_i h_D(d(w, y_i)) by Riemannian gradient descent.

    h_D as in ``WeightedSquaredDistanceLoss``; ``radius=None`` (default) minimises
    sum_i a_i d(w, y_i)^2 / 2, the weighted Frechet mean.

    Parameters
    ----------
    space : Manifold
    weights : array-like, shape=[n]
        a_i, any sign, summing to 1.
    targets : array-like, shape=[n, *space.shape]
    n_iter : int
    step_size : float
    init_point : array-like, optional
        Default the canonical point of the space.
    radius : float or None
        D of the Huber continuation (``clip_norm`` of the estimator).

    Returns
    -------
    point : array-like, shape=[*space.shape]
    """
    n_samples = len(targets)
    loss = WeightedSquaredDistanceLoss(space, radius)
    data = PairedSamples(n_samples * to_numpy(weights), to_numpy(targets))
    return minimize(loss, data, FullBatch(1e300, 0.0), n_iter,
                    step_size, init_point).point
