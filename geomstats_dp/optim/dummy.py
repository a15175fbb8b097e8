"""Public dummy records: batches shaped like the data whose values carry no private fact.

A loss is tried on them (its output shapes, whether it broadcasts over a batch) before any
data value is read: what happens there depends on the data's shapes only.
"""

import numpy as np

from geomstats_dp._backend import to_backend
from geomstats_dp.optim.samples import PairedSamples

DUMMY_SEED = 0
DUMMY_SCALE = 0.1  # length of the tangent vectors from the point to the dummy points


def dummy_records(space, data, point, n_records=3):
    """``n_records`` public records shaped like the rows of ``data``.

    Rows shaped like the points of ``space`` are points near ``point``: Exp_point of
    small random tangent vectors (so that a loss defined on the manifold only is defined
    there); other rows are standard normal draws. The draws come from a fixed seed.

    Parameters
    ----------
    space : Manifold
    data : array-like, shape=[n, ...], or PairedSamples
        Only its shapes are read.
    point : array-like, shape=[*space.shape]
        A public point (the start of the run).
    n_records : int

    Returns
    -------
    records : array-like, shape=[n_records, ...], or PairedSamples
    """
    rng = np.random.default_rng(DUMMY_SEED)
    if isinstance(data, PairedSamples):
        return PairedSamples(_rows(space, data.X, point, n_records, rng),
                             _rows(space, data.y, point, n_records, rng))
    return _rows(space, data, point, n_records, rng)


def dummy_points(space, point, n_points=3):
    """``n_points`` public points near ``point`` (Exp_point of small random tangent vectors).

    Parameters
    ----------
    space : Manifold
    point : array-like, shape=[*space.shape]
    n_points : int

    Returns
    -------
    points : array-like, shape=[n_points, *space.shape]
    """
    rng = np.random.default_rng(DUMMY_SEED + 1)
    return _near(space, point, rng.standard_normal((n_points,) + tuple(space.shape)))


def row_shapes(data):
    """The shape of one record (a pair of shapes for PairedSamples)."""
    if isinstance(data, PairedSamples):
        return tuple(data.X.shape[1:]), tuple(data.y.shape[1:])
    return tuple(data.shape[1:])


def _rows(space, rows, point, n_records, rng):
    shape = tuple(rows.shape[1:])
    draws = rng.standard_normal((n_records,) + shape)
    if shape != tuple(space.shape):
        return to_backend(draws)
    return _near(space, point, draws)


def _near(space, point, draws):
    """Exp_point of the tangent projections of ``DUMMY_SCALE * draws``."""
    tangent_vecs = space.to_tangent(to_backend(DUMMY_SCALE * draws), point)
    return space.metric.exp(tangent_vecs, point)
