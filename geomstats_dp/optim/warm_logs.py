"""Affine-invariant logarithms of a run's records, warm-started from the last point's
eigenbases (SPD(n), n >= 3; compiled by numba).

``AffineLogSums`` diagonalises every whitened record W_i = F^-1 X_i F^-T (F F^T = P)
afresh at each point: one LAPACK ``eigh`` per record and pass, nearly all of a full-batch
step's time on SPD(8). Consecutive points of a run are close, and so are the whitened
records: with F' F'^T = P' and M = F'^-1 F = R S (polar: R orthogonal, S symmetric
positive definite), W'_i = R S W_i S R^T, and if W_i = U_i D_i U_i^T the columns of
R U_i nearly diagonalise W'_i when S is near the identity. ``RecordBases`` keeps U_i
(and the factor F they belong to) for every record of a run's data between its
full-batch passes; at the next point it forms A_i = (R U_i)^T W'_i (R U_i), applies
cyclic Jacobi rotations (vectorised across a chunk's records) until every record's
off-diagonal part E_i satisfies ||E_i||_F <= ``TOLERANCE`` x min_p |A_i,pp|, and takes
the logarithm from the diagonal D and the rest by the first-order Daleckii-Krein formula
(Daleckii and Krein 1965),

    log A = log D + G o E,   G_pq = (log d_p - log d_q) / (d_p - d_q)  (1 / d_p if equal),

whose error is second order in E: about ``TOLERANCE``^2 = 1e-14 on logarithms of order
one, as close to LAPACK's as LAPACK's own rounding (the tests compare the two). Then
Log_P'(X_i) = F' V_i L_i V_i^T F'^T with V_i the rotated basis and L_i = log A_i, and
||Log_P'(X_i)|| = ||L_i||_F. A chunk goes back to LAPACK (and keeps its bases) when it
has none yet (a run's first pass) or when it needs more than ``MAX_SWEEPS`` sweeps; a
record whose basis came out not finite (sweeps of a whitened matrix that overflows)
restarts from the identity at the next pass, so that it gets LAPACK's logarithm again
once its whitened matrix is finite. A warm
chunk takes a few sweeps where a cold Jacobi needs many, which makes a pass cheaper than
LAPACK's (sweeps and timings: docs/benchmarks/optimizers.md, "Timing: private DP-RGD fit
against geomstats' FrechetMean").

The route changes what a pass costs, never what it computes (beyond rounding): the
arrays, values, warnings and counts a run shows do not depend on the sweeps. The sweeps
do depend on the data, and on one record: a chunk sweeps until its slowest record has
converged (a huge record, 1e150 I say, can add a sweep to its chunk), so a pass's
time is a side channel. ``MAX_SWEEPS`` bounds it: whatever one record is (huge, tiny, not
positive definite, with whitened entries that overflow), it changes the time of a pass by
at most ``MAX_SWEEPS`` sweeps of its chunk and one LAPACK pass of that chunk. It is taken
on public conditions only (``record_bases_for``): the affine-invariant logarithms of
``SquaredDistanceLoss`` on SPD(n), n >= 3 (``SquaredDistanceLoss.affine_logs``), numpy
data in memory on the numpy or autograd backend (whose arrays are numpy's), numba
importable and ``compiled_blocks.ENABLED``, at least ``MIN_ROWS_TO_LOAD`` records unless
the kernels are already loaded. The bases take as much memory as the data. On the
pytorch backend ``torch_warm_logs`` runs the same method on tensors (kernels compiled by
``torch.compile``), with the same frames, cap and fallback.
"""

import importlib
import math

import geomstats.backend as gs
import numpy as np

from geomstats_dp.optim import compiled_blocks
from geomstats_dp.optim.affine_log import AffineLogSums
from geomstats_dp.optim.losses import SquaredDistanceLoss, backend_name

TOLERANCE = 1e-7
"""Jacobi sweeps stop when every record of a chunk has ||E||_F <= TOLERANCE min |d_p|."""

MAX_SWEEPS = 8
"""A chunk that needs more sweeps is diagonalised by LAPACK. Warm chunks took 2 to 7 on
SPD(8) (the most after a long first step from a start far from the data); 7 sweeps cost
about as much as LAPACK, and Jacobi from the identity needs about 8."""

MIN_ROWS_TO_LOAD = 50_000
"""A run loads the kernels (importing numba, reading them from its on-disk cache; compiling
them, once per machine) only for data of at least this many records, unless they are
already loaded: a smaller pass would not pay the load back (timings:
docs/benchmarks/optimizers.md, "Timing: private DP-RGD fit against geomstats'
FrechetMean")."""


