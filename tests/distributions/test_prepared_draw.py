"""``TangentGaussian.prepare``: the draws of ``sample``, with the per-run checks done once.

The optimisers draw one tangent Gaussian per step through ``prepare``; its law is the one
``test_transport_samplers.py`` checks for ``sample``, here re-checked on the prepared
route at the sphere's and the hyperboloid's hard points (their one-point draw is their
own code), with the tolerances of ``_statistics.py``.
"""

import warnings

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.special_orthogonal import SpecialOrthogonal

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from tests.conftest import BACKEND, shifted

from ._statistics import (
    assert_gaussian_coordinates,
    assert_squared_norm_mean,
    inner_products,
    orthonormal_coordinates,
)
from .conftest import make_case

SIGMA = 0.7
N_DRAWS = 4000
ONE_POINT_FAMILIES = ("hypersphere", "hyperboloid")


def _walk(points, n_calls):
    """The family's base points in turn, ``n_calls`` of them."""
    values = list(points.values())
    return [values[i % len(values)] for i in range(n_calls)]


@pytest.mark.parametrize("validate", [False, True])
def test_prepared_draws_are_those_of_sample_bit_for_bit(family_case, validate):
    """Successive calls at changing base points draw exactly what successive ``sample``
    calls draw from a generator with the same seed (on pytorch, the families whose draw
    stays in torch round as torch does: equal to rounding)."""
    sampler = TangentGaussian(family_case.space, validate=validate)
    draw = sampler.prepare(SIGMA, random_state=np.random.default_rng(3))
    generator = np.random.default_rng(3)
    for point in _walk(family_case.points, 12):
        prepared = to_numpy(draw(to_backend(point)))
        sampled = to_numpy(sampler.sample(to_backend(point), sigma=SIGMA, random_state=generator))
        if BACKEND == "pytorch" and sampler.sampler.draw_one is not None and not validate:
            np.testing.assert_allclose(prepared, sampled, rtol=1e-13, atol=1e-15)
        else:
            np.testing.assert_array_equal(prepared, sampled)


@pytest.mark.parametrize("method", ["explicit_basis", "gram_schmidt", "mcmc"])
def test_the_baselines_prepared_draws_are_those_of_sample(method):
    points = make_case("hypersphere").points
    sampler = TangentGaussian(Hypersphere(4), method=method, validate=False)
    draw = sampler.prepare(SIGMA, random_state=np.random.default_rng(4))
    generator = np.random.default_rng(4)
    for point in _walk(points, 3):
        np.testing.assert_array_equal(
            to_numpy(draw(to_backend(point))),
            to_numpy(sampler.sample(to_backend(point), sigma=SIGMA, random_state=generator)))


def test_the_parallel_transport_samplers_prepared_draws_are_those_of_sample():
    """SO(3), whose sampler moves a basis along geomstats' parallel transport."""
    space = SpecialOrthogonal(3)
    points = to_numpy(space.random_point(3))
    sampler = TangentGaussian(space, validate=False)
    draw = sampler.prepare(SIGMA, random_state=np.random.default_rng(6))
    generator = np.random.default_rng(6)
    for point in points:
        np.testing.assert_array_equal(
            to_numpy(draw(to_backend(point))),
            to_numpy(sampler.sample(to_backend(point), sigma=SIGMA, random_state=generator)))


class _Halved(TangentGaussian):
    """A subclass drawing its own way (half the noise): ``prepare`` must call it."""

    def sample(self, base_point, n_samples=1, sigma=1.0, random_state=None):
        return super().sample(base_point, n_samples, sigma / 2, random_state)


def test_prepare_draws_through_a_subclass_sample():
    point = to_backend(make_case("hypersphere").points["random"])
    halved = to_numpy(_Halved(Hypersphere(4), validate=False).prepare(SIGMA, 3)(point))
    expected = TangentGaussian(Hypersphere(4)).sample(point, sigma=SIGMA / 2, random_state=3)
    np.testing.assert_array_equal(halved, to_numpy(expected))


