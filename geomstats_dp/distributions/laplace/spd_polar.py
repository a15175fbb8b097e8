"""The Riemannian Laplace law on SPD(n) with the affine-invariant metric, in polar form.

Polar coordinates about eta: x = eta^1/2 U diag(exp(r)) U^T eta^1/2 with U in O(n) and
r in R^n. geomstats' ``SPDAffineMetric`` (<u, v>_p = tr(p^-1 u p^-1 v)) gives
rho(eta, x) = |r| (Euclidean norm) and the Riemannian volume
8^(n(n-1)/4) prod_{i<j} sinh(|r_i - r_j| / 2) dr dU (dU Haar; the constant is irrelevant
here and the factor 1/2 inside sinh was checked against the metric tensor numerically,
see tests/laplace/test_spd_polar.py). So U is Haar-distributed, independent of r, and r has
density ~ exp(-|r|/sigma) prod_{i<j} sinh(|r_i - r_j| / 2) on R^n.

Existence: in polar form r = t w (|w| = 1), the density grows like exp(t (A(w)/2 - 1/sigma))
with A(w) = sum_{i<j} |w_i - w_j|, whose maximum over the unit sphere is
A_max = sqrt(n (n^2 - 1) / 3) (the norm of (2k - n - 1)_k); the law exists if and only if
sigma < 2 / A_max, or when it is truncated to a bounded set.

Exact sampler: with beta = 1/sigma - A_max/2 and y_ij = t |w_i - w_j| / 2,
sinh(y) <= y e^y and sinh(y) <= e^y / 2 give two envelopes,

- "vandermonde": t^(n-1+P) exp(-beta t) prod_{i<j} |w_i - w_j| (P = n(n-1)/2): t is
  Gamma(n + P, 1/beta) and w is the direction of the eigenvalues of a GOE matrix (their
  joint density is prod |l_i - l_j| exp(-|l|^2/2), whose direction has density
  ~ prod |w_i - w_j|); acceptance prod (1 - e^(-2y))/(2y) * exp(-t (A_max - A(w))/2),
  close to 1 for small sigma;
- "exponential": t^(n-1) exp(-beta t), w uniform; acceptance
  prod (1 - e^(-2y)) * exp(-t (A_max - A(w))/2), better for sigma near 2/A_max.

The envelope with the smaller mass is used (the masses are known in closed form through
Mehta's integral). For large n both acceptances collapse; ``sample_mcmc`` runs random-walk
Metropolis chains on r instead.
"""

import math

import numpy as np
from scipy import special

from geomstats_dp.distributions.laplace.radial import RadialLaw, log_sphere_area
from geomstats_dp.distributions.laplace.rejection import rejection_sample

TARGET_ACCEPTANCE = 0.25


def max_pair_sum(n):
    """A_max = max over unit w in R^n of sum_{i<j} |w_i - w_j| = sqrt(n (n^2 - 1) / 3)."""
    return math.sqrt(n * (n * n - 1) / 3.0)


def scale_limit(n):
    """Supremum of the scales sigma for which the untruncated law on SPD(n) exists."""
    return 2.0 / max_pair_sum(n) if n > 1 else math.inf


def _log_mean_vandermonde(n):
    """log E[prod_{i<j} |w_i - w_j|] for w uniform on the unit sphere of R^n.

    Mehta's integral: int prod |x_i - x_j| exp(-|x|^2/2) dx
    = (2 pi)^(n/2) prod_{j<=n} Gamma(1 + j/2) / Gamma(3/2); in polar coordinates the
    left side is 2^((n+P)/2 - 1) Gamma((n+P)/2) |S^(n-1)| E[prod |w_i - w_j|].
    """
    n_pairs = n * (n - 1) // 2
    mehta = 0.5 * n * math.log(2 * math.pi) + sum(
        special.gammaln(1 + 0.5 * j) - special.gammaln(1.5) for j in range(1, n + 1)
    )
    radial = (0.5 * (n + n_pairs) - 1) * math.log(2.0) + special.gammaln(0.5 * (n + n_pairs))
    return mehta - radial - log_sphere_area(n)


def _pair_gaps(spectra):
    """|r_i - r_j| for i < j: [..., n] -> [..., P]."""
    upper_i, upper_j = np.triu_indices(spectra.shape[-1], k=1)
    return np.abs(spectra[..., upper_i] - spectra[..., upper_j])


def _log_sinh(values):
    """log sinh(y) for y >= 0 (-inf at 0), stable for large y."""
    with np.errstate(divide="ignore"):
        return values + np.log(-np.expm1(-2.0 * values)) - math.log(2.0)


