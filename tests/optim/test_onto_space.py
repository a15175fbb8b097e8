"""Points a step forms are kept on the space: an SPD point rounding made indefinite is
floored back, a hyperboloid point beyond float64's reach is brought back to the ball it
keeps, anything numerically on the space is returned unchanged."""

import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim.geodesics import geodesics_for
from geomstats_dp.optim.onto_space import (
    HYPERBOLOID_RADIUS,
    SPD_CONDITION_LIMIT,
    floor_spectrum,
    floor_spectrum_2x2,
    onto_space,
)


def _rounded_spd(n, spread, seed):
    """G G^T, G = Q diag(exp(m / 2)) with m spread over [-spread, spread]: SPD in exact
    arithmetic, indefinite once rounded for a large spread."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((n, n)))[0]
    factor = basis * np.exp(np.linspace(-spread, spread, n) / 2)
    return factor @ factor.T


@pytest.mark.parametrize("n", [2, 8])
def test_an_indefinite_rounded_point_is_floored_to_a_factorisable_spd_point(n):
    point = _rounded_spd(n, 100.0, seed=n)
    before = np.linalg.eigvalsh(point)
    assert before[0] < before[-1] / SPD_CONDITION_LIMIT  # rounding lost the small ones
    parts, condition = floor_spectrum(to_backend(point))
    assert condition == SPD_CONDITION_LIMIT
    floored, factor, inverse = (to_numpy(part) for part in parts)
    eigvals = np.linalg.eigvalsh(floored)
    assert eigvals[0] >= eigvals[-1] / SPD_CONDITION_LIMIT * (1 - 1e-3)
    np.linalg.cholesky(floored)  # the noise sampler's factorisation exists
    assert np.allclose(floored, floored.T, rtol=0, atol=0)
    np.testing.assert_allclose(factor @ factor.T, floored, rtol=1e-10, atol=1e-12 * eigvals[-1])
    np.testing.assert_allclose(inverse @ factor, np.eye(n), atol=1e-8)
    # the largest eigenvalues are kept: the nearest matrix with the floored spectrum
    np.testing.assert_allclose(eigvals[-1], before[-1], rtol=1e-12)
    if n == 2:  # the closed form in floats agrees with the eigh route
        closed = [np.array(part) for part in floor_spectrum_2x2(point.tolist())]
        np.testing.assert_allclose(closed[0], floored, rtol=1e-9, atol=1e-9 * eigvals[-1])
        np.testing.assert_allclose(closed[1] @ closed[1].T, floored, rtol=1e-9,
                                   atol=1e-9 * eigvals[-1])
        np.testing.assert_allclose(closed[2] @ closed[1], np.eye(2), atol=1e-6)


@pytest.mark.parametrize("n", [2, 8])
def test_a_point_on_the_space_is_returned_unchanged(n):
    point = _rounded_spd(n, 10.0, seed=n)  # condition number e^20, within the limit
    floored, condition = floor_spectrum(to_backend(point))
    eigvals = np.linalg.eigvalsh(point)
    assert floored is None
    np.testing.assert_allclose(condition, eigvals[-1] / eigvals[0], rtol=1e-6)
    if n == 2:
        assert floor_spectrum_2x2(point.tolist()) is None
    assert np.array_equal(to_numpy(onto_space(SPDMatrices(n), to_backend(point))), point)


def test_a_point_that_underflowed_to_zero_is_left_to_the_noise_sampler():
    """Exp_P of a huge negative step rounds to the zero matrix: unchanged (the next noise
    draw finds no Cholesky factor and raises), its condition number unknown."""
    floored, condition = floor_spectrum(to_backend(np.zeros((3, 3))))
    assert floored is None and condition == np.inf


def test_sphere_points_are_renormalised_only_when_off():
    sphere = Hypersphere(2)
    on = to_backend(np.array([0.6, 0.8, 0.0]))
    assert onto_space(sphere, on) is on
    off = to_numpy(onto_space(sphere, to_backend(np.array([0.0, 0.0, 1.5]))))
    np.testing.assert_allclose(off, [0.0, 0.0, 1.0])


@pytest.mark.parametrize("n", [2, 8])
def test_a_huge_step_of_the_closed_form_exp_stays_factorisable(n):
    """Exp_I(V) with eigenvalues of V spread over [-100, 100]: geomstats' form is
    indefinite once rounded; the geodesics the loop uses keep it SPD, with a factor
    that the next map reuses."""
    space = SPDMatrices(n)
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((n, n)))[0]
    vector = (basis * np.linspace(-100, 100, n)) @ basis.T
    geodesics = geodesics_for(space)
    point = geodesics.exp(to_backend(vector), to_backend(np.eye(n)))
    np.linalg.cholesky(to_numpy(point))
    factor, inverse = (to_numpy(part) for part in geodesics.known_factor(point))
    np.testing.assert_allclose(factor @ factor.T, to_numpy(point), rtol=1e-9,
                               atol=1e-9 * np.abs(to_numpy(point)).max())
    np.testing.assert_allclose(inverse @ factor, np.eye(n), atol=1e-6)


def _hyperboloid_point(distance, angle):
    """The point at ``distance`` from (1, 0, 0) in direction (cos, sin) of angle."""
    return np.array([np.cosh(distance), np.sinh(distance) * np.cos(angle),
                     np.sinh(distance) * np.sin(angle)])


def test_hyperboloid_points_are_lifted_or_pulled_in_only_when_off():
    space = Hyperboloid(2)
    on = to_backend(_hyperboloid_point(3.0, 0.4))
    assert onto_space(space, on) is on
    tail = np.array([2.0, -1.0])
    lifted = to_numpy(onto_space(space, to_backend(np.array([7.0, *tail]))))
    np.testing.assert_allclose(lifted, [np.sqrt(6.0), *tail], rtol=1e-15)
    far = to_numpy(onto_space(space, to_backend(_hyperboloid_point(40.0, 2.0))))
    np.testing.assert_allclose(far, _hyperboloid_point(HYPERBOLOID_RADIUS, 2.0), rtol=1e-12)


def _extended_exp(vector, base):
    """The hyperboloid's exponential map in numpy's extended precision (long double)."""
    vector, base = vector.astype(np.longdouble), base.astype(np.longdouble)
    t = np.sqrt(vector[1:] @ vector[1:] - vector[0] ** 2)
    return (np.cosh(t) * base + np.sinh(t) / t * vector).astype(np.float64)


def _assert_timelike(point):
    """A finite point of the upper sheet whose Minkowski square norm is -1 up to float64
    rounding of x_0^2 (not the +1 of a point rounding sent off the hyperboloid)."""
    assert np.all(np.isfinite(point)) and point[0] >= 1
    square_norm = point[1:] @ point[1:] - point[0] ** 2
    assert abs(square_norm + 1) <= max(1.0, 1e-15 * point[0] ** 2)


@pytest.mark.parametrize("length", [1.0, 50.0, 1e4])
def test_a_huge_hyperboloid_step_stays_on_the_hyperboloid(length):
    """Exp_P(V) from a point at distance 10 from the origin with |V| = ``length``:
    geomstats' exp rounds the Minkowski norm of the far point to 0 (and raises) or
    overflows; the loop's exp keeps a point on the hyperboloid, within the ball, in the
    direction of the geodesic's end; an ordinary step gives the exact exponential."""
    space = Hyperboloid(2)
    base = to_backend(_hyperboloid_point(10.0, 0.3))
    direction = to_numpy(space.to_tangent(to_backend(np.array([0.0, 0.6, -0.8])), base))
    vector = to_backend(direction * length / float(space.metric.norm(to_backend(direction),
                                                                      base)))
    point = to_numpy(geodesics_for(space).exp(vector, base))
    _assert_timelike(point)  # geomstats' dist and log at it are defined
    assert np.isfinite(to_numpy(space.metric.log(to_backend(point), base))).all()
    assert point[0] <= np.cosh(HYPERBOLOID_RADIUS) * (1 + 1e-12)
    if length == 1.0:
        # an ordinary step: the exact exponential, cosh(t) P + sinh(t) / t V evaluated in
        # extended precision, up to the conditioning of t = |V| at coordinates of 1e4
        # (float64 cancellation in the Minkowski norm: about 5e-8 relative), as geomstats'
        exact = _extended_exp(to_numpy(vector), to_numpy(base))
        for candidate in (point, to_numpy(space.metric.exp(vector, base))):
            np.testing.assert_allclose(candidate, exact, rtol=2e-7, atol=0)
        return
    # the direction of the exact end's tail: cosh(t) P + sinh(t) / t V, scaled by e^-t
    exact_tail = (to_numpy(base)[1:] + to_numpy(vector)[1:] / length) / 2
    np.testing.assert_allclose(point[1:] / np.linalg.norm(point[1:]),
                               exact_tail / np.linalg.norm(exact_tail), atol=1e-6)
    # the geodesics the loop's running averages follow stay on the space too
    middle = to_numpy(geodesics_for(space).interpolate(to_backend(point), base, 0.5))
    _assert_timelike(middle)
