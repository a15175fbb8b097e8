"""Records held in a Dask array: shape checks, blockwise value checks and clipped sums.

Trust model: the Dask workers belong to the data owner and read raw records. A worker
returns to the client only what one chunk of rows reduces to: the sum of its clipped,
weighted per-sample gradients (or second-moment matrix), or where its first invalid
record is. The client draws the noise from the estimator's random state and adds it, so
only the noisy sum leaves the client. The query and its sensitivity are those of the
in-memory release (the same clipped sum, added in another order): the privacy events
and the accounting are unchanged.

Dask is imported only when the data are a Dask array (``is_dask_array``); it is the
optional ``dask`` extra.
"""

import math

import numpy as np

from geomstats_dp._backend import as_numpy, to_backend, to_numpy


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array`` (without importing dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "chunks")


def numpy_or_dask(data, copy=True):
    """``to_numpy(data)`` (``as_numpy`` with ``copy=False``: for a read-only use), or
    ``data`` itself (lazy, not gathered) if it is a Dask array."""
    if is_dask_array(data):
        return data
    return to_numpy(data) if copy else as_numpy(data)


def backend_or_dask(data):
    """``to_backend(data)``, or ``data`` itself (lazy, not gathered) if it is a Dask array."""
    return data if is_dask_array(data) else to_backend(data)


def check_dask_array(X, name, min_ndim=2):
    """Shape and dtype checks of a Dask array, no value read; returns float64 row chunks.

    Parameters
    ----------
    X : dask.array.Array, shape=[n_samples, ...]
    name : str
        The argument's name, for the messages.
    min_ndim : int

    Returns
    -------
    X : dask.array.Array, shape=[n_samples, ...]
        Lazily cast to float64 and chunked along the rows only.

    Raises
    ------
    TypeError
        Complex dtype.
    ValueError
        A dtype that is not numeric, fewer than ``min_ndim`` axes, or unknown chunk sizes.
    """
    if np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError(f"{name} must hold real numbers, got complex values ({X.dtype})")
    if not (np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.bool_)):
        raise ValueError(f"{name} must hold real numbers, got dtype {X.dtype}")
    if X.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} axes [n_samples, ...], got shape "
            f"{X.shape}"
        )
    if any(math.isnan(size) for size in X.shape):
        raise ValueError(
            f"{name} must have known chunk sizes (call {name}.compute_chunk_sizes()), "
            f"got shape {X.shape}"
        )
    return X.astype(np.float64).rechunk({axis: -1 for axis in range(1, X.ndim)})


def _row_blocks(data):
    """(start, stop, block) for each chunk of rows, the block a ``dask.delayed`` object."""
    starts = np.concatenate([[0], np.cumsum(data.chunks[0])]).astype(int)
    blocks = data.to_delayed().ravel()
    return [(int(starts[i]), int(starts[i + 1]), block) for i, block in enumerate(blocks)]


def compute(*collections):
    """``dask.compute``: the results, as numpy, of lazy Dask collections."""
    import dask

    return dask.compute(*collections)


def _first_invalid_row(loss, block):
    """Index in ``block`` of the first record that ``loss.check_data`` rejects, or None.

    A prefix is rejected as soon as it holds one invalid record: bisection on prefixes.
    """
    def rejects(rows):
        try:
            loss.check_data(rows)
        except ValueError:
            return True
        return False

    if not rejects(block):
        return None
    low, high = 0, len(block)  # the first invalid record is in [low, high)
    while high - low > 1:
        middle = (low + high) // 2
        if rejects(block[low:middle]):
            high = middle
        else:
            low = middle
    return low


def _block_report(block, loss):
    """(first invalid row of the block or None, the error it raises or None)."""
    index = _first_invalid_row(loss, np.asarray(block))
    if index is None:
        return None, None
    try:
        loss.check_data(np.asarray(block[index : index + 1]))
    except ValueError as error:
        return index, str(error)
    return index, None


