"""The tensor kernels of ``torch_warm_logs``: warm-started Jacobi sweeps and Daleckii-Krein
logarithms of a chunk of symmetric matrices, in torch, batch last.

Each function takes matrices stored batch last ([n, n, k]: entry (i, j) of every record
is one contiguous vector of length k) and works entry by entry, as ``warm_logs``' numba
kernels do record by record: every operation is elementwise over the k records, with
no branch on a value (a rotation's special cases are ``torch.where``), so that
``torch.compile`` fuses a whole sweep into a few vectorised loops over the records, on
the CPU as on CUDA. The formulas are ``warm_logs``' (its module docstring): the rotation
into the new frame, cyclic Jacobi sweeps, the convergence ratio ||E||_F / min_p |d_p|,
and log A = log D + G o E with G the divided differences of the logarithm.
"""

import math

import torch


def _entries(matrices):
    """The entries of batch-last ``matrices`` [n, n, k] as nested lists of [k] views."""
    n = matrices.shape[0]
    return [[matrices[i, j] for j in range(n)] for i in range(n)]


def _stacked(entries):
    """The batch-last [n, n, k] tensor of nested lists of [k] tensors."""
    return torch.stack([torch.stack(row) for row in entries])


def _worst_ratio(entries):
    """max over the records of ||E||_F / min_p |d_p|, the records where it is NaN (a
    non-finite record) left out; a 0-dimensional tensor."""
    n = len(entries)
    off = sum(entries[p][q] * entries[p][q] for p in range(n) for q in range(p + 1, n))
    smallest = entries[0][0].abs()
    for p in range(1, n):
        smallest = torch.minimum(smallest, entries[p][p].abs())
    ratio = torch.sqrt(2.0 * off) / smallest
    return torch.where(torch.isnan(ratio), 0.0, ratio).max()


def frame(data, bases, rotation, to_whitened):
    """A = (M U)^T X (M U) with M = F'^-T R, the rotated bases V = R U, and A's ratio.

    Parameters
    ----------
    data, bases : torch.Tensor, shape=[n, n, k]
        The records X and their bases U, batch last.
    rotation, to_whitened : torch.Tensor, shape=[n, n]
        R and F'^-T R.

    Returns
    -------
    matrices, vectors : torch.Tensor, shape=[n, n, k]
    ratio : torch.Tensor, shape=[]
    """
    n = data.shape[0]
    records, old = _entries(data), _entries(bases)

    def product(left, right):  # left [n, n] shared, right entries
        return [[sum(left[i, h] * right[h][j] for h in range(n)) for j in range(n)]
                for i in range(n)]

    whitened_basis, vectors = product(to_whitened, old), product(rotation, old)
    columns = [[sum(records[i][h] * whitened_basis[h][j] for h in range(n)) for j in range(n)]
               for i in range(n)]
    matrices = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            matrices[i][j] = matrices[j][i] = sum(whitened_basis[h][i] * columns[h][j]
                                                  for h in range(n))
    return _stacked(matrices), _stacked(vectors), _worst_ratio(matrices)


def sweep(matrices, vectors):
    """One cyclic Jacobi sweep of every record, its rotations applied to the columns of
    ``vectors``; returns both and the new ratio (``frame``'s shapes)."""
    n = matrices.shape[0]
    entries, columns = _entries(matrices), _entries(vectors)
    for p in range(n - 1):
        for q in range(p + 1, n):
            apq, app, aqq = entries[p][q], entries[p][p], entries[q][q]
            tiny = apq.abs() <= 1e-300
            theta = (aqq - app) / (2.0 * apq + tiny.to(apq.dtype))
            t = torch.sign(theta) / (theta.abs() + torch.sqrt(theta * theta + 1.0))
            t = torch.where(tiny, 0.0, torch.where(theta == 0.0, 1.0, t))
            cosine = 1.0 / torch.sqrt(t * t + 1.0)
            sine = t * cosine
            entries[p][p], entries[q][q] = app - t * apq, aqq + t * apq
            entries[p][q] = entries[q][p] = torch.zeros_like(apq)
            for r in range(n):
                if r not in (p, q):
                    arp, arq = entries[r][p], entries[r][q]
                    entries[r][p] = entries[p][r] = cosine * arp - sine * arq
                    entries[r][q] = entries[q][r] = sine * arp + cosine * arq
            for r in range(n):
                vrp, vrq = columns[r][p], columns[r][q]
                columns[r][p] = cosine * vrp - sine * vrq
                columns[r][q] = sine * vrp + cosine * vrq
    return _stacked(entries), _stacked(columns), _worst_ratio(entries)


def logs(matrices):
    """L = log A by the first-order Daleckii-Krein formula, and ||L||_F per record
    (NaN where a diagonal entry is not positive).

    Parameters
    ----------
    matrices : torch.Tensor, shape=[n, n, k]

    Returns
    -------
    logarithms : torch.Tensor, shape=[n, n, k]
    norms : torch.Tensor, shape=[k]
    """
    n = matrices.shape[0]
    entries = _entries(matrices)
    diagonal = [entries[p][p] for p in range(n)]
    diagonal_logs = [torch.where(d > 0, torch.log(d), math.nan) for d in diagonal]
    result = [[None] * n for _ in range(n)]
    total = 0.0
    for p in range(n):
        result[p][p] = diagonal_logs[p]
        total = total + diagonal_logs[p] * diagonal_logs[p]
    for p in range(n):
        for q in range(p + 1, n):
            dp, dq = diagonal[p], diagonal[q]
            relative = (dp - dq) / dq  # G_pq = log1p(x) / (x d_q): exact as x -> 0
            far, equal = relative < -0.5, relative == 0.0  # far: 1 + x would lose d_p / d_q
            safe = torch.where(far | equal, 1.0, relative)
            divided = torch.where(
                far, (diagonal_logs[p] - diagonal_logs[q]) / (dp - dq),
                torch.where(equal, 1.0 / dq, torch.log1p(safe) / (safe * dq)))
            result[p][q] = result[q][p] = divided * entries[p][q]
            total = total + 2.0 * result[p][q] * result[p][q]
    return _stacked(result), torch.sqrt(total)


def weighted_total(vectors, logarithms, norms, coefficients):
    """sum_i c_i V_i L_i V_i^T [n, n] over the records with a finite norm and c_i != 0.

    Parameters
    ----------
    vectors, logarithms : torch.Tensor, shape=[n, n, k]
    norms, coefficients : torch.Tensor, shape=[k]
    """
    n = vectors.shape[0]
    columns, entries = _entries(vectors), _entries(logarithms)
    kept = torch.isfinite(norms) & (coefficients != 0)
    products = [[sum(columns[a][p] * entries[p][q] for p in range(n)) for q in range(n)]
                for a in range(n)]
    total = [[None] * n for _ in range(n)]
    for a in range(n):
        for b in range(a, n):
            term = sum(products[a][q] * columns[b][q] for q in range(n))
            total[a][b] = total[b][a] = torch.where(kept, coefficients * term, 0.0).sum()
    return _stacked(total)