NUMPY_BACKENDS = ("numpy", "autograd")
"""The backends whose arrays are numpy's (autograd's outside a gradient trace, and the
passes of a closed-form gradient are not traced): the kernels read them as they are."""


def record_bases_for(loss, data):
    """A ``RecordBases`` for a run's full-batch passes over ``data``, or None.

    Public quantities only: a loss whose gradient sums are ``AffineLogSums`` on SPD(n),
    n >= 3 (``SquaredDistanceLoss.affine_logs``), ``compiled_blocks.ENABLED``, and either
    numpy data in memory on a backend of ``NUMPY_BACKENDS`` with the kernels loaded or
    ``MIN_ROWS_TO_LOAD`` records and numba importable, or tensor data on the pytorch
    backend (``torch_warm_logs.record_bases_for``).

    Parameters
    ----------
    loss : PerSampleLoss
    data : array-like, shape=[n, ...]

    Returns
    -------
    bases : RecordBases or None
    """
    if not compiled_blocks.ENABLED:
        return None
    if not isinstance(loss, SquaredDistanceLoss) or not loss.affine_logs():
        return None
    if tuple(loss.space.shape)[-1] < 3:
        return None
    if backend_name() == "pytorch":  # torch imported only there
        return importlib.import_module("geomstats_dp.optim.torch_warm_logs").record_bases_for(
            data)
    if backend_name() not in NUMPY_BACKENDS or not isinstance(data, np.ndarray):
        return None
    if not _KERNELS and (data.shape[0] < MIN_ROWS_TO_LOAD
                         or not compiled_blocks.numba_importable()):
        return None
    return RecordBases(data.shape[0])


class RecordBases:
    """The eigenbases of a run's whitened records, kept from one point to the next.

    The numba kernels on numpy arrays; ``torch_warm_logs.TorchRecordBases`` keeps the
    same frames and fallback with its own storage and kernels.

    Parameters
    ----------
    n_rows : int
        Records of the run's data; chunks are identified by their first row.
    """

    chunk_rows = None
    """Rows of a chunk (``oracle.chunk_parts``); None: ``oracle.CHUNK_BYTES`` of rows."""

    def __init__(self, n_rows):
        self.n_rows = n_rows
        self.bases = None  # allocated at the first chunk
        self.frames = {}  # first row of a chunk -> the factor F its bases belong to
        self._rotation = (None, None, None)  # (old factor, new factor, R) of the last chunk

    def bind(self, sums):
        """``sums`` with this run's bases (``WarmLogSums``) if it is an ``AffineLogSums``
        at a point of the bases' array type, else unchanged (a subclass of the loss that
        overrides ``gradient_sums``; a point autograd traces).

        Parameters
        ----------
        sums : callable
            ``loss.gradient_sums(point)``.
        """
        if type(sums) is AffineLogSums and self.binds(sums.factor):
            return WarmLogSums(sums, self)
        return sums

    def binds(self, factor):
        """Whether the kernels read a point's ``factor`` as it is (a numpy array)."""
        return isinstance(factor, np.ndarray)

    def load(self):
        """Load the kernels (``_load_kernels``)."""
        _load_kernels()

    def logs(self, sums, start, data):
        """Norms of -Log_P(X_i) and their weighted sum for rows ``start`` on, warm or cold.

        Parameters
        ----------
        sums : AffineLogSums
            At the point P.
        start : int
            The chunk's first row in the run's data.
        data : array-like, shape=[k, n, n]

        Returns
        -------
        norms, weighted_sum
            As ``AffineLogSums.__call__``.
        """
        frame = self.frames.get(start)
        if frame is not None:
            warm = self.warm(sums, start, data, self._frame_rotation(frame, sums))
            if warm is not None:
                self.frames[start] = sums.factor
                return warm
        eigvals, eigvecs = sums.eigen(sums.whiten(data))
        self.keep(start, eigvecs)
        self.frames[start] = sums.factor
        return sums.from_eigen(eigvals, eigvecs)

    def keep(self, start, eigvecs):
        """Store LAPACK's bases [k, n, n] of the chunk of rows ``start`` on."""
        if self.bases is None:
            self.bases = np.empty((self.n_rows, *eigvecs.shape[1:]))
        self.bases[start : start + eigvecs.shape[0]] = eigvecs

    def warm(self, sums, start, data, rotation):
        """The chunk's norms and weighted sum from its bases rotated by ``rotation`` (R),
        the bases updated; None (bases untouched) where it needs more than
        ``MAX_SWEEPS`` sweeps."""
        k, n = data.shape[0], data.shape[-1]
        bases = self.bases[start : start + k]
        logs, norms = np.empty((k, n, n)), np.empty(k)
        sweeps = _KERNELS[0](data, bases, rotation, sums.whitening, TOLERANCE, MAX_SWEEPS,
                             logs, norms)
        if sweeps < 0:
            return None
        return norms * sums.norm_factor, _warm_sum(sums.factor, bases, logs, norms)

    def _frame_rotation(self, frame, sums):
        """R of the polar decomposition F'^-1 F = R S, F the bases' factor, F' the point's."""
        old, new, rotation = self._rotation
        if old is not frame or new is not sums.factor:
            change = sums.whitening.T @ frame
            eigvals, eigvecs = gs.linalg.eigh(change.T @ change)
            rotation = change @ ((eigvecs / gs.sqrt(eigvals)) @ eigvecs.T)
            self._rotation = (frame, sums.factor, rotation)
        return rotation


