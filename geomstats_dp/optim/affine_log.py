"""Clipped sums of affine-invariant logarithms on SPD(n) with one ``eigh`` per sample.

For the affine-invariant metric and any factor F with F F^T = P (F = P^(1/2) O, O
orthogonal), with W_i = F^-1 X_i F^-T = U_i diag(l_i) U_i^T, Log_P(X_i) =
F U_i diag(log l_i) U_i^T F^T and ||Log_P(X_i)||_P = ||log l_i||_2. The factor of P is
computed once per point (or taken from the run's geodesics, which know it for the points
they produced: ``known_factors``); per sample there is one batched ``eigh`` of the whitened
matrices, the norms come from its eigenvalues, and a weighted sum
sum_i c_i Log_P(X_i) = F (sum_i c_i U_i diag(log l_i) U_i^T) F^T is one matrix product
over the whole chunk: no per-sample logarithm is formed.

On SPD(2) the ``eigh`` gives way to the closed form of ``symmetric_2x2``: with
log W_i = alpha_i I + beta_i W_i and F W_i F^T = X_i, the weighted sum is
sum_i c_i Log_P(X_i) = (sum_i c_i alpha_i) P + sum_i c_i beta_i X_i, and the whitened
entries come from one product of the flattened data with a [4, 4] matrix.

The small-matrix work uses the array operators (``@``, ``.reshape``, ``.swapaxes``,
``.T``), which numpy, autograd and torch arrays share, instead of ``gs`` wrappers that
cost a microsecond each at SPD(2).
"""

import contextlib
import contextvars
import math

import geomstats.backend as gs

from geomstats_dp.optim.symmetric_2x2 import function_coefficients, spectrum_2x2

_KNOWN_FACTORS = contextvars.ContextVar("known_spd_factors", default=None)


@contextlib.contextmanager
def known_factors(lookup):
    """Within the block, ``AffineLogSums`` takes a point's factor from ``lookup``.

    ``minimize`` passes its SPD geodesics' ``known_factor``: the factor of each iterate
    is a by-product of the step that produced it. A context variable: it holds for the
    current thread (and task) only and is restored on leaving the block.

    Parameters
    ----------
    lookup : callable
        ``lookup(point) -> (F, F^-1)`` with F F^T = point, or None when unknown.
    """
    token = _KNOWN_FACTORS.set(lookup)
    try:
        yield
    finally:
        _KNOWN_FACTORS.reset(token)


