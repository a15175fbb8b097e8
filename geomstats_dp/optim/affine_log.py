"""Clipped sums of affine-invariant logarithms on SPD(n) with one ``eigh`` per sample.

For the affine-invariant metric, with S = P^{1/2} and W_i = S^{-1} X_i S^{-1} = U_i diag(l_i)
U_i^T, Log_P(X_i) = S U_i diag(log l_i) U_i^T S and ||Log_P(X_i)||_P = ||log l_i||_2. The
square roots of P are computed once per point; per sample there is one batched ``eigh``
of the whitened matrices, the norms come from its eigenvalues, and a weighted sum
sum_i c_i Log_P(X_i) = S (sum_i c_i U_i diag(log l_i) U_i^T) S is one matrix product over
the whole chunk: no per-sample logarithm is formed.
"""

import math

import geomstats.backend as gs


def _sym_function(eigvals, eigvecs, values):
    """V diag(values) V^T for the eigendecomposition (eigvals, eigvecs) of one matrix."""
    return gs.matmul(eigvecs * values[None, :], gs.transpose(eigvecs))


def _congruence(data, factor):
    """factor X_i factor for symmetric X_i [k, n, n] and symmetric factor [n, n].

    (X_i F)^T F = F X_i F: two products of the stacked [k n, n] rows with F.
    """
    k, n = data.shape[0], data.shape[-1]
    right = gs.reshape(gs.matmul(gs.reshape(data, (k * n, n)), factor), (k, n, n))
    left = gs.reshape(gs.transpose(right, (0, 2, 1)), (k * n, n))
    return gs.reshape(gs.matmul(left, factor), (k, n, n))


class AffineLogSums:
    """Norms and clipped weighted sums of -Log_P(X_i) at one base point P.

    Parameters
    ----------
    base_point : array-like, shape=[n, n]
        SPD.
    scale : float
        The metric is ``scale`` times the affine-invariant one (``ScalarProductMetric``):
        norms are multiplied by sqrt(scale), logarithms are unchanged.
    """

    def __init__(self, base_point, scale=1.0):
        eigvals, eigvecs = gs.linalg.eigh(base_point)
        self.sqrt = _sym_function(eigvals, eigvecs, gs.sqrt(eigvals))
        self.inv_sqrt = _sym_function(eigvals, eigvecs, 1 / gs.sqrt(eigvals))
        self.norm_factor = math.sqrt(scale)

    def __call__(self, data):
        """Norms of -Log_P(X_i) and a function giving their weighted sum.

        Parameters
        ----------
        data : array-like, shape=[k, n, n]
            SPD (symmetric; only the lower triangles of the whitened matrices are read).

        Returns
        -------
        norms : array-like, shape=[k]
            ||Log_P(X_i)||_P; not finite where X_i is not positive definite.
        weighted_sum : callable
            ``weighted_sum(coefficients [k]) -> sum_i c_i (-Log_P(X_i))``, shape=[n, n],
            the terms with a non-finite norm counted as zero.
        """
        eigvals, eigvecs = gs.linalg.eigh(_congruence(data, self.inv_sqrt))
        logs = gs.log(eigvals)
        norms = gs.sqrt(gs.sum(logs**2, axis=-1)) * self.norm_factor
        finite = gs.expand_dims(norms < math.inf, -1)  # False for inf and NaN
        logs = gs.where(finite, logs, gs.zeros_like(logs))

        def weighted_sum(coefficients):
            k, n = eigvecs.shape[0], eigvecs.shape[-1]
            columns = gs.reshape(gs.transpose(eigvecs, (1, 0, 2)), (n, k * n))
            weighted = columns * gs.reshape(-coefficients[:, None] * logs, (1, k * n))
            inner = gs.matmul(weighted, gs.transpose(columns))
            return gs.matmul(self.sqrt, gs.matmul(inner, self.sqrt))

        return norms, weighted_sum
