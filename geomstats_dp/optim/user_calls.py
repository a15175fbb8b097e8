"""Calling a user's loss function: on one record, on a batch (a broadcasting callable),
and whether its batched call agrees with its calls on single records."""

import math

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import as_numpy
from geomstats_dp.optim.samples import PairedSamples


def batch_argument(samples):
    """What a broadcasting callable receives for a batch of samples."""
    if isinstance(samples, PairedSamples):
        return samples.X, samples.y
    return samples


def untracked(array):
    """The value under autograd's tracing boxes (torch tensors are detached by as_numpy)."""
    while hasattr(array, "_value"):
        array = array._value
    return array


def record_value(function, point, sample, shape, strict=False):
    """``function(point, sample)`` reshaped to ``shape``; NaN if the call raises (the
    exception itself if ``strict``)."""
    try:
        value = function(point, sample)
    except Exception:  # a record's failure is zeroed, never raised
        if strict:
            raise
        return gs.ones(shape) * math.nan
    return gs.reshape(value, shape)


def same_as_records(function, batched_points, points, dummy, shape):
    """Whether ``function(batched_points, batch)`` gives the values of the calls on
    single records ``function(points[i], dummy[i])`` (to 1e-9).

    Calls on single records that raise propagate: they read no data value.
    """
    records = np.stack([np.reshape(as_numpy(function(points[i], dummy[i])), shape)
                        for i in range(int(dummy.shape[0]))])
    try:
        batched = as_numpy(function(batched_points, batch_argument(dummy)))
    except Exception:  # noqa: BLE001 - it does not broadcast
        return False
    return (batched.shape == records.shape and bool(np.isfinite(records).any())
            and np.allclose(batched, records, rtol=1e-9, atol=1e-12, equal_nan=True))
