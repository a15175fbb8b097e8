"""Random-walk Metropolis-Hastings on the tangent space (Han et al.'s sampler)."""

import math

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_positive_finite, check_positive_int
from geomstats_dp.distributions.base import TangentSampler


class MetropolisHastings(TangentSampler):
    """Random-walk Metropolis-Hastings on T_w targeting exp(-||xi||_w^2 / 2).

    Every chain starts at 0 and proposes xi' = xi + h_w P_w(z), z ~ N(0, I_ambient), with
    P_w = ``space.to_tangent`` (a fixed linear map, so the proposal is symmetric); it moves
    with probability min(1, exp(-(||xi'||^2 - ||xi||^2) / 2)) and stays put otherwise.
    The step is h_w = step_size * sqrt(d / E||P_w z||_w^2), with the expectation estimated
    once per base point from independent pilot draws (before, and independently of, the
    chain), so that the proposal has the optimal-scaling size step_size * sqrt(d) in the
    metric. All chains (over base points and draws) run in parallel, vectorised.

    The proposal is isotropic for the ambient (``to_tangent``) geometry, not for the
    metric: where the two differ a lot (an ill-conditioned SPD point under the
    affine-invariant metric) the slow directions mix slowly and the defaults below may
    not be enough. Like the other baselines it costs order d work per draw.

    Parameters
    ----------
    space : Manifold
    metric : RiemannianMetric
    burn_in : int, optional
        Steps before the first draw of a chain. Default ``max(500, 20 d)``: at the optimal
        scaling a coordinate's correlation decays like exp(-0.66 t) over t d steps (the
        diffusion limit of random-walk MH), so 20 d steps leave a start-up bias of the
        squared norm below d e^-26.
    thinning : int, optional
        Steps between successive draws of one chain (used when ``chains_per_point`` is
        smaller than the number of draws). Default ``5 d`` (lag correlation about 0.04).
    step_size : float, optional
        Proposal scale in metric-orthonormal units; default 2.38 / sqrt(d) (optimal
        scaling of random-walk MH for a Gaussian target, acceptance about 0.23).
    chains_per_point : int, optional
        Chains run at each base point; default (None) is one independent chain per draw.
    """

    PILOT_DRAWS = 32

    def __init__(
        self,
        space,
        metric,
        burn_in=None,
        thinning=None,
        step_size=None,
        chains_per_point=None,
    ):
        super().__init__(space, metric)
        dim = int(space.dim)
        self.burn_in = check_positive_int(
            max(500, 20 * dim) if burn_in is None else burn_in, "burn_in"
        )
        self.thinning = check_positive_int(5 * dim if thinning is None else thinning, "thinning")
        self.step_size = check_positive_finite(
            2.38 / math.sqrt(dim) if step_size is None else step_size, "step_size"
        )
        self.chains_per_point = (
            None
            if chains_per_point is None
            else check_positive_int(chains_per_point, "chains_per_point")
        )

    def _project(self, vectors, points):
        """P_w applied to numpy vectors [N, *shape] at backend points [N, *shape]."""
        return to_numpy(self.space.to_tangent(to_backend(vectors), points))

    def _squared_norms(self, vectors, points):
        """||xi||_w^2 of numpy vectors [N, *shape] at backend points [N, *shape] -> [N]."""
        return np.atleast_1d(to_numpy(self.metric.squared_norm(to_backend(vectors), points)))

    def _steps(self, base_points, rng):
        """Per-base-point proposal scale h_w from pilot draws, shape=[k]."""
        n_points = base_points.shape[0]
        pilot_points = np.broadcast_to(base_points, (self.PILOT_DRAWS,) + base_points.shape)
        pilot_points = to_backend(pilot_points.reshape((-1,) + base_points.shape[1:]))
        noise = rng.standard_normal((self.PILOT_DRAWS * n_points,) + base_points.shape[1:])
        norms = self._squared_norms(self._project(noise, pilot_points), pilot_points)
        mean_norms = norms.reshape(self.PILOT_DRAWS, n_points).mean(axis=0)
        return self.step_size * np.sqrt(int(self.space.dim) / mean_norms)

    def sample(self, base_points, n_samples, rng):
        """Run the chains; each contributes draws spaced ``thinning`` steps after burn-in.

        With c chains per base point, draw ``j * c + i`` (along the first axis) is the
        j-th draw of chain i.
        """
        n_points = base_points.shape[0]
        shape = base_points.shape[1:]
        n_chains = min(self.chains_per_point or n_samples, n_samples)
        draws_per_chain = -(-n_samples // n_chains)
        steps = np.tile(self._steps(base_points, rng), n_chains)
        steps = steps.reshape((-1,) + (1,) * len(shape))
        points = np.broadcast_to(base_points, (n_chains,) + base_points.shape)
        points = to_backend(points.reshape((-1,) + shape))
        state = np.zeros((n_chains * n_points,) + shape)
        energy = np.zeros(n_chains * n_points)
        draws = np.empty((draws_per_chain, n_chains * n_points) + shape)
        for draw in range(draws_per_chain):
            for _ in range(self.burn_in if draw == 0 else self.thinning):
                noise = rng.standard_normal(state.shape)
                proposal = state + steps * self._project(noise, points)
                new_energy = self._squared_norms(proposal, points)
                accept = np.log(rng.random(energy.shape)) < -(new_energy - energy) / 2
                state[accept] = proposal[accept]
                energy[accept] = new_energy[accept]
            draws[draw] = state
        draws = draws.reshape((draws_per_chain * n_chains, n_points) + shape)
        return draws[:n_samples]
