"""Exact laws of the radius r with density ~ s_k(r)^(dim - 1) exp(-rate r) on [0, upper].

s_k is the radius function of the model space of curvature k: sin (k = 1), identity (k = 0),
sinh (k = -1). With rate = 1/sigma this is the law of rho(eta, x) under the Riemannian
Laplace distribution on the sphere, on Euclidean space and on hyperbolic space, because the
Riemannian volume in geodesic polar coordinates about eta is s_k(r)^(dim - 1) dr du.

Samplers (all exact):

- k = 0, no truncation: Gamma(dim, 1/rate);
- k = -1, no truncation (needs rate > dim - 1): with T = 1 - exp(-2 r),
  exp(-rate r) sinh^(dim-1)(r) dr = 2^(-dim) T^(dim-1) (1 - T)^(b-1) dT with
  b = (rate - (dim - 1)) / 2, so T ~ Beta(dim, b) and r = -log(1 - T) / 2; 1 - T ~ Beta(b, dim)
  is drawn through the log of Gamma variables, which stays accurate when b is small;
- otherwise (the sphere, any truncation): log s_k(r)^(dim-1) - rate r is concave, so the
  tangent-envelope rejection of ``LogConcaveSampler`` applies.
"""

import math

import numpy as np
from scipy import integrate, special

from geomstats_dp.distributions.laplace.log_concave import LogConcaveSampler

CURVATURES = (1, 0, -1)


def log_sphere_area(dim):
    """log of the area of the unit sphere S^(dim-1) in R^dim, 2 pi^(dim/2) / Gamma(dim/2)."""
    return math.log(2.0) + 0.5 * dim * math.log(math.pi) - special.gammaln(0.5 * dim)


def _log_radius_function(r, curvature):
    """log s_k(r), stable for large r when k = -1."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore"):
        if curvature == 1:
            return np.log(np.sin(r))
        if curvature == 0:
            return np.log(r)
        return r + np.log(-np.expm1(-2.0 * r)) - math.log(2.0)


def _cot_radius_function(r, curvature):
    """s_k'(r) / s_k(r)."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore"):
        if curvature == 1:
            return 1.0 / np.tan(r)
        if curvature == 0:
            return 1.0 / r
        return 1.0 / np.tanh(r)


def _log_gamma_variates(shape, size, rng):
    """log of Gamma(shape, 1) draws, accurate for small shape: G_a = G_(a+1) U^(1/a)."""
    return np.log(rng.gamma(shape + 1.0, 1.0, size)) + np.log(rng.random(size)) / shape


class RadialLaw:
    """Density ~ s_k(r)^(dim - 1) exp(-rate r) on [0, upper].

    Parameters
    ----------
    dim : int
        Exponent plus one (the dimension of the manifold for a Laplace radius).
    rate : float
        Exponential rate (1/sigma for a Laplace radius); may be <= 0 when truncated.
    curvature : {1, 0, -1}
    upper : float
        Truncation point; at most pi when curvature = 1 (the sphere's diameter).
    """

    def __init__(self, dim, rate, curvature=0, upper=math.inf):
        if curvature not in CURVATURES:
            raise ValueError(f"curvature must be one of {CURVATURES}, got {curvature}")
        if curvature == 1:
            upper = min(upper, math.pi)
        if not upper > 0:
            raise ValueError(f"upper must be > 0, got {upper}")
        if math.isinf(upper) and rate <= max(dim - 1, 0) * (curvature == -1):
            raise ValueError(self.existence_message(dim, rate, curvature))
        self.dim, self.rate, self.curvature, self.upper = int(dim), float(rate), curvature, upper

    @staticmethod
    def existence_message(dim, rate, curvature):
        """Why s_k(r)^(dim-1) exp(-rate r) is not integrable on [0, inf)."""
        if curvature == -1:
            return (
                f"exp(-r/sigma) sinh^(d-1)(r) is integrable on [0, inf) only if "
                f"1/sigma > d - 1 = {dim - 1}, got 1/sigma = {rate}"
            )
        return f"exp(-rate r) r^(d-1) needs rate > 0, got {rate}"

    def log_density(self, r):
        """Unnormalised log-density at r, shape of r; -inf outside (0, upper)."""
        r = np.asarray(r, dtype=float)
        inside = (r >= 0) & (r <= self.upper)
        values = -self.rate * r
        if self.dim > 1:
            with np.errstate(invalid="ignore"):
                values = values + (self.dim - 1) * _log_radius_function(r, self.curvature)
        return np.where(inside, values, -np.inf)

    def _derivative(self, r):
        if self.dim == 1:
            return -self.rate + 0.0 * np.asarray(r, dtype=float)
        return (self.dim - 1) * _cot_radius_function(r, self.curvature) - self.rate

    def mode(self):
        """Maximiser of the density on [0, upper]."""
        if self.dim == 1:
            return 0.0 if self.rate >= 0 else self.upper
        if self.curvature == 1:  # cot r = rate / (dim - 1)
            mode = 0.5 * math.pi - math.atan(self.rate / (self.dim - 1))
        elif self.rate <= 0:
            mode = math.inf
        elif self.curvature == 0:
            mode = (self.dim - 1) / self.rate
        else:  # coth r = rate / (dim - 1)
            ratio = (self.dim - 1) / self.rate
            mode = math.atanh(ratio) if ratio < 1 else math.inf
        return min(mode, self.upper)

    def sample(self, size, rng):
        """Draw ``size`` radii, numpy array of shape [size]."""
        if math.isinf(self.upper) and self.curvature == 0:
            return rng.gamma(self.dim, 1.0 / self.rate, size)
        if math.isinf(self.upper):
            b = 0.5 * (self.rate - (self.dim - 1))
            log_b_part = _log_gamma_variates(b, size, rng)
            log_d_part = _log_gamma_variates(self.dim, size, rng)
            log_one_minus_t = log_b_part - np.logaddexp(log_b_part, log_d_part)
            return -0.5 * log_one_minus_t
        sampler = LogConcaveSampler(
            self.log_density, self._derivative, self.mode(), 0.0, self.upper
        )
        return sampler.sample(size, rng)

    def log_normaliser(self):
        """log of the integral of the density over [0, upper].

        Closed form without truncation for k = 0 (Gamma(dim) / rate^dim) and k = -1
        (2^-dim B(dim, b)); adaptive quadrature otherwise.
        """
        if math.isinf(self.upper) and self.curvature == 0:
            return special.gammaln(self.dim) - self.dim * math.log(self.rate)
        if math.isinf(self.upper):
            b = 0.5 * (self.rate - (self.dim - 1))
            return -self.dim * math.log(2.0) + special.betaln(self.dim, b)
        mode = self.mode()
        peak = float(self.log_density(np.array(mode)))
        value, _ = integrate.quad(
            lambda r: math.exp(float(self.log_density(np.array(r))) - peak),
            0.0, self.upper, points=[mode] if 0 < mode < self.upper else None,
            epsabs=0.0, epsrel=1e-11, limit=200,
        )
        return peak + math.log(value)
