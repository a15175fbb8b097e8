"""Derived gradients of plain-function losses, clipped and summed through one matrix a
point (``EuclideanGradientSums``), with the Jacobian at one point on autodiff backends.

References: each metric's conversion applied per sample with ``metric.norm``, and closed
-form Euclidean gradients.
"""

import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import AutodiffLoss, CallableLoss, riemannian_gradient
from geomstats_dp.optim.euclidean_sums import MAX_DIM, EuclideanGradientSums
from tests.conftest import BACKEND
from tests.optim.spaces import SPACE_FACTORIES
from tests.optim.test_callable_loss import spd_trace_gradient, spd_trace_loss

AUTODIFF = BACKEND in ("autograd", "pytorch")
N_RECORDS, BROKEN = 30, 4  # record BROKEN has a NaN gradient


def _generic_sums(space, point, euclidean_grads, coefficients):
    """Norms and weighted sum of the converted, projected gradients, one by one."""
    tangent = space.to_tangent(riemannian_gradient(space, euclidean_grads, point), point)
    norms = to_numpy(space.metric.norm(tangent, point))
    keep = np.isfinite(norms)
    total = np.einsum("k,k...->...", to_numpy(coefficients)[keep], to_numpy(tangent)[keep])
    return norms, total


def _check_sums(space, point, sums, reference_grads, coefficients, rtol):
    norms, weighted_sum = sums
    expected_norms, expected_sum = _generic_sums(space, point, reference_grads, coefficients)
    norms = to_numpy(norms)
    assert not np.isfinite(norms[BROKEN]) and not np.isfinite(expected_norms[BROKEN])
    np.testing.assert_allclose(np.delete(norms, BROKEN), np.delete(expected_norms, BROKEN),
                               rtol=rtol)
    total = weighted_sum(coefficients)
    assert bool(space.is_tangent(total, point, atol=1e-8))
    np.testing.assert_allclose(to_numpy(total), expected_sum, rtol=rtol,
                               atol=rtol * np.abs(expected_sum).max())


@pytest.mark.parametrize("name", sorted(SPACE_FACTORIES))
def test_matrix_of_the_conversion_gives_the_per_sample_norms_and_sums(name):
    space = SPACE_FACTORIES[name]()
    gs.random.seed(0)
    point = space.random_point()
    rng = np.random.default_rng(1)
    grads = rng.normal(size=(N_RECORDS,) + tuple(space.shape))
    grads[BROKEN].flat[0] = np.nan
    grads[BROKEN + 1].flat[-1] = np.inf  # no "invalid value" warning for it
    grads = to_backend(grads)
    coefficients = to_backend(rng.uniform(size=N_RECORDS))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sums = EuclideanGradientSums(space, point, lambda data: grads)(grads)
        total = sums[1](coefficients)
    assert not np.isfinite(to_numpy(sums[0])[BROKEN + 1])
    expected_total = _generic_sums(space, point, grads[:BROKEN + 1], coefficients[:BROKEN + 1])[1]
    expected_total = expected_total + _generic_sums(
        space, point, grads[BROKEN + 2:], coefficients[BROKEN + 2:])[1]
    np.testing.assert_allclose(to_numpy(total), expected_total, rtol=1e-9,
                               atol=1e-9 * np.abs(expected_total).max())


def _spd_case(dim):
    rng = np.random.default_rng(2)
    factors = rng.normal(size=(N_RECORDS, dim, dim))
    data = factors @ np.transpose(factors, (0, 2, 1)) + 0.5 * np.eye(dim)
    data[BROKEN, 0, 0] = -1.0  # sqrt(X_00) below: a NaN value and gradient

    def loss(point, sample):
        return spd_trace_loss(point, sample) * gs.sqrt(sample[..., 0, 0])

    def gradient(point, sample):
        return gs.einsum("...,...ij->...ij", gs.sqrt(sample[..., 0, 0]),
                         spd_trace_gradient(point, sample))

    point = 1.2 * np.eye(dim) + 0.1 * np.ones((dim, dim))
    return SPDMatrices(dim), to_backend(point), to_backend(data), loss, gradient


