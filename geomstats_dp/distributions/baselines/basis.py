"""Sampling through an explicit orthonormal basis of T_w, built per base point."""

from abc import abstractmethod

import numpy as np

from geomstats_dp.distributions.base import TangentSampler


def combine(coefficients, basis):
    """Coordinates [n, d] in a basis [d, *shape] -> tangent vectors [n, *shape]."""
    flat = coefficients @ basis.reshape(basis.shape[0], -1)
    return flat.reshape((coefficients.shape[0],) + basis.shape[1:])


class BasisSampler(TangentSampler):
    """N_w(0, I) as iid N(0, 1) coordinates in a metric-orthonormal basis of T_w.

    Subclasses say how the basis is built; its cost (order d vectors per base point) is
    what separates these baselines from the closed-form transports.
    """

    @abstractmethod
    def basis(self, base_point):
        """Metric-orthonormal basis of T_w.

        Parameters
        ----------
        base_point : numpy.ndarray, shape=[*space.shape]

        Returns
        -------
        basis : numpy.ndarray, shape=[d, *space.shape]
        """

    def sample(self, base_points, n_samples, rng):
        """Draw iid N(0, 1) coordinates and combine them in ``basis`` at each base point."""
        coefficients = rng.standard_normal((n_samples, base_points.shape[0], int(self.space.dim)))
        draws = np.empty((n_samples,) + base_points.shape)
        for index, point in enumerate(base_points):
            draws[:, index] = combine(coefficients[:, index], self.basis(point))
        return draws