def test_prepare_draws_through_a_sample_replaced_on_the_class(monkeypatch):
    calls = []
    original = TangentGaussian.sample

    def recorded(sampler, base_point, n_samples=1, sigma=1.0, random_state=None, mean=None):
        calls.append(sigma)
        return original(sampler, base_point, n_samples, sigma, random_state, mean)

    monkeypatch.setattr(TangentGaussian, "sample", recorded)
    draw = TangentGaussian(Hypersphere(4), validate=False).prepare(SIGMA, 0)
    draw(to_backend(make_case("hypersphere").points["random"]))
    assert calls == [SIGMA]


def test_a_scaled_metric_scales_the_prepared_draw():
    """With the metric scaled by lambda, the prepared draw is the unscaled one over sqrt(lambda)."""
    space = Hypersphere(4)
    point = make_case("hypersphere").points["random"]
    scaled = Hypersphere(4)
    scaled.equip_with_metric(4.0 * scaled.metric)
    assert isinstance(scaled.metric, ScalarProductMetric)
    plain = to_numpy(TangentGaussian(space, validate=False).prepare(SIGMA, 5)(point))
    drawn = to_numpy(TangentGaussian(scaled, validate=False).prepare(SIGMA, 5)(point))
    np.testing.assert_allclose(drawn, plain / 2.0, rtol=1e-15, atol=0)


@pytest.mark.parametrize("family", ONE_POINT_FAMILIES)
def test_prepared_draws_are_the_tangent_gaussian(family):
    """At every base point of the family (the antipode and the far points included):
    tangent, E||xi||^2 = d sigma^2 and iid N(0, sigma^2) coordinates in an independent
    orthonormal basis."""
    case = make_case(family)
    space = case.space
    draw = TangentGaussian(space, validate=False).prepare(SIGMA, random_state=shifted(11))
    for point in case.points.values():
        draws = np.stack([to_numpy(draw(to_backend(point))) for _ in range(N_DRAWS)])
        tangency = inner_products(space.metric, draws, point, point)
        assert np.abs(tangency).max() < 1e-10 * max(1.0, np.abs(point).max()) * np.abs(draws).max()
        assert_squared_norm_mean(
            inner_products(space.metric, draws, draws, point), int(space.dim), SIGMA)
        assert_gaussian_coordinates(
            orthonormal_coordinates(space, space.metric, point, draws), SIGMA)


NON_FINITE = [(0, np.nan), (0, np.inf), (0, -np.inf), (2, np.nan), (2, np.inf), (2, -np.inf)]


@pytest.mark.parametrize("family", [*ONE_POINT_FAMILIES, "spd_affine"])
@pytest.mark.parametrize("index, value", NON_FINITE)
def test_a_non_finite_base_point_raises_as_sample_does_without_a_warning(
        family, index, value):
    case = make_case(family)
    point = np.array(case.points["random"])
    point.flat[index] = value
    sampler = TangentGaussian(case.space, validate=False)
    with pytest.raises(ValueError, match="non-finite") as expected:
        sampler.sample(to_backend(point), sigma=SIGMA, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError) as raised:
            sampler.prepare(SIGMA, random_state=0)(to_backend(point))
    assert str(raised.value) == str(expected.value)


def test_rejects_a_base_point_of_the_wrong_shape():
    draw = TangentGaussian(Hypersphere(4), validate=False).prepare(SIGMA, random_state=0)
    with pytest.raises(ValueError, match=r"base_point must have shape \(5,\)"):
        draw(to_backend(np.ones((2, 5)) / np.sqrt(5)))


@pytest.mark.parametrize("sigma, error", [(0.0, ValueError), (-1.0, ValueError),
                                          (float("nan"), ValueError), ("1", TypeError)])
def test_rejects_a_bad_sigma_once(sigma, error):
    with pytest.raises(error, match="sigma"):
        TangentGaussian(Hypersphere(4), validate=False).prepare(sigma, random_state=0)