def haar_orthogonal(size, n, rng):
    """Haar-distributed matrices of O(n): QR of Gaussian matrices, signs fixed by diag(R)."""
    q, r = np.linalg.qr(rng.standard_normal((size, n, n)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def symmetric_sqrt(matrix):
    """The symmetric positive definite square root of an SPD matrix [n, n] (numpy)."""
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * np.sqrt(values)) @ vectors.T


def polar_points(sqrt_footpoint, spectra, rotations):
    """eta^1/2 U diag(exp(r)) U^T eta^1/2 for spectra [k, n] and rotations [k, n, n]."""
    inner = np.einsum("kij,kj,klj->kil", rotations, np.exp(spectra), rotations)
    points = sqrt_footpoint @ inner @ sqrt_footpoint
    return 0.5 * (points + np.swapaxes(points, -1, -2))


class SPDSpectrumLaw:
    """Law of the log-eigenvalue vector r: density ~ exp(-|r|/sigma) prod sinh(|r_i - r_j|/2).

    Parameters
    ----------
    n : int
        Matrix size.
    scale : float
        sigma, in the units of the unscaled affine-invariant metric.
    upper : float
        Truncation |r| < upper (inf: none; then sigma < ``scale_limit(n)`` is required).
    """

    def __init__(self, n, scale, upper=math.inf):
        if math.isinf(upper) and not scale < scale_limit(n):
            raise ValueError(
                f"the Laplace law on SPD({n}) (affine-invariant) exists only for "
                f"scale < 2 sqrt(3 / (n (n^2 - 1))) = {scale_limit(n):.6g}; got {scale:g}. "
                "Pass radius= to truncate it to a ball"
            )
        self.n, self.scale, self.upper = int(n), float(scale), float(upper)
        self.n_pairs = self.n * (self.n - 1) // 2
        self.rate = 1.0 / self.scale - 0.5 * max_pair_sum(self.n)
        self.envelope = self._pick_envelope()

    def log_density(self, spectra):
        """Unnormalised log-density of spectra [..., n] -> [...]; -inf outside |r| < upper."""
        norms = np.linalg.norm(spectra, axis=-1)
        values = -norms / self.scale + _log_sinh(0.5 * _pair_gaps(spectra)).sum(axis=-1)
        return np.where(norms < self.upper, values, -np.inf)

    def _radial(self, dim):
        return RadialLaw(dim, self.rate, curvature=0, upper=self.upper)

    def _pick_envelope(self):
        """The envelope of smaller mass (common factors 2^-P |S^(n-1)| left out)."""
        vandermonde = _log_mean_vandermonde(self.n) + self._radial(
            self.n + self.n_pairs
        ).log_normaliser()
        exponential = self._radial(self.n).log_normaliser()
        return "vandermonde" if vandermonde < exponential else "exponential"

    def _directions(self, size, rng):
        """Unit vectors w [size, n] from the current envelope's angular law."""
        if self.envelope == "vandermonde":
            gaussian = rng.standard_normal((size, self.n, self.n))
            goe = (gaussian + np.swapaxes(gaussian, -1, -2)) / 2.0
            vectors = np.linalg.eigvalsh(goe)
        else:
            vectors = rng.standard_normal((size, self.n))
        return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)

    def _propose(self, size, rng):
        directions = self._directions(size, rng)
        exponent = self.n + (self.n_pairs if self.envelope == "vandermonde" else 0)
        radii = self._radial(exponent).sample(size, rng)
        half_gaps = 0.5 * radii[:, None] * _pair_gaps(directions)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_factors = np.log(-np.expm1(-2.0 * half_gaps))
            if self.envelope == "vandermonde":
                log_factors = np.where(
                    half_gaps > 0, log_factors - np.log(2.0 * half_gaps), 0.0
                )
        slack = max_pair_sum(self.n) - _pair_gaps(directions).sum(axis=-1)
        log_ratio = log_factors.sum(axis=-1) - 0.5 * radii * slack
        keep = np.log(rng.random(size)) < log_ratio
        return radii[:, None] * directions, keep

    def sample_exact(self, size, rng):
        """Exact draws by rejection, shape [size, n]."""
        return rejection_sample(
            self._propose, size, rng, what=f"SPD({self.n}) {self.envelope} envelope"
        )

    def sample_mcmc(self, size, rng, burn_in=2000, step_size=None):
        """Random-walk Metropolis on R^n: ``size`` independent chains, final states returned.

        Chains start from the envelope (close to the target for small sigma). The common
        step size is tuned towards 25% acceptance during the first half of the burn-in and
        then frozen, so the second half runs a fixed, reversible kernel.

        Returns
        -------
        spectra : numpy.ndarray, shape=[size, n]
        """
        directions = self._directions(size, rng)
        exponent = self.n + (self.n_pairs if self.envelope == "vandermonde" else 0)
        state = self._radial(exponent).sample(size, rng)[:, None] * directions
        log_target = self.log_density(state)
        if step_size is None:
            step_size = 2.38 * self.scale * (self.n + self.n_pairs) / self.n
        log_step = math.log(step_size)
        adapt_until = burn_in // 2
        window_accepted = 0
        for step in range(burn_in):
            proposal = state + math.exp(log_step) * rng.standard_normal(state.shape)
            log_proposal = self.log_density(proposal)
            accept = np.log(rng.random(size)) < log_proposal - log_target
            state[accept] = proposal[accept]
            log_target[accept] = log_proposal[accept]
            window_accepted += int(accept.sum())
            if step < adapt_until and (step + 1) % 50 == 0:
                rate = window_accepted / (50 * size)
                log_step += rate - TARGET_ACCEPTANCE
                window_accepted = 0
        return state
