"""Per-record maps of PrivatePCA's rows and the small Gaussian releases made from them.

Every map here acts on each row alone (non-finite rows to zero, rows longer than the
public bound B scaled down to it, a released mean subtracted), so a replaced record
changes one mapped row, which still has norm <= B: the sensitivities below hold for
any data.

The blocked passes (``bounded_mean``, ``bounded_second_moment``) compute the mean and
the second moment of the mapped rows from X itself, a block of rows at a time, without a
copy of X: the same operations whatever the values.

Each noisy release here is one Gaussian stage (``privacy.stages.noisy_stage``) with the
``label`` and ``sensitivity`` of its ledger event.
"""

import numpy as np

from geomstats_dp import _dask
from geomstats_dp.privacy.stages import noisy_stage

# the blocked passes read BLOCK_ENTRIES entries at a time (a working copy that stays in
# cache), and at least MIN_BLOCK_ROWS rows, so that a block's p x p update stays small
# against its product
BLOCK_ENTRIES = 2**17
MIN_BLOCK_ROWS = 256


def bounded_rows(X, bound):
    """Rows with a non-finite entry set to zero, the others scaled to norm <= ``bound``.

    The squared norms come from one ``einsum`` (no temporary of X's size, no warning on
    a record's inf or overflow). When every row is finite and within the bound, X itself
    is returned (no copy); otherwise one scaled copy. The time of that copy (one pass of
    n p multiplications) is the only thing that differs between the two branches, a cost
    of the public shape: it can show whether some record lies beyond the bound, nothing
    more (docs/privacy.md, side channels). A Dask array is mapped lazily, block by block.

    Parameters
    ----------
    X : numpy.ndarray or dask array, shape=[n_samples, n_features]
    bound : float

    Returns
    -------
    rows : numpy.ndarray or dask array, shape=[n_samples, n_features]
    """
    if _dask.is_dask_array(X):
        rows = np.where(np.isfinite(X).all(axis=1, keepdims=True), X, 0.0)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows * np.minimum(1.0, bound / np.maximum(norms, 1e-300))
    squared = np.einsum("ij,ij->i", X, X)  # inf or NaN for a non-finite (or huge) row
    scales, finite = row_scales(squared, bound)
    if finite.all() and squared.max(initial=0.0) <= bound**2:
        return X
    rows = np.where(finite[:, None], X, 0.0)
    rows *= scales[:, None]
    return rows


def row_scales(squared, bound):
    """The factors of ``bounded_rows`` from the rows' squared norms: min(1, B / |x|), and
    0 where the squared norm is not finite (a non-finite or overflowing row).

    Returns
    -------
    scales, finite : numpy.ndarray, shape=[n_samples]
    """
    finite = np.isfinite(squared)
    norms = np.sqrt(np.where(finite, squared, 0.0))
    return finite * np.minimum(1.0, bound / np.maximum(norms, 1e-300)), finite


def row_blocks(n_samples, n_features):
    """Slices of consecutive rows covering ``range(n_samples)``, of ``block_rows`` rows
    (the last one fewer)."""
    size = block_rows(n_features)
    return (slice(start, start + size) for start in range(0, n_samples, size))


