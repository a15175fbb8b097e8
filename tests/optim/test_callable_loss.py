"""CallableLoss: one call on the batch when the callable broadcasts, the same numbers as
row-by-row calls, and row-by-row calls when it does not."""

import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import CallableLoss, PairedSamples
from tests.conftest import BACKEND

AUTODIFF = BACKEND in ("autograd", "pytorch")
N_RECORDS = 40


class Counted:
    """A callable that counts its calls."""

    def __init__(self, function):
        self.function = function
        self.calls = 0

    def __call__(self, point, sample):
        self.calls += 1
        return self.function(point, sample)


def spd_trace_loss(point, sample):
    """tr(P^-1 X) + log det P: the Gaussian negative log-likelihood of a covariance X
    (minimised at the mean of the X); broadcasts over paired rows."""
    inverse = gs.linalg.inv(point)
    return gs.einsum("...ij,...ji->...", inverse, sample) + gs.log(gs.linalg.det(point))


def spd_trace_loss_one_row(point, sample):
    """The same, written for one row only (``gs.sum`` over everything)."""
    return gs.sum(gs.linalg.inv(point) * sample) + gs.log(gs.linalg.det(point))


def spd_trace_gradient(point, sample):
    """Euclidean gradient -P^-1 X P^-1 + P^-1 (broadcasts)."""
    inverse = gs.linalg.inv(point)
    return -gs.matmul(inverse, gs.matmul(sample, inverse)) + inverse


def spd_trace_gradient_one_row(point, sample):
    if point.ndim != 2 or sample.ndim != 2:
        raise TypeError("one point and one record at a time")
    return spd_trace_gradient(point, sample)


def regression_loss(weights, sample):
    """Squared error of a pair (x, y); broadcasts over paired rows."""
    features, target = sample
    return (gs.sum(weights * features, axis=-1) - target) ** 2 / 2


def regression_loss_one_row(weights, sample):
    features, target = sample
    return (gs.sum(weights * features) - target) ** 2 / 2


def _spd_data():
    rng = np.random.default_rng(0)
    factors = rng.normal(size=(N_RECORDS, 2, 2))
    data = factors @ np.transpose(factors, (0, 2, 1)) + 0.5 * np.eye(2)
    point = np.array([[1.5, 0.3], [0.3, 0.8]])
    return SPDMatrices(2), to_backend(point), to_backend(data)


def _regression_data():
    rng = np.random.default_rng(1)
    data = PairedSamples(to_backend(rng.normal(size=(N_RECORDS, 3))),
                         to_backend(rng.normal(size=N_RECORDS)))
    return Euclidean(3), to_backend(np.array([0.2, -0.4, 0.7])), data


CASES = {
    "spd": (_spd_data, spd_trace_loss, spd_trace_loss_one_row),
    "paired": (_regression_data, regression_loss, regression_loss_one_row),
}


def _loss(space, function, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # finite differences on numpy
        return CallableLoss(space, Counted(function), **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_and_row_by_row_give_the_same_values_and_gradients(name):
    make_data, batched_function, row_function = CASES[name]
    space, point, data = make_data()
    batched, by_row = _loss(space, batched_function), _loss(space, row_function)
    for method, rtol in (("values", 1e-12), ("gradients", 1e-12 if AUTODIFF else 1e-7)):
        first = to_numpy(getattr(batched, method)(point, data))
        second = to_numpy(getattr(by_row, method)(point, data))
        assert first.shape[0] == N_RECORDS
        np.testing.assert_allclose(first, second, rtol=rtol, atol=rtol)
    # the broadcasting callable was called a few times for the whole batch (dummy
    # batches at 4 dummy points at most, then the data), the other at least once per
    # record and gradient coordinate
    assert batched.sample_function.calls < 30
    assert by_row.sample_function.calls >= 2 * N_RECORDS


def test_batched_closed_form_gradient_matches_row_by_row():
    space, point, data = _spd_data()
    batched = _loss(space, spd_trace_loss, gradient=Counted(spd_trace_gradient),
                    gradient_kind="euclidean")
    by_row = _loss(space, spd_trace_loss, gradient=Counted(spd_trace_gradient_one_row),
                   gradient_kind="euclidean")
    first = to_numpy(batched.gradients(point, data))
    second = to_numpy(by_row.gradients(point, data))
    np.testing.assert_allclose(first, second, rtol=1e-12, atol=1e-12)
    assert batched.gradient.calls < 10
    assert by_row.gradient.calls >= N_RECORDS


def test_gradients_match_the_closed_form():
    """Autodiff (autograd, pytorch) or forward differences (numpy) on the batch against
    the closed form, made Riemannian the same way."""
    space, point, data = _spd_data()
    derived = to_numpy(_loss(space, spd_trace_loss).gradients(point, data))
    exact = to_numpy(_loss(space, spd_trace_loss, gradient=spd_trace_gradient,
                           gradient_kind="euclidean").gradients(point, data))
    # forward differences with step 1e-7: error ~ step x curvature, here below 1e-6
    np.testing.assert_allclose(derived, exact, atol=1e-12 if AUTODIFF else 1e-5)


def test_a_record_that_raises_in_a_batch_gets_nan_only_for_itself():
    space, point, data = _spd_data()

    def loss(point, sample):
        if bool(gs.any(sample > 1e100)):
            raise FloatingPointError("out of range")
        return spd_trace_loss(point, sample)

    broken = to_numpy(data).copy()
    broken[5] = 1e200
    values = to_numpy(_loss(space, loss).values(point, to_backend(broken)))
    expected = to_numpy(_loss(space, loss).values(point, data))
    assert np.isnan(values[5])
    np.testing.assert_allclose(np.delete(values, 5), np.delete(expected, 5), rtol=1e-12)
