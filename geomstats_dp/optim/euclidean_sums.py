"""Clipped sums of Riemannian gradients given as Euclidean ones, through one matrix a point.

At a point x, converting a Euclidean gradient G (``riemannian_gradient``) and projecting it
onto the tangent space (``space.to_tangent``) is linear in G: the tangent vector is
t = sum_j G_j r_j (``conversion_matrix``), and by bilinearity its squared norm in the
metric is ||t||_x^2 = G^T M G with M_ij = <r_i, r_j>_x. The d = prod(space.shape) vectors
r_j and the d x d Gram matrix M are computed once per point; per sample there is one
product with M (d^2 operations) and no conversion, projection or metric evaluation of its
own. On small spaces (``MAX_DIM``) this is much cheaper than converting every gradient
and calling ``metric.norm`` (which, on SPD with the affine-invariant metric, inverts and
multiplies matrices for every sample); on large ones the d^2 per sample is not.
"""

import math

import geomstats.backend as gs
import numpy as np

from geomstats_dp.optim.clipping import zero_nonfinite
from geomstats_dp.optim.gradients import conversion_matrix

# Largest prod(space.shape) on which losses with derived Euclidean gradients use
# ``EuclideanGradientSums`` (and ``CallableLoss`` its Jacobian at one point).
MAX_DIM = 16


class EuclideanGradientSums:
    """Norms and clipped weighted sums of the Riemannian gradients at one point.

    Parameters
    ----------
    space : Manifold
        With a metric ``riemannian_gradient`` supports.
    point : array-like, shape=[*space.shape]
    euclidean_gradients : callable
        ``euclidean_gradients(data [k, ...]) -> [k, *space.shape]``: the per-sample
        Euclidean gradients at ``point``.
    """

    def __init__(self, space, point, euclidean_gradients):
        self.shape = tuple(space.shape)
        dim = math.prod(self.shape)
        basis = conversion_matrix(space, point)
        left = gs.repeat(basis, dim, axis=0)  # r_i for the pairs (i, j), row-major
        right = gs.concatenate([basis] * dim, axis=0)  # r_j
        gram = space.metric.inner_product(left, right, point)
        self.gram = gs.reshape(gram, (dim, dim))
        self.basis = gs.reshape(basis, (dim, dim))
        self.ones = gs.ones((dim, 1))
        self.euclidean_gradients = euclidean_gradients

    def __call__(self, data):
        """Norms of the tangent gradients and a function giving their weighted sum.

        Parameters
        ----------
        data : array-like, shape=[k, ...], or PairedSamples

        Returns
        -------
        norms : array-like, shape=[k]
            Riemannian norms at the point of the projected gradients; not finite where a
            Euclidean gradient is not.
        weighted_sum : callable
            ``weighted_sum(coefficients [k]) -> sum_i c_i grad f(point; z_i)``, shape
            =[*space.shape], the terms of non-finite norm counted as zero.
        """
        grads = gs.reshape(self.euclidean_gradients(data), (-1, self.gram.shape[0]))
        with np.errstate(invalid="ignore", over="ignore"):  # a record's inf: no warning
            squared = gs.sum(gs.matmul(grads, self.gram) * grads, axis=-1)
            finite = gs.abs(gs.matmul(grads, self.ones)[:, 0]) < math.inf  # False: inf, NaN
        norms = gs.sqrt(gs.maximum(squared, gs.zeros_like(squared)))
        norms = gs.where(finite, norms, gs.ones_like(norms) * math.nan)
        grads = zero_nonfinite(grads, norms)

        def weighted_sum(coefficients):
            combined = gs.matmul(gs.matmul(coefficients[None], grads), self.basis)
            return gs.reshape(combined, self.shape)

        return norms, weighted_sum