def check_values(loss, data, name="X"):
    """``loss.check_data`` run on every chunk of rows by the workers.

    Parameters
    ----------
    loss : PerSampleLoss
    data : dask.array.Array, shape=[n, ...]
        From ``check_dask_array``.
    name : str

    Returns
    -------
    data : dask.array.Array
        Unchanged (checked, never gathered).

    Raises
    ------
    ValueError
        Naming the first invalid row's index in ``data`` and what is wrong with it, and
        how many chunks hold invalid rows; as the in-memory check, which also raises.
    """
    import dask

    blocks = _row_blocks(data)
    reports = compute(*[dask.delayed(_block_report)(block, loss)
                        for _, _, block in blocks])
    bad = [(start + index, message) for (start, _, _), (index, message)
           in zip(blocks, reports) if index is not None]
    if bad:
        row, message = bad[0]
        raise ValueError(
            f"{name} row {row} is the first invalid record ({len(bad)} of {len(blocks)} "
            f"chunks hold invalid records); checked alone it gives: {message}"
        )
    return data


def check_records(loss, data, name="X"):
    """``loss.check_data(data)``; for a Dask array, ``check_values`` (chunk by chunk on
    the workers, the array returned unchanged, not gathered)."""
    return check_values(loss, data, name) if is_dask_array(data) else loss.check_data(data)


def _block_clipped_sum(block, weights, loss, point, clip_norm, scale, chunked_sum):
    """sum_i scale w_i clip_C(grad f(point; z_i)) over one chunk, as numpy.

    ``weights``: the chunk's [k] weights, or one number when they are uniform. The chunk
    is read by ``chunked_sum`` (the oracle's ``optim.oracle.clipped_sum_in_chunks``, in
    cache-sized pieces).
    """
    weights = weights if isinstance(weights, float) else to_backend(weights)
    sums = loss.gradient_sums(to_backend(point))
    total = chunked_sum(sums, to_backend(np.asarray(block)), weights, clip_norm, scale)
    return to_numpy(total)


class DaskClippedSums:
    """The oracle's clipped sums over records held in a Dask array, chunk by chunk.

    Parameters
    ----------
    loss : PerSampleLoss
    data : dask.array.Array, shape=[n, ...]
        Checked rows (``check_dask_array``, ``check_values``).
    weights : array-like, shape=[n]
        Public weights; uniform ones travel to the workers as one number.
    chunked_sum : callable
        ``chunked_sum(sums, rows, weights, clip_norm, scale)``, the clipped sum over one
        chunk's rows (``optim.oracle.clipped_sum_in_chunks``: the oracle passes it, so
        that this module, below the optimisers, imports none of them).
    """

    def __init__(self, loss, data, weights, chunked_sum):
        self.loss = loss
        self.data = data
        self.chunked_sum = chunked_sum
        weights = as_numpy(weights)
        self.uniform = float(weights[0]) if weights.min() == weights.max() else None
        self.weights = weights

    def _weights(self, start, stop, indices):
        if self.uniform is not None:
            return self.uniform
        chosen = self.weights if indices is None else self.weights[indices]
        return chosen[start:stop]

    def __call__(self, point, clip_norm, indices=None, scale=1.0):
        """sum_i scale w_i clip_C(grad f(point; z_i)) over ``indices`` (all if None).

        Returns
        -------
        tangent_vec : array-like, shape=[*space.shape]
            A backend array, the chunks' sums added on the client in row order.
        """
        import dask

        data = self.data if indices is None else self.data[indices]
        point = to_numpy(point)
        tasks = [dask.delayed(_block_clipped_sum)(
            block, self._weights(start, stop, indices), self.loss, point, clip_norm, scale,
            self.chunked_sum)
            for start, stop, block in _row_blocks(data)]
        return to_backend(np.sum(np.stack(compute(*tasks)), axis=0))


def _block_norms(block, loss, point):
    norms, _ = loss.gradient_sums(to_backend(point))(to_backend(np.asarray(block)))
    return to_numpy(norms)


def gradient_norms(loss, data, point):
    """Norms of the per-sample gradients at ``point``, computed by the workers, shape=[n]."""
    import dask

    point = to_numpy(point)
    tasks = [dask.delayed(_block_norms)(block, loss, point) for _, _, block in _row_blocks(data)]
    return np.concatenate(compute(*tasks))
