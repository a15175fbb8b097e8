"""Warm-started affine-invariant logarithms of a run's records on the pytorch backend:
``warm_logs``' method in torch, its kernels (``torch_jacobi``) compiled by
``torch.compile``.

The frames, the rotation R into the new point's frame, the cyclic Jacobi sweeps until
every record of a chunk has ||E_i||_F <= ``warm_logs.TOLERANCE`` x min_p |A_i,pp|, the
Daleckii-Krein logarithm and the fallback of a chunk to LAPACK (a run's first pass, or
more than ``warm_logs.MAX_SWEEPS`` sweeps) are ``warm_logs.RecordBases``'; the sums equal
LAPACK's to rounding (the tests compare the two). Every tensor stays on the data's device
(CPU or CUDA): nothing crosses to numpy in a pass. The kernels run on chunks of
``CHUNK_ROWS`` records stored batch last (one contiguous vector per matrix entry, which
the compiled loops vectorise), the last chunk padded with copies of the point P
(whitened to the identity, diagonal in any basis: they need no sweep and get a zero
coefficient).

Side channel, as in ``warm_logs``: a chunk sweeps until its slowest record has
converged, so a pass's time depends on each record; ``MAX_SWEEPS`` bounds it: whatever
one record is (huge, tiny, not positive definite, with whitened entries that overflow),
it changes the time of a pass by at most ``MAX_SWEEPS`` sweeps of its chunk and one
LAPACK pass of that chunk. The arrays, values, warnings and counts a run shows do not
depend on the sweeps.

The route is taken on public conditions only (``record_bases_for``): those of
``warm_logs.record_bases_for`` (the affine-invariant logarithms of
``SquaredDistanceLoss`` on SPD(n), n >= 3, ``compiled_blocks.ENABLED``), a float64
tensor in memory on the pytorch backend, and the kernels compiled in the process for the
data's n and device or at least ``MIN_ROWS_TO_COMPILE`` records. Compiling takes minutes
the first time on a machine and seconds from inductor's on-disk cache afterwards, which a
fit of fewer records would not pay back (timings: docs/benchmarks/optimizers.md,
"Timing: private DP-RGD fit against geomstats' FrechetMean"); ``compile_warm_logs``
compiles them ahead. If ``torch.compile`` fails, a ``RuntimeWarning`` says so once and
every run takes LAPACK, with the same release.
"""

import logging
import warnings

import torch

from geomstats_dp.optim import torch_jacobi, warm_logs
from geomstats_dp.optim.warm_logs import RecordBases

CHUNK_ROWS = 2048
"""Records of a chunk: the compiled kernels' fixed shape, large enough that the few
calls per chunk cost little next to its sweeps."""

MIN_ROWS_TO_COMPILE = 10**6
"""A run compiles the kernels (or loads them from inductor's cache) only for data of at
least this many records, unless they are already compiled in the process."""

COMPILE_OPTIONS = {"cpp_wrapper": True, "max_fusion_size": 4096}
"""Inductor's options: the wrapper in C++, and a sweep's elementwise operations fused
into few loops."""

_KERNELS = {}  # (n, device) -> the compiled (frame, sweep, logs, weighted_total)
_FAILURE = []  # the message of torch.compile's failure, once seen


def record_bases_for(data):
    """A ``TorchRecordBases`` for a run's full-batch passes over ``data``, or None.

    Called by ``warm_logs.record_bases_for`` on the pytorch backend once the loss and
    space qualify; public quantities only.

    Parameters
    ----------
    data : array-like, shape=[n_rows, n, n]

    Returns
    -------
    bases : TorchRecordBases or None
    """
    if not isinstance(data, torch.Tensor) or data.dtype != torch.float64 or _FAILURE:
        return None
    if data.requires_grad:
        return None
    key = (int(data.shape[-1]), data.device)
    if key not in _KERNELS and (data.shape[0] < MIN_ROWS_TO_COMPILE
                                or not _compiles(*key)):
        return None
    return TorchRecordBases(int(data.shape[0]), key)


def compile_warm_logs(dim, device="cpu"):
    """Compile the kernels for SPD(``dim``) records on ``device`` now, so that every run
    of the process on such data takes the route, whatever its size.

    Parameters
    ----------
    dim : int
        n >= 3.
    device : str or torch.device

    Returns
    -------
    compiled : bool
        False where ``torch.compile`` failed (runs take LAPACK).
    """
    key = (int(dim), torch.device(device))
    return key in _KERNELS or _compiles(*key)


