"""Sampling through an explicit basis: coordinates combined with the basis vectors, one
basis per base point, the coordinates drawn in a fixed order."""

import numpy as np

from geomstats_dp.distributions.baselines.basis import BasisSampler, combine


class _Rotated(BasisSampler):
    """The plane's basis rotated by the base point's first coordinate (an angle)."""

    def __init__(self):
        self.space = type("Plane", (), {"dim": 2, "shape": (2,)})()
        self.metric = None

    def basis(self, base_point):
        angle = base_point[0]
        return np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])


def test_combine_is_the_sum_of_coordinates_times_basis_vectors():
    rng = np.random.default_rng(0)
    coefficients, basis = rng.standard_normal((4, 3)), rng.standard_normal((3, 2, 2))
    expected = np.array([sum(c * b for c, b in zip(row, basis)) for row in coefficients])
    np.testing.assert_allclose(combine(coefficients, basis), expected, rtol=1e-12)


def test_each_base_point_combines_its_coordinates_in_its_own_basis():
    sampler = _Rotated()
    points = np.array([[0.0, 0.0], [np.pi / 2, 0.0], [1.0, 0.0]])
    draws = sampler.sample(points, 5, np.random.default_rng(3))
    coefficients = np.random.default_rng(3).standard_normal((5, 3, 2))
    for index, point in enumerate(points):
        np.testing.assert_allclose(draws[:, index],
                                   coefficients[:, index] @ sampler.basis(point), atol=1e-14)
