"""Exact rejection sampler of the Laplace law on SPD matrices with the Bures-Wasserstein metric.

Chart: X = S^2 with S symmetric positive definite (the square root of X), Lebesgue measure
dS on the symmetric matrices in Frobenius-orthonormal coordinates. Two facts make a
rejection sampler from an l2 Laplace law on S exact:

1. Volume. In the eigenbasis of S = diag(s), geomstats' metric (tr(UV)/4 at I, the
   quotient metric of X = A A^T with A in GL(n) and the Frobenius metric) is diagonal in
   these coordinates: 1 on the diagonal entries and (s_i + s_j)^2 / (2 (s_i^2 + s_j^2)) on
   each off-diagonal pair, so the Riemannian volume is J(S) dS with
   J(S) = prod_{i<j} (s_i + s_j) / sqrt(2 (s_i^2 + s_j^2)) in (0, 1].
2. Distance. By the Araki-Yamagami inequality | |M^*| - |N^*| |_F <= sqrt2 |M - N|_F
   applied to M = X^1/2 and N = eta^1/2 U (U orthogonal), minimised over U:
   |X^1/2 - eta^1/2|_F <= sqrt2 d_BW(eta, X).

Target in the chart: exp(-d_BW(eta, S^2) / sigma) J(S) 1_ball(S^2) 1_{S > 0}. Proposal:
S = eta^1/2 + E, E with density ~ exp(-|E|_F / tau), tau = sqrt2 sigma (in the metric's
units). Their ratio exp(-d_BW / sigma + |E|_F / tau) J(S) is at most 1 by (1) and (2), so
accepting with that probability returns exact draws of the target. The acceptance rate is
about 2^(-d/2), d = n(n+1)/2, for small sigma (the sqrt2 of (2)), and lower when a ball
cuts the law.
"""

import math

import numpy as np

from geomstats_dp.distributions.laplace.spd_polar import symmetric_sqrt


def sqrt_chart_volume(roots):
    """Density J(S) of the Bures-Wasserstein volume w.r.t. dS in the square-root chart.

    Parameters
    ----------
    roots : numpy.ndarray, shape=[k, n, n]
        Symmetric positive definite S (the points are S^2).

    Returns
    -------
    density : numpy.ndarray, shape=[k]
        prod_{i<j} (s_i + s_j) / sqrt(2 (s_i^2 + s_j^2)) over the eigenvalues s of S.
    """
    values = np.linalg.eigvalsh(roots)
    first, second = np.triu_indices(roots.shape[-1], 1)
    a, b = values[:, first], values[:, second]
    return np.prod((a + b) / np.sqrt(2.0 * (a * a + b * b)), axis=1)


def symmetric_l2_laplace(n_samples, size, scale, rng):
    """Symmetric matrices E with density ~ exp(-|E|_F / scale).

    Parameters
    ----------
    n_samples : int
    size : int
        n, the matrices are n x n.
    scale : float
    rng : numpy.random.Generator

    Returns
    -------
    noise : numpy.ndarray, shape=[n_samples, size, size]
    norms : numpy.ndarray, shape=[n_samples]
        |E|_F, distributed as Gamma(n(n+1)/2, scale).
    """
    gaussian = rng.standard_normal((n_samples, size, size))
    # (G + G^T) / 2 is isotropic in the Frobenius inner product on symmetric matrices
    symmetric = (gaussian + np.swapaxes(gaussian, 1, 2)) / 2.0
    directions = symmetric / np.linalg.norm(symmetric, axis=(1, 2))[:, None, None]
    norms = rng.gamma(size * (size + 1) / 2.0, scale, n_samples)
    return norms[:, None, None] * directions, norms


def uniform_symmetric_ball(n_samples, size, radius, rng):
    """Symmetric matrices uniform in the Frobenius ball of ``radius``, [n_samples, size, size]."""
    noise, _ = symmetric_l2_laplace(n_samples, size, 1.0, rng)
    directions = noise / np.linalg.norm(noise, axis=(1, 2))[:, None, None]
    dim = size * (size + 1) / 2.0
    return radius * rng.uniform(size=n_samples)[:, None, None] ** (1.0 / dim) * directions


class BuresWassersteinEnvelope:
    """Proposals and acceptance of the exact Bures-Wasserstein Laplace sampler.

    Two envelopes of the target in the square-root chart, the one of smaller mass is used:
    exp(-|S - eta^1/2|_F / tau) with tau = sqrt2 sigma, and, for a law restricted to
    B_r(m0), exp(-max(0, d(eta, m0) - r) / sigma) on the Frobenius ball
    |S - m0^1/2|_F < sqrt2 r, which holds the square roots of the whole ball (fact 2).

    Parameters
    ----------
    footpoint : numpy.ndarray, shape=[n, n]
        eta.
    scale : float
        sigma, in the units of the (possibly scaled) metric.
    unit : float
        sqrt(c) when the space carries c times geomstats' metric.
    log_target : callable
        numpy [k, n, n] -> numpy [k]: -d(eta, X) / sigma, -inf outside the ball.
    center : numpy.ndarray, shape=[n, n], optional
        m0, the centre of the ball the law is restricted to.
    radius : float, optional
        r, its radius (None: untruncated).
    footpoint_offset : float
        d(eta, m0) (only with ``radius``).
    """

    def __init__(self, footpoint, scale, unit, log_target, center=None, radius=None,
                 footpoint_offset=0.0):
        self.size = footpoint.shape[0]
        self.log_target = log_target
        self.tau = math.sqrt(2.0) * scale / unit
        dim = self.size * (self.size + 1) / 2.0
        # log masses up to the common factor V_d: d! tau^d and floor (sqrt2 r)^d
        log_laplace_mass = math.lgamma(dim + 1.0) + dim * math.log(self.tau)
        self.ball = None
        if radius is not None:
            log_floor = -max(0.0, footpoint_offset - radius) / scale
            ball_radius = math.sqrt(2.0) * radius / unit
            if log_floor + dim * math.log(ball_radius) < log_laplace_mass:
                self.ball = (symmetric_sqrt(center), ball_radius, log_floor)
        self.root = symmetric_sqrt(footpoint)

    def _draw(self, n_samples, rng):
        """Square roots S [k, n, n] and the log envelope at them [k]."""
        if self.ball is None:
            noise, norms = symmetric_l2_laplace(n_samples, self.size, self.tau, rng)
            return self.root + noise, -norms / self.tau
        root, ball_radius, log_floor = self.ball
        roots = root + uniform_symmetric_ball(n_samples, self.size, ball_radius, rng)
        return roots, np.full(n_samples, log_floor)

    def propose(self, n_samples, rng):
        """Draw ``n_samples`` proposals; return (points [k, n, n], accepted mask [k])."""
        roots, log_envelope = self._draw(n_samples, rng)
        positive = np.linalg.eigvalsh(roots)[:, 0] > 0
        roots = roots[positive]
        points = roots @ roots
        log_ratio = (self.log_target(points) - log_envelope[positive]
                     + np.log(sqrt_chart_volume(roots)))
        keep = np.log(rng.uniform(size=len(roots))) < log_ratio
        return points, keep