def square_root_factor(point):
    """(F, F^-1) with F F^T = point, from one ``eigh``: F = U diag(sqrt(l)).

    Parameters
    ----------
    point : array-like, shape=[n, n]
        SPD.

    Returns
    -------
    factor, inverse : array-like, shape=[n, n]
    """
    eigvals, eigvecs = gs.linalg.eigh(point)
    roots = gs.sqrt(eigvals)
    return eigvecs * roots, eigvecs.T / roots[:, None]


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
        lookup = _KNOWN_FACTORS.get()
        known = None if lookup is None else lookup(base_point)
        self.factor, self.inverse = square_root_factor(base_point) if known is None else known
        inverse = self.inverse  # F^-1; its transpose whitens from the right
        self.whitening = inverse.T
        self.norm_factor = math.sqrt(scale)
        self.base_point = base_point
        if base_point.shape[-1] == 2:  # W_pq = sum_ij G_pi G_qj X_ij, G = F^-1: [(p q), (i j)]
            self.whitening_2x2 = (inverse[:, None, :, None] * inverse[None, :, None, :]).reshape(
                (4, 4))

    def __call__(self, data):
        """Norms of -Log_P(X_i) and a function giving their weighted sum.

        Parameters
        ----------
        data : array-like, shape=[k, n, n]
            SPD (symmetric; only the lower triangles of the whitened matrices are read).

        Returns
        -------
        norms : array-like, shape=[k]
            ||Log_P(X_i)||_P; not finite where X_i is not positive definite or its
            whitened matrix is not finite (``eigen``).
        weighted_sum : callable
            ``weighted_sum(coefficients [k]) -> sum_i c_i (-Log_P(X_i))``, shape=[n, n],
            the terms with a non-finite norm counted as zero.
        """
        if data.shape[-1] == 2:
            return self._closed_form_2x2(data)
        return self.from_eigen(*self.eigen(self.whiten(data)))

    def clipped_one(self, record, coefficient, clip_norm):
        """coefficient * clip_C(-Log_P(X)) for one record X [n, n] (n > 2; SPD(2) takes
        its closed form through ``__call__``): ``__call__``'s norm and weighted sum of a
        batch of one, the clip factor in scalars (``clipping.clip_factors``)."""
        if record.shape[-1] == 2:
            norms, weighted_sum = self._closed_form_2x2(record[None])
            norm = float(norms[0])
            factor = clip_norm / max(norm, clip_norm) if norm < math.inf else 0.0
            return weighted_sum(coefficient * factor * gs.ones_like(norms))
        # ``whiten``'s two products on the same operands (the same values), without its
        # batch reshapes: seven tensor calls fewer on pytorch
        whitened = self.inverse @ record.T @ self.whitening
        if not self._eigh_as_is(whitened) and not bool((gs.abs(whitened) < math.inf).all()):
            return gs.zeros_like(self.base_point)  # as ``eigen``: it adds nothing
        eigvals, eigvecs = gs.linalg.eigh(whitened)
        logs = gs.log(eigvals)
        norm = math.sqrt(float((logs * logs).sum())) * self.norm_factor
        if not norm < math.inf:  # a record that is not positive definite adds nothing
            return gs.zeros_like(self.base_point)
        weighted = eigvecs * (logs * -(coefficient * (clip_norm / max(norm, clip_norm))))
        return self.factor @ (weighted @ eigvecs.T) @ self.factor.T

    def whiten(self, data):
        """W_i = F^-1 X_i F^-T for each sample, shape=[k, n, n] (a transposed view).

        Parameters
        ----------
        data : array-like, shape=[k, n, n]
            Symmetric.
        """
        k, n = data.shape[0], data.shape[-1]
        # the stacked rows [k n, n] transposed are [X_1 | ... | X_k] (X_i symmetric): two
        # products, F^-1 [X_1 | ... | X_k] then each block times F^-T, and no copy
        left = self.inverse @ data.reshape((k * n, n)).T  # [n, k n]
        return (left.reshape((n * k, n)) @ self.whitening).reshape((n, k, n)).swapaxes(0, 1)

    def eigen(self, whitened):
        """``eigh`` of the whitened matrices, a matrix with a non-finite entry (a record
        whose whitening overflows, entries near the float64 maximum) taken as the
        identity with NaN eigenvalues: its norm is NaN and it adds nothing, as any record
        of non-finite norm. LAPACK's ``eigh`` of a matrix holding inf or NaN gives NaN,
        finite values or raises, depending on the record. At a point whose factor is not
        finite (an iterate that left float64) ``eigh`` takes the matrices as they are:
        the loop's error there is the one ``compiled_spd.raise_failure`` raises.

        Parameters
        ----------
        whitened : array-like, shape=[k, n, n]

        Returns
        -------
        eigvals : array-like, shape=[k, n]
        eigvecs : array-like, shape=[k, n, n]
        """
        if self._eigh_as_is(whitened):
            return gs.linalg.eigh(whitened)
        k, n = whitened.shape[0], whitened.shape[-1]
        finite = (gs.abs(whitened) < math.inf).reshape((k, n * n)).all(-1)
        eigvals, eigvecs = gs.linalg.eigh(gs.where(finite[:, None, None], whitened,
                                                   gs.eye(n)))
        return gs.where(finite[:, None], eigvals, math.nan), eigvecs

    def _eigh_as_is(self, whitened):
        """Whether ``eigh`` takes the whitened matrices as they are: every sum finite, or
        the point's own factor not finite (``eigen``)."""
        return (math.isfinite(float(whitened.sum()))
                or not math.isfinite(float(self.inverse.sum())))

    def from_eigen(self, eigvals, eigvecs):
        """``__call__``'s norms and weighted sum from W_i = U_i diag(l_i) U_i^T.

        Parameters
        ----------
        eigvals : array-like, shape=[k, n]
        eigvecs : array-like, shape=[k, n, n]
            Orthogonal, the eigenvectors as columns.
        """
        k, n = eigvals.shape
        logs = gs.log(eigvals)
        norms = gs.sqrt((logs * logs).sum(-1))
        if self.norm_factor != 1.0:
            norms = norms * self.norm_factor
        if not math.isfinite(float(norms.sum())):  # norms >= 0: one is inf or NaN
            logs = gs.where((norms < math.inf)[:, None], logs, gs.zeros_like(logs))

        def weighted_sum(coefficients):
            columns = eigvecs.swapaxes(0, 1).reshape((n, k * n))  # [i, (sample, j)]
            weighted = columns * (logs * -coefficients[:, None]).reshape((1, k * n))
            return self.factor @ (weighted @ columns.T) @ self.factor.T

        return norms, weighted_sum

    def _closed_form_2x2(self, data):
        """``__call__`` on SPD(2), without ``eigh`` (see the module docstring)."""
        k = data.shape[0]
        flat = data.reshape((k, 4))
        entries = self.whitening_2x2 @ flat.T  # [4, k]: W_00, W_01, W_10, W_11, contiguous
        low, high, mean, gap = spectrum_2x2(entries[0], entries[3], entries[2])
        log_low, log_high = gs.log(low), gs.log(high)
        norms = (log_low * log_low + log_high * log_high) ** 0.5
        if self.norm_factor != 1.0:
            norms = norms * self.norm_factor
        alpha, beta = function_coefficients(log_low, log_high, mean, gap)
        if not math.isfinite(float(norms.sum())):  # norms >= 0: one is inf or NaN
            finite = norms < math.inf
            alpha = gs.where(finite, alpha, gs.zeros_like(alpha))
            beta = gs.where(finite, beta, gs.zeros_like(beta))

        def weighted_sum(coefficients):
            data_part = ((coefficients * beta) @ flat).reshape((2, 2))
            return -((coefficients @ alpha) * self.base_point + data_part)

        return norms, weighted_sum