class WarmLogSums:
    """An ``AffineLogSums`` whose chunks of the run's data use the run's bases:
    ``oracle.chunk_parts`` calls ``rows(start, chunk)`` for the chunk of rows ``start`` on
    (of ``chunk_rows`` rows, where the bases set it).

    Parameters
    ----------
    sums : AffineLogSums
    bases : RecordBases
    """

    def __init__(self, sums, bases):
        self.sums = sums
        self.record_bases = bases
        self.chunk_rows = bases.chunk_rows
        bases.load()

    def rows(self, start, data):
        """As ``AffineLogSums.__call__`` for the run's rows ``start`` to ``start + k``."""
        return self.record_bases.logs(self.sums, start, data)


def _warm_sum(factor, bases, logs, norms):
    """``weighted_sum(coefficients)`` = -F (sum_i c_i V_i L_i V_i^T) F^T, the records
    with a non-finite norm counted as zero."""

    def weighted_sum(coefficients):
        total = _KERNELS[1](bases, logs, np.asarray(coefficients, dtype=float), norms)
        return -(factor @ total @ factor.T)

    return weighted_sum


def _sweep(matrices, vectors, cosines, sines):
    """One cyclic Jacobi sweep of every matrix of ``matrices`` [n, n, k] (batch last),
    its rotations applied to the columns of ``vectors`` [n, n, k]."""
    n, k = matrices.shape[0], matrices.shape[2]
    for p in range(n - 1):
        for q in range(p + 1, n):
            for m in range(k):
                apq, app, aqq = matrices[p, q, m], matrices[p, p, m], matrices[q, q, m]
                tiny = abs(apq) <= 1e-300
                theta = (aqq - app) / (2.0 * apq + (1.0 if tiny else 0.0))
                t = np.sign(theta) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                t = 0.0 if tiny else (t if theta != 0.0 else 1.0)
                cosines[m] = 1.0 / math.sqrt(t * t + 1.0)
                sines[m] = t * cosines[m]
                matrices[p, p, m] = app - t * apq
                matrices[q, q, m] = aqq + t * apq
                matrices[p, q, m] = 0.0
                matrices[q, p, m] = 0.0
            for r in range(n):
                if r == p or r == q:
                    continue
                for m in range(k):
                    arp, arq = matrices[r, p, m], matrices[r, q, m]
                    new_p = cosines[m] * arp - sines[m] * arq
                    new_q = sines[m] * arp + cosines[m] * arq
                    matrices[r, p, m] = matrices[p, r, m] = new_p
                    matrices[r, q, m] = matrices[q, r, m] = new_q
            for r in range(n):
                for m in range(k):
                    vrp, vrq = vectors[r, p, m], vectors[r, q, m]
                    vectors[r, p, m] = cosines[m] * vrp - sines[m] * vrq
                    vectors[r, q, m] = sines[m] * vrp + cosines[m] * vrq


def _worst_ratio(matrices, off, smallest):
    """max over the batch of ||E||_F / min_p |d_p| (E the off-diagonal part, d the
    diagonal); records where it is not a number (a non-finite record) are left out."""
    n, k = matrices.shape[0], matrices.shape[2]
    off[:] = 0.0
    smallest[:] = np.inf
    for p in range(n):
        for m in range(k):
            smallest[m] = min(smallest[m], abs(matrices[p, p, m]))
        for q in range(p + 1, n):
            for m in range(k):
                off[m] += matrices[p, q, m] * matrices[p, q, m]
    worst = 0.0
    for m in range(k):
        ratio = math.sqrt(2.0 * off[m]) / smallest[m]
        if ratio > worst:  # noqa: PLR1730 (explicit: a NaN ratio is left out)
            worst = ratio
    return worst