def _sphere_case(dim):
    """A logistic loss log(1 + exp(<x, z>)) * sqrt(z_0) on S^(dim - 1)."""
    rng = np.random.default_rng(3)
    data = rng.uniform(0.1, 1.0, size=(N_RECORDS, dim))
    data[BROKEN, 0] = -1.0

    def loss(point, sample):
        return gs.log(1 + gs.exp(gs.sum(point * sample, axis=-1))) * gs.sqrt(sample[..., 0])

    def gradient(point, sample):
        inner = gs.sum(point * sample, axis=-1)
        factor = gs.sqrt(sample[..., 0]) / (1 + gs.exp(-inner))
        return gs.einsum("...,...i->...i", factor, sample)

    point = np.linspace(1.0, 2.0, dim)
    return Hypersphere(dim - 1), to_backend(point / np.linalg.norm(point)), to_backend(data), \
        loss, gradient


CASES = {  # (spd: the Jacobian at one point on autodiff backends; spheres: replicated
    "spd2": lambda: _spd_case(2),  # points; sphere20: more than MAX_DIM coordinates)
    "spd3": lambda: _spd_case(3),
    "sphere3": lambda: _sphere_case(3),
    "sphere20": lambda: _sphere_case(20),
}


def _loss(space, function):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # finite differences on numpy
        return CallableLoss(space, function)


@pytest.mark.parametrize("name", sorted(CASES))
def test_derived_sums_match_the_closed_form(name):
    space, point, data, loss, gradient = CASES[name]()
    coefficients = to_backend(np.random.default_rng(4).uniform(size=N_RECORDS))
    with np.errstate(invalid="ignore"):
        sums = _loss(space, loss).gradient_sums(point)(data)
        closed_form = gradient(point, data)
    # forward differences, step 1e-7: error ~ step x |f''| / |grad f| ~ 1e-7 here
    _check_sums(space, point, sums, closed_form, coefficients,
                rtol=1e-9 if AUTODIFF else 1e-5)


class PointShapes:
    """A callable that records the number of dimensions of the points it is given."""

    def __init__(self, function):
        self.function = function
        self.ndims = []

    def __call__(self, point, sample):
        self.ndims.append(point.ndim)
        return self.function(point, sample)


def _without_derivative(point):
    """The value of ``point``, cut from automatic differentiation."""
    if BACKEND == "pytorch":
        return point.detach()
    while hasattr(point, "_value"):  # autograd's tracing boxes
        point = point._value
    return point


def _one_point_without_derivative(point, sample):
    """The SPD loss whose one-point and copies forms have no derivative (a wrong Jacobian)."""
    return spd_trace_loss(point if point.ndim == 3 else _without_derivative(point), sample)


def _one_point_only(point, sample):
    """The SPD loss for one point or paired rows, not for copies of the point."""
    if point.ndim > 3:
        raise TypeError("one point or one point per record")
    return spd_trace_loss(point, sample)


@pytest.mark.skipif(not AUTODIFF, reason="the Jacobian needs automatic differentiation")
@pytest.mark.parametrize("function, ndims", [
    (spd_trace_loss, {2, 4}),  # the complex step on copies beside the real values
    (_one_point_only, {2}),
    (_one_point_without_derivative, {3})])
def test_jacobian_at_one_point_is_used_where_it_agrees(function, ndims):
    """The points the callable gets on data: copies [d, 1, 2, 2], one point [2, 2], or
    replicated points [k, 2, 2] where the faster forms give a wrong Jacobian."""
    space, point, data, _, _ = _spd_case(2)
    data = data[gs.array([i for i in range(N_RECORDS) if i != BROKEN])]
    assert np.prod(space.shape) <= MAX_DIM
    recorded = PointShapes(function)
    loss = _loss(space, recorded)
    loss.gradient_sums(point)(data[:3])  # dummy records: route decided
    recorded.ndims.clear()
    norms, _ = loss.gradient_sums(point)(data)
    assert set(recorded.ndims) == ndims
    expected, _ = _generic_sums(
        space, point, spd_trace_gradient(point, data), gs.ones(int(data.shape[0])))
    np.testing.assert_allclose(to_numpy(norms), expected, rtol=1e-9)


def test_an_overridden_gradients_is_what_is_clipped():
    space, point, data, _, _ = _spd_case(2)
    differentiation = "autodiff" if AUTODIFF else "finite_differences"

    class Doubled(AutodiffLoss):
        def gradients(self, point, data):
            return 2 * super().gradients(point, data)

    derived = AutodiffLoss(space, spd_trace_loss, differentiation=differentiation)
    doubled = Doubled(space, spd_trace_loss, differentiation=differentiation)
    with np.errstate(invalid="ignore"):
        norms = to_numpy(derived.gradient_sums(point)(data)[0])
        doubled_norms = to_numpy(doubled.gradient_sums(point)(data)[0])
    np.testing.assert_allclose(doubled_norms, 2 * norms, rtol=1e-12)