def _compiles(n, device):
    """Compile the kernels for (n, device), running each once; False (and a warning,
    once) where ``torch.compile`` fails."""
    if _FAILURE:
        return False
    kernels = [torch.compile(kernel, dynamic=False, fullgraph=True, options=COMPILE_OPTIONS)
               for kernel in (torch_jacobi.frame, torch_jacobi.sweep, torch_jacobi.logs,
                              torch_jacobi.weighted_total)]
    eye = torch.eye(n, dtype=torch.float64, device=device)
    identities = eye[..., None].expand(n, n, CHUNK_ROWS).contiguous()
    ones = torch.ones(CHUNK_ROWS, dtype=torch.float64, device=device)
    try:
        matrices, vectors, _ = kernels[0](identities, identities, eye, eye)
        kernels[1](matrices, vectors)
        logarithms, norms = kernels[2](matrices)
        kernels[3](vectors, logarithms, norms, ones)
    except Exception as error:  # any failure of the compiler: LAPACK
        logging.getLogger(__name__).debug("torch.compile failed", exc_info=True)
        _FAILURE.append(f"{type(error).__name__}: {error}")
        warnings.warn("torch.compile failed; the warm-started logarithms run on LAPACK "
                      f"({_FAILURE[0][:200]})", RuntimeWarning, stacklevel=3)
        return False
    _KERNELS[(n, device)] = kernels
    return True


class TorchRecordBases(RecordBases):
    """``RecordBases`` on tensors: the bases of chunk c stored batch last in
    ``bases[c]`` [n, n, CHUNK_ROWS], the compiled kernels of ``key``.

    Parameters
    ----------
    n_rows : int
    key : tuple
        (n, device) of the compiled kernels.
    """

    chunk_rows = CHUNK_ROWS

    def __init__(self, n_rows, key):
        super().__init__(n_rows)
        self.kernels = _KERNELS[key]

    def binds(self, factor):
        """Whether the point's ``factor`` is a tensor outside a gradient trace."""
        return isinstance(factor, torch.Tensor) and not factor.requires_grad

    def load(self):
        """The kernels are compiled when the route is chosen."""

    def keep(self, start, eigvecs):
        """Store LAPACK's bases [k, n, n] of the chunk of rows ``start`` on, batch last."""
        n = eigvecs.shape[-1]
        if self.bases is None:
            chunks = -(-self.n_rows // CHUNK_ROWS)
            self.bases = torch.empty((chunks, n, n, CHUNK_ROWS), dtype=eigvecs.dtype,
                                     device=eigvecs.device)
        stored = self.bases[start // CHUNK_ROWS]
        stored[..., : eigvecs.shape[0]] = eigvecs.permute(1, 2, 0)
        stored[..., eigvecs.shape[0] :] = torch.eye(n, dtype=eigvecs.dtype,
                                                    device=eigvecs.device)[..., None]

    def warm(self, sums, start, data, rotation):
        """``RecordBases.warm`` by the compiled kernels."""
        frame, sweep, logs, weighted_total = self.kernels
        k = data.shape[0]
        records = data.permute(1, 2, 0)
        if k < CHUNK_ROWS:  # padded with P, whitened to the identity
            records = torch.cat([records, sums.base_point[..., None].expand(
                *sums.base_point.shape, CHUNK_ROWS - k)], -1)
        matrices, vectors, ratio = frame(records.contiguous(), self.bases[start // CHUNK_ROWS],
                                         rotation, sums.whitening @ rotation)
        sweeps = 0
        while float(ratio) > warm_logs.TOLERANCE:
            if sweeps == warm_logs.MAX_SWEEPS:
                return None
            matrices, vectors, ratio = sweep(matrices, vectors)
            sweeps += 1
        logarithms, norms = logs(matrices)
        # a record whose basis is not finite (its whitened matrix was not) restarts from
        # the identity: its NaN ratio leaves it out of the sweeps while it stays so, and
        # once finite it is diagonalised afresh (by LAPACK past the cap), as LAPACK would
        self.bases[start // CHUNK_ROWS] = torch.where(
            torch.isfinite(vectors).all(0).all(0), vectors, torch.eye(
                vectors.shape[0], dtype=vectors.dtype, device=vectors.device)[..., None])
        factor = sums.factor

        def weighted_sum(coefficients):
            padded = torch.zeros(CHUNK_ROWS, dtype=norms.dtype, device=norms.device)
            padded[:k] = coefficients
            return -(factor @ weighted_total(vectors, logarithms, norms, padded) @ factor.T)

        return norms[:k] * sums.norm_factor, weighted_sum
