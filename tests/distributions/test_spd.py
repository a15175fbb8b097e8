"""One tangent Gaussian draw at one SPD(2) point (Python floats) equals the numpy route."""

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_numpy
from geomstats_dp.distributions import TangentGaussian


def _points():
    """A random SPD(2) point, one with condition number 1e6 and a diagonal one."""
    rng = np.random.default_rng(5)
    root = rng.standard_normal((2, 2))
    rotation = np.linalg.qr(rng.standard_normal((2, 2)))[0]
    return [root @ root.T + 0.1 * np.eye(2),
            rotation @ np.diag([1e-3, 1e3]) @ rotation.T, np.diag([2.0, 0.5])]


@pytest.mark.parametrize("index", range(3))
def test_one_draw_is_l_u_l_transpose_of_the_same_normals(index):
    """L U L^T with numpy's Cholesky factor L and U = C * A from the same 3 normals (the
    coordinates (0,0), (0,1), (1,1) scaled by 1, 1/sqrt(2), 1), times sigma: equal to
    rounding (the factor's own rounding grows with the condition number of the point), so
    the law is the one the statistical tests check at SPD(3)."""
    point = _points()[index]
    sigma = 0.7
    drawn = to_numpy(TangentGaussian(SPDMatrices(2), validate=False).sample(
        point, sigma=sigma, random_state=np.random.default_rng(11)))
    normals = np.random.default_rng(11).standard_normal(3)
    at_identity = np.array([[normals[0], normals[1] / np.sqrt(2)],
                            [normals[1] / np.sqrt(2), normals[2]]])
    factor = np.linalg.cholesky(point)
    expected = sigma * factor @ at_identity @ factor.T
    scale = np.abs(factor).max() ** 2 * np.abs(at_identity).max() * sigma * np.linalg.cond(point)
    np.testing.assert_allclose(drawn, expected, rtol=0, atol=16 * np.finfo(float).eps * scale)
    assert np.array_equal(drawn, drawn.T)


def test_one_draw_at_a_non_positive_point_raises_as_before():
    """Unvalidated, a non-positive-definite point reaches numpy's factorisation (which
    raises) without a draw being made from the stream."""
    rng = np.random.default_rng(0)
    with pytest.raises(np.linalg.LinAlgError):
        TangentGaussian(SPDMatrices(2), validate=False).sample(
            np.array([[1.0, 2.0], [2.0, 1.0]]), random_state=rng)
    assert rng.standard_normal() == np.random.default_rng(0).standard_normal()