def _warm_chunk(data, bases, rotation, whitening, tolerance, max_sweeps, logs, norms):
    """L_i = log of W'_i in the basis V_i = R U_i after Jacobi sweeps (module docstring).

    ``data`` [k, n, n]; ``bases`` [k, n, n] holds U_i and receives V_i; ``whitening`` is
    F'^-T; ``logs`` [k, n, n] and ``norms`` [k] (||L_i||_F) are written. Returns the
    sweeps taken, or -1 (``bases`` untouched) where the chunk must go to LAPACK.
    """
    k, n = data.shape[0], data.shape[1]
    vectors, matrices = np.empty((n, n, k)), np.empty((n, n, k))
    whitened_basis, column = np.empty((n, n)), np.empty(n)
    to_whitened = whitening @ rotation
    for m in range(k):  # V = R U, G = F'^-T R U, A = G^T X G
        for i in range(n):
            for j in range(n):
                v = g = 0.0
                for h in range(n):
                    v += rotation[i, h] * bases[m, h, j]
                    g += to_whitened[i, h] * bases[m, h, j]
                vectors[i, j, m] = v
                whitened_basis[i, j] = g
        for j in range(n):
            for i in range(n):
                acc = 0.0
                for h in range(n):
                    acc += data[m, i, h] * whitened_basis[h, j]
                column[i] = acc
            for a in range(j + 1):
                acc = 0.0
                for i in range(n):
                    acc += whitened_basis[i, a] * column[i]
                matrices[a, j, m] = matrices[j, a, m] = acc
    cosines, sines, off, smallest = np.empty(k), np.empty(k), np.empty(k), np.empty(k)
    ratio, sweeps = _worst_ratio(matrices, off, smallest), 0
    while ratio > tolerance:
        if sweeps == max_sweeps:
            return -1
        _sweep(matrices, vectors, cosines, sines)
        sweeps += 1
        ratio = _worst_ratio(matrices, off, smallest)
    diagonal_logs = np.empty(n)
    for m in range(k):
        total = 0.0
        for p in range(n):
            diagonal_logs[p] = math.log(matrices[p, p, m]) if matrices[p, p, m] > 0 else np.nan
            logs[m, p, p] = diagonal_logs[p]
            total += diagonal_logs[p] * diagonal_logs[p]
        for p in range(n):
            for q in range(p + 1, n):
                dp, dq = matrices[p, p, m], matrices[q, q, m]
                relative = (dp - dq) / dq  # G_pq = log1p(x) / (x d_q): exact as x -> 0
                if relative < -0.5:  # d_p << d_q: 1 + x would lose d_p / d_q (log1p(-1))
                    divided = (diagonal_logs[p] - diagonal_logs[q]) / (dp - dq)
                elif relative == 0.0:
                    divided = 1.0 / dq
                else:
                    divided = math.log1p(relative) / (relative * dq)
                logs[m, p, q] = logs[m, q, p] = divided * matrices[p, q, m]
                total += 2.0 * logs[m, p, q] * logs[m, p, q]
        norms[m] = math.sqrt(total)
        finite = True  # else (a whitened matrix that was not) restart from the identity
        for i in range(n):
            for j in range(n):
                finite = finite and math.isfinite(vectors[i, j, m])
        for i in range(n):
            for j in range(n):
                bases[m, i, j] = vectors[i, j, m] if finite else (1.0 if i == j else 0.0)
    return sweeps


def _warm_total(bases, logs, coefficients, norms):
    """sum_i c_i V_i L_i V_i^T over the records with a finite norm, [n, n]."""
    k, n = bases.shape[0], bases.shape[1]
    total, scaled = np.zeros((n, n)), np.empty((n, n))
    for m in range(k):
        if coefficients[m] == 0.0 or not math.isfinite(norms[m]):
            continue
        for a in range(n):
            for q in range(n):
                acc = 0.0
                for p in range(n):
                    acc += bases[m, a, p] * logs[m, p, q]
                scaled[a, q] = coefficients[m] * acc
        for a in range(n):
            for b in range(a + 1):
                acc = 0.0
                for q in range(n):
                    acc += scaled[a, q] * bases[m, b, q]
                total[a, b] += acc
    for a in range(n):
        for b in range(a):
            total[b, a] = total[a, b]
    return total


_KERNELS = []


def _load_kernels():
    """``_warm_chunk`` and ``_warm_total`` compiled by numba (``njit(cache=True)``), with
    the helpers they call registered as jitable, on first use."""
    if not _KERNELS:
        import numba
        from numba.extending import register_jitable

        for helper in (_sweep, _worst_ratio):
            register_jitable(error_model="numpy")(helper)
        _KERNELS.extend(numba.njit(cache=True, error_model="numpy")(kernel)
                        for kernel in (_warm_chunk, _warm_total))
