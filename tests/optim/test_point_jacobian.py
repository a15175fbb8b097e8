"""Per-sample gradients at one point (reverse over reverse mode, and pytorch's forward
mode on copies) against the closed form of f(x; z_i) = |x - z_i|^2 / 2 + tr(x) |z_i|^2."""

import geomstats.backend as gs
import numpy as np
import pytest

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim.losses import backend_name
from geomstats_dp.optim.point_jacobian import copies_jacobian, point_jacobian

RNG = np.random.default_rng(0)
POINT, DATA = RNG.standard_normal((2, 2)), RNG.standard_normal((5, 2, 2))
# d/dx [|x - z|^2 / 2 + tr(x) |z|^2] = x - z + |z|^2 I
EXPECTED = POINT - DATA + (DATA**2).sum(axis=(1, 2))[:, None, None] * np.eye(2)


def _values(point, data):
    squares = gs.sum((point - data) ** 2, axis=(-2, -1)) / 2
    trace = point[..., 0, 0] + point[..., 1, 1]  # [] at a point, [d, 1] for the copies
    return squares + trace * gs.sum(data**2, axis=(-2, -1))


def test_point_jacobian_is_the_closed_form():
    if backend_name() == "numpy":
        with pytest.raises(ValueError, match="autograd or pytorch"):
            point_jacobian(lambda x: _values(x, to_backend(DATA)), to_backend(POINT))
        return
    data = to_backend(DATA)
    found = point_jacobian(lambda x: _values(x, data), to_backend(POINT))
    np.testing.assert_allclose(to_numpy(found), EXPECTED, rtol=1e-12, atol=1e-12)


def test_copies_jacobian_is_the_closed_form():
    if backend_name() != "pytorch":
        pytest.skip("forward mode: pytorch only")
    data = to_backend(DATA)
    found = copies_jacobian(lambda copies: _values(copies, data), to_backend(POINT))
    np.testing.assert_allclose(to_numpy(found), EXPECTED, rtol=1e-12, atol=1e-12)
