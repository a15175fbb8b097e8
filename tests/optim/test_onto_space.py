"""Points a step forms are kept on the space: an SPD point rounding made indefinite is
floored back, anything numerically on the space is returned unchanged."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim.geodesics import geodesics_for
from geomstats_dp.optim.onto_space import (
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
