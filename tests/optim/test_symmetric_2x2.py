"""The closed-form spectral calculus of 2x2 symmetric matrices against numpy's ``eigh``."""

import geomstats.backend as gs
import numpy as np
import pytest

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim.symmetric_2x2 import function_coefficients, spectrum_2x2


def _matrices():
    """Random SPD matrices and the hard cases: repeated eigenvalues (c I), eigenvalues
    1e-9 and 1e-15 apart, diagonal with the larger entry second, negative off-diagonal,
    and a condition number of 1e8."""
    rng = np.random.default_rng(0)
    roots = rng.standard_normal((20, 2, 2))
    random = roots @ roots.transpose(0, 2, 1) + 0.05 * np.eye(2)
    rotation = np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]])
    special = [
        np.eye(2), 3.5 * np.eye(2),
        rotation @ np.diag([2.0, 2.0 + 1e-9]) @ rotation.T,
        rotation @ np.diag([2.0, 2.0 + 1e-15]) @ rotation.T,
        np.diag([1.0, 4.0]), np.diag([4.0, 1.0]),
        np.array([[2.0, -0.7], [-0.7, 1.0]]),
        rotation @ np.diag([1e-4, 1e4]) @ rotation.T,
    ]
    return np.concatenate([random, np.stack(special)])


def _eigh_function(mats, function):
    """f(W) = U diag(f(l)) U^T from numpy's ``eigh``, [k, 2, 2]."""
    eigvals, eigvecs = np.linalg.eigh(mats)
    return np.einsum("kij,kj,klj->kil", eigvecs, function(eigvals), eigvecs)


def _spectrum(mats):
    backend = to_backend(mats)
    return spectrum_2x2(backend[:, 0, 0], backend[:, 1, 1], backend[:, 1, 0])


def test_eigenvalues_match_eigh():
    """Within a few eps |W| of ``eigh``'s (its own rounding), gap exactly 0 at c I."""
    mats = _matrices()
    low, high, mean, gap = (to_numpy(part) for part in _spectrum(mats))
    expected = np.linalg.eigh(mats)[0]
    tolerance = 8 * np.finfo(float).eps * np.abs(mats).max(axis=(1, 2))
    assert np.all(np.abs(low - expected[:, 0]) <= tolerance)
    assert np.all(np.abs(high - expected[:, 1]) <= tolerance)
    np.testing.assert_allclose(mean, np.trace(mats, axis1=1, axis2=2) / 2, rtol=1e-15)
    assert np.all(gap >= 0) and gap[20] == 0 and gap[21] == 0


FUNCTIONS = {  # numpy f, backend f, |f'|, shift of the SPD test matrices
    "log": (np.log, gs.log, lambda x: 1 / x, 0.0),
    "exp(x / 2)": (lambda x: np.exp(x / 2), lambda x: gs.exp(x / 2),
                   lambda x: np.exp(x / 2) / 2, -2.0),  # tangent: negative eigenvalues too
    "x^0.15": (lambda x: x ** 0.15, lambda x: x ** 0.15, lambda x: 0.15 * x ** -0.85, 0.0),
    "x^-0.5": (lambda x: x ** -0.5, lambda x: x ** -0.5, lambda x: 0.5 * x ** -1.5, 0.0),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_function_of_the_matrix_matches_eigh(name):
    """alpha I + beta W equals U diag(f(l)) U^T to the rounding of an ``eigh``: an
    absolute error of a few eps (|f(W)| + max|f'| |W|), near-repeated eigenvalues and a
    condition number of 1e8 included."""
    function, backend_function, derivative, shift = FUNCTIONS[name]
    mats = _matrices()
    if shift:  # exp: symmetric matrices of moderate size (exp(5000) overflows)
        mats = mats[:-1] + shift * np.eye(2)
    low, high, mean, gap = _spectrum(mats)
    alpha, beta = function_coefficients(backend_function(low), backend_function(high),
                                        mean, gap)
    alpha, beta = to_numpy(alpha), to_numpy(beta)
    found = alpha[:, None, None] * np.eye(2) + beta[:, None, None] * mats
    expected = _eigh_function(mats, function)
    eigvals = np.linalg.eigh(mats)[0]
    slope = derivative(eigvals).max(axis=1)  # the derivatives here are monotone
    scale = np.abs(expected).max(axis=(1, 2)) + slope * np.abs(mats).max(axis=(1, 2))
    errors = np.abs(found - expected).max(axis=(1, 2))
    assert np.all(errors <= 32 * np.finfo(float).eps * scale), errors / scale


def test_repeated_eigenvalue_gives_f_of_it_times_identity():
    mats = 3.5 * np.eye(2)[None]
    low, high, mean, gap = _spectrum(mats)
    alpha, beta = function_coefficients(gs.log(low), gs.log(high), mean, gap)
    assert to_numpy(beta).tolist() == [0.0]
    np.testing.assert_allclose(to_numpy(alpha), [np.log(3.5)], rtol=1e-15)
