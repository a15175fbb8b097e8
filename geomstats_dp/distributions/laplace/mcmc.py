"""Random-walk Metropolis-Hastings on a manifold, for targets given w.r.t. the volume.

Proposal: y = Exp_x(v), v ~ N_x(0, s^2) (``TangentGaussian``, isotropic in the metric),
redrawn until |v|_x < R, a constant at most the injectivity radius. Its density w.r.t. the
Riemannian volume at y is

    q(x -> y) = g(rho(x, y)) / (Z(R) theta_x(y)),   Z(R) = P(|v| < R),

with g the radial Gaussian profile and theta_x(y) the Jacobian of Exp_x at Log_x(y). The
volume density is symmetric, theta_x(y) = theta_y(x) for y within the injectivity radius of
x (a classical property of the volume density function, see Besse, "Manifolds all of whose
geodesics are closed", ch. 6; checked numerically on SPD(2) in
tests/laplace/test_mcmc.py), so q(x -> y) = q(y -> x) and the Hastings ratio is
pi(y) / pi(x). A rejected proposal repeats the current state (the sampler in the supplement
of Reimherr et al. redraws instead, which is not a valid kernel). The callers in
this package pass the space's global injectivity radius as R when ``geometry.py`` knows it;
elsewhere pass ``max_step`` below the injectivity radius over the support (without it the
argument holds only where the exponential map is injective, e.g. Hadamard manifolds).

Many independent chains run at once (one geomstats call per step for all of them).
"""

import math

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_positive_finite, check_positive_int
from geomstats_dp.distributions.tangent_gaussian import TangentGaussian

MAX_REDRAWS = 100


def default_step_size(scale, radius=None, max_step=math.inf):
    """Proposal scale for a Laplace-like target of scale sigma: 2 sigma, kept below half the
    ball radius (the chain must move inside a truncation ball) and a third of ``max_step``.
    """
    step = 2.0 * scale
    if radius is not None:
        step = min(step, 0.5 * radius)
    return min(step, max_step / 3.0)


class ManifoldMetropolis:
    """Independent random-walk Metropolis-Hastings chains on ``space``.

    Parameters
    ----------
    space : Manifold
        A geomstats space with ``metric.exp`` and ``metric.dist``.
    log_target : callable
        Points [k, *space.shape] (backend) -> numpy [k]: log-density w.r.t. the Riemannian
        volume, up to a constant; -inf outside the support.
    step_size : float
        s, the standard deviation of each tangent coordinate of a proposal.
    burn_in : int
        Steps before the first draw of each chain.
    thinning : int
        Steps between two draws of the same chain.
    n_chains : int, optional
        Number of chains; default: one per requested sample (then draws are independent).
    max_step : float, optional
        Truncation R of the proposal norm (a constant, at most the injectivity radius);
        default: none.

    Attributes
    ----------
    acceptance_rate_ : float
        Fraction of accepted proposals in the last ``sample`` call.
    """

    def __init__(
        self, space, log_target, step_size, burn_in=1000, thinning=10, n_chains=None,
        max_step=None,
    ):
        self.space = space
        self.log_target = log_target
        self.step_size = check_positive_finite(step_size, "step_size")
        self.burn_in = check_positive_int(burn_in, "burn_in", minimum=0)
        self.thinning = check_positive_int(thinning, "thinning")
        self.n_chains = None if n_chains is None else check_positive_int(n_chains, "n_chains")
        self.max_step = math.inf if max_step is None else check_positive_finite(max_step, "max_step")
        self._gaussian = TangentGaussian(space)
        self.acceptance_rate_ = None

    def _propose(self, points, rng):
        """Tangent steps at points (numpy [k, *shape]) with norms below max_step."""
        base = to_backend(points)
        steps = to_numpy(self._gaussian.sample(base, sigma=self.step_size, random_state=rng))
        steps = steps.reshape(points.shape)
        if math.isinf(self.max_step):
            return steps
        for _ in range(MAX_REDRAWS):
            norms = np.atleast_1d(to_numpy(self.space.metric.norm(to_backend(steps), base)))
            too_long = norms >= self.max_step
            if not too_long.any():
                return steps
            redraw = to_numpy(
                self._gaussian.sample(
                    to_backend(points[too_long]), sigma=self.step_size, random_state=rng
                )
            )
            steps[too_long] = redraw.reshape(steps[too_long].shape)
        raise RuntimeError(
            f"step_size {self.step_size} is too large for max_step {self.max_step}: "
            f"proposals kept exceeding it after {MAX_REDRAWS} redraws"
        )

    def _step(self, points, log_values, rng):
        """One Metropolis-Hastings step of every chain; returns the number accepted."""
        steps = self._propose(points, rng)
        proposals = to_numpy(self.space.metric.exp(to_backend(steps), to_backend(points)))
        proposals = proposals.reshape(points.shape)
        log_proposals = np.atleast_1d(self.log_target(to_backend(proposals)))
        with np.errstate(invalid="ignore"):
            log_ratio = log_proposals - log_values
        accept = np.log(rng.random(points.shape[0])) < log_ratio
        points[accept] = proposals[accept]
        log_values[accept] = log_proposals[accept]
        return int(accept.sum())

    def sample(self, start, n_samples, rng):
        """Run the chains from ``start`` and return ``n_samples`` draws.

        Parameters
        ----------
        start : array-like, shape=[*space.shape]
            Initial state of every chain; the target density must be > 0 there.
        n_samples : int
        rng : numpy.random.Generator

        Returns
        -------
        draws : numpy.ndarray, shape=[n_samples, *space.shape]
        """
        n_samples = check_positive_int(n_samples, "n_samples")
        n_chains = self.n_chains or n_samples
        per_chain = math.ceil(n_samples / n_chains)
        start = to_numpy(start)
        points = np.repeat(start[None], n_chains, axis=0)
        log_values = np.atleast_1d(self.log_target(to_backend(points))).astype(float)
        if not np.isfinite(log_values).all():
            raise ValueError("the target density is 0 at the chains' starting point")
        draws, accepted, n_steps = [], 0, 0
        for index in range(per_chain):
            for _ in range(self.burn_in if index == 0 else self.thinning):
                accepted += self._step(points, log_values, rng)
                n_steps += 1
            draws.append(points.copy())
        self.acceptance_rate_ = accepted / max(n_steps * n_chains, 1)
        stacked = np.stack(draws, axis=1).reshape((-1,) + start.shape)
        return stacked[:n_samples]
