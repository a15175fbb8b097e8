"""Calling a user's loss (optim.user_calls): a raising record gives NaN (or raises when
strict), paired samples are passed as (X, y), and a batched call is recognised as the
calls on single records only when it gives their values."""

import geomstats.backend as gs
import numpy as np
import pytest

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import PairedSamples
from geomstats_dp.optim.user_calls import batch_argument, record_value, same_as_records


def squared_error(weights, sample):
    """(x . w - y)^2 / 2 on paired rows; broadcasts."""
    features, target = sample
    return (gs.sum(weights * features, axis=-1) - target) ** 2 / 2


def one_row_sum(point, sample):
    """sum(point * sample): right on one record, wrong (one number) on a batch."""
    return gs.sum(point * sample)


def test_record_value_reshapes_and_turns_a_failure_into_nan():
    def failing(point, sample):
        raise FloatingPointError("out of range")

    point, sample = to_backend(np.ones(3)), to_backend(np.arange(3.0))
    assert to_numpy(record_value(one_row_sum, point, sample, (1,))).tolist() == [3.0]
    assert np.isnan(to_numpy(record_value(failing, point, sample, (2,)))).all()
    with pytest.raises(FloatingPointError):
        record_value(failing, point, sample, (2,), strict=True)


def test_paired_samples_reach_the_callable_as_features_and_targets():
    X, y = to_backend(np.arange(6.0).reshape(3, 2)), to_backend(np.array([1.0, 2.0, 3.0]))
    features, targets = batch_argument(PairedSamples(X, y))
    np.testing.assert_array_equal(to_numpy(features), to_numpy(X))
    np.testing.assert_array_equal(to_numpy(targets), to_numpy(y))
    assert batch_argument(X) is X


def test_same_as_records_tells_a_broadcasting_callable_from_a_one_row_one():
    rng = np.random.default_rng(0)
    n_samples = 4
    points = to_backend(rng.standard_normal((n_samples, 3)))
    dummy = to_backend(rng.standard_normal((n_samples, 3)))
    assert same_as_records(lambda p, s: gs.sum(p * s, axis=-1), points, points, dummy, ())
    assert not same_as_records(one_row_sum, points, points, dummy, ())
    paired = PairedSamples(dummy, to_backend(rng.standard_normal(n_samples)))
    assert same_as_records(squared_error, points, points, paired, ())
    assert not same_as_records(lambda p, s: gs.sum(p * s[0]), points, points, paired, ())