def block_rows(n_features):
    """The rows of a block: about ``BLOCK_ENTRIES`` entries, ``MIN_BLOCK_ROWS`` at least."""
    return max(MIN_BLOCK_ROWS, BLOCK_ENTRIES // n_features)


def _scaled(block, scales, finite, buffer):
    """The rows of ``block`` times ``scales`` (None: as they are) in ``buffer``, a
    non-finite row zero (no warning): the same operations whatever the values."""
    scaled = buffer[: len(block)]
    if scales is None:
        np.copyto(scaled, block)
    else:
        with np.errstate(invalid="ignore"):  # inf times 0, zeroed below
            np.multiply(block, scales[:, None], out=scaled)
    scaled[~finite] = 0.0
    return scaled


def _buffer(X):
    """The working copy of one block of X's rows."""
    return np.empty((min(len(X), block_rows(X.shape[1])), X.shape[1]))


def bounded_mean(X, bound):
    """The mean of ``bounded_rows(X, bound)``, in blocks of rows (no copy of X).

    Parameters
    ----------
    X : numpy.ndarray, shape=[n_samples, n_features]
    bound : float

    Returns
    -------
    mean : numpy.ndarray, shape=[n_features]
    squared : numpy.ndarray, shape=[n_samples]
        The squared norms of X's rows (for ``bounded_second_moment``).
    """
    squared, total, buffer = np.empty(len(X)), np.zeros(X.shape[1]), _buffer(X)
    for rows in row_blocks(*X.shape):
        block = X[rows]
        scales, finite = row_scales(
            np.einsum("ij,ij->i", block, block, out=squared[rows]), bound)
        total += scales @ _scaled(block, None, finite, buffer)  # a copy: faster
    return total / len(X), squared


def bounded_second_moment(X, bound, mean=None, squared=None):
    """(1/n) sum z z^T over the rows z of ``bounded_rows(X, bound)`` or, with a mean m, of
    ``bounded_rows(bounded_rows(X, bound) - m, bound)``: in blocks of rows, no copy of X.

    A row x mapped to s x (``row_scales``) and centred, y = s x - m, is mapped to t y with
    t = min(1, B / |y|), where |y|^2 = s^2 |x|^2 - 2 s x.m + |m|^2 takes one product with
    m; then sum t^2 y y^T = A - v m^T - m v^T + w m m^T with A = sum (t s x)(t s x)^T,
    v = sum t (t s x) and w = sum t^2: one scaled copy of each block. As t s |x| <= B
    and t |m| <= 2B, every term is at most 4 B^2 per row: the rounding of the sum is of
    the order of the machine epsilon times B^2, as for the centred rows' own products,
    far below the release's noise (sqrt(2) B^2 z / n).

    Parameters
    ----------
    X : numpy.ndarray, shape=[n_samples, n_features]
    bound : float
    mean : numpy.ndarray, shape=[n_features], optional
    squared : numpy.ndarray, shape=[n_samples], optional
        X's squared row norms, if already computed.

    Returns
    -------
    moment : numpy.ndarray, shape=[n_features, n_features]
    """
    p = X.shape[1]
    moment, across, weight, buffer = np.zeros((p, p)), np.zeros(p), 0.0, _buffer(X)
    length = 0.0 if mean is None else float(mean @ mean)
    for rows in row_blocks(*X.shape):
        block = X[rows]
        norms = (np.einsum("ij,ij->i", block, block) if squared is None
                 else squared[rows])
        scales, finite = row_scales(norms, bound)
        if mean is not None:  # t, from the centred rows' squared norms
            along = np.where(finite, block @ mean, 0.0)
            kept = np.where(finite, norms, 0.0)
            again = row_scales(np.maximum(scales * (scales * kept - 2 * along) + length,
                                          0.0), bound)[0]
            scales = scales * again
        scaled = _scaled(block, scales, finite, buffer)
        moment += scaled.T @ scaled
        if mean is not None:
            across += scaled.T @ again
            weight += float(again @ again)
    if mean is not None:
        outer = np.outer(across, mean)
        moment += weight * np.outer(mean, mean) - outer - outer.T
    return moment / len(X)


def stage_of(event):
    """The ``label`` and ``sensitivity`` of a ledger event, as the releases here take them."""
    return {"label": event.label, "sensitivity": event.sensitivity}


def gaussian_stage(statistic, noise, noise_std, dim, norm=None, **stage):
    """``statistic + noise``, released as a Gaussian stage (``stage``: its label and
    sensitivity)."""
    return noisy_stage(statistic, noise, law="gaussian", scale=noise_std, dim=dim,
                       norm=norm, **stage)


def noisy_mean(rows, noise_std, rng, **stage):
    """The mean of the rows plus N(0, noise_std^2 I): sensitivity 2B / n (replace-one).

    Parameters
    ----------
    rows : numpy.ndarray, shape=[n_samples, n_features]
    noise_std : float
    rng : numpy.random.Generator
    **stage
        ``label`` and ``sensitivity`` of the release (of its ledger event), for every
        function here.

    Returns
    -------
    mean : numpy.ndarray, shape=[n_features]
    """
    return noisy_vector(rows.mean(axis=0), noise_std, rng, **stage)


def noisy_vector(statistic, noise_std, rng, **stage):
    """``statistic`` [p] plus N(0, noise_std^2 I): the release of ``noisy_mean``."""
    noise = noise_std * np.asarray(rng.standard_normal(len(statistic)))
    return gaussian_stage(statistic, noise, noise_std, len(statistic), **stage)


def noisy_trace(rows, noise_std, rng, **stage):
    """(1/n) sum |z|^2 plus N(0, noise_std^2): sensitivity B^2 / n (|z|^2 in [0, B^2]).

    Returns
    -------
    trace : float
    """
    return float(gaussian_stage(_squared_sum(rows) / len(rows),
                                noise_std * rng.standard_normal(), noise_std, 1, **stage))


def _squared_sum(rows):
    """sum of the squared entries of ``rows`` [n, p]: one ``einsum`` pass in memory (no
    temporary of the rows' size), ``np.sum(rows**2)`` on a Dask array (lazy)."""
    if _dask.is_dask_array(rows):
        return np.sum(rows**2)
    return np.einsum("ij,ij->", rows, rows)


def upper_triangle_norm(matrix):
    """The l2 norm of the upper triangle (diagonal included) of ``matrix`` [p, p]."""
    return float(np.linalg.norm(matrix[np.triu_indices(matrix.shape[-1])]))


def symmetric_noise(noise_std, p, rng):
    """A symmetric [p, p] Gaussian matrix: iid N(0, noise_std^2) upper triangle, mirrored."""
    upper = np.triu(noise_std * np.asarray(rng.standard_normal((p, p))))
    return upper + np.triu(upper, 1).T


def noisy_second_moment(rows, noise_std, rng, **stage):
    """(1/n) sum z z^T plus a symmetric Gaussian matrix (iid upper triangle, mirrored).

    Replace-one sensitivity of the upper triangle (diagonal included) as a vector:
    sqrt(2) B^2 / n (``second_moment_sensitivity``): one stage, in that norm.

    Returns
    -------
    matrix : numpy.ndarray, shape=[n_features, n_features]
    """
    return noisy_matrix(rows.T @ rows / len(rows), noise_std, rng, **stage)


def noisy_matrix(moment, noise_std, rng, **stage):
    """A second-moment matrix [p, p] plus a symmetric Gaussian matrix: the release of
    ``noisy_second_moment``."""
    p = moment.shape[-1]
    return gaussian_stage(moment, symmetric_noise(noise_std, p, rng), noise_std,
                          p * (p + 1) // 2, upper_triangle_norm, **stage)


def noisy_projected_moments(rows, basis, noise_std, rng, **stage):
    """The second moment of the projections u = W^T z and the residual, plus noise.

    Each record contributes (the upper triangle of u u^T, |z|^2 - |u|^2). With a = |u|^2,
    b = |u'|^2 and r, r' >= 0 the residuals (a + r, b + r' <= B^2), two records differ by
    at most a^2 + b^2 - 2 (u . u')^2 + (r - r')^2 <= 2 B^4 in squared L2 norm, so the
    mean has sensitivity sqrt(2) B^2 / n, the same as the full matrix's
    (``second_moment_sensitivity``). Noise as in ``noisy_second_moment``, and on the
    residual.

    Parameters
    ----------
    rows : numpy.ndarray, shape=[n_samples, n_features]
    basis : numpy.ndarray, shape=[n_features, k]
        Orthonormal columns.
    noise_std : float
    rng : numpy.random.Generator
    **stage
        Of the joint release: one stage, the moments and the residual.

    Returns
    -------
    moments : numpy.ndarray, shape=[k, k]
    residual : float
    """
    projections = rows @ basis
    residuals = np.maximum(np.sum(rows**2, axis=1) - np.sum(projections**2, axis=1), 0.0)
    k = basis.shape[1]
    noise = symmetric_noise(noise_std, k, rng)
    residual_noise = noise_std * float(rng.standard_normal())
    # on a Dask array the workers reduce the rows here, before the one flat stage
    moment, residual = _dask.compute(projections.T @ projections / len(projections),
                                     residuals.mean())
    released = gaussian_stage(
        np.append(moment, residual),
        np.append(noise, residual_noise), noise_std, k * (k + 1) // 2 + 1,
        lambda flat: np.hypot(upper_triangle_norm(flat[:-1].reshape(k, k)), flat[-1]),
        **stage)
    return released[:-1].reshape(k, k), float(released[-1])


def second_moment_sensitivity(bound, n_samples):
    """sqrt(2) B^2 / n: the most the upper triangle of (1/n) sum z z^T moves (L2 norm).

    For |z|, |z'| <= B, |z z^T - z' z'^T|_F^2 = |z|^4 + |z'|^4 - 2 (z . z')^2 <= 2 B^4,
    and the upper triangle holds at most the Frobenius norm; equality for z = B e_1,
    z' = B e_2.
    """
    return np.sqrt(2.0) * bound**2 / n_samples
