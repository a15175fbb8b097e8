"""Every agent draws fresh noise in every round: i.i.d. N(0, sigma^2 I) across rounds.

On R^3 the tangent noise does not depend on the base point, so the draws an agent makes in
its T rounds, divided by the calibrated std, must be T independent standard normal vectors:
their spread about their mean is chi-square with 3 (T - 1) degrees of freedom (zero if an
agent reused its noise), and two agents' draws are uncorrelated.
"""

import numpy as np
from geomstats.geometry.euclidean import Euclidean
from scipy import stats

from geomstats_dp._backend import to_numpy
from geomstats_dp.federated import PriRFed
from geomstats_dp.federated import local as local_module

N_ROUNDS, DIM = 60, 3
LEVEL = 1e-6  # two-sided, per check


def test_each_agent_draws_independent_noise_every_round(monkeypatch):
    draws = []
    inner = local_module.TangentGaussian

    class Recording(inner):
        def sample(self, base_point, n_samples=1, sigma=1.0, random_state=None):
            noise = super().sample(base_point, n_samples, sigma=sigma,
                                   random_state=random_state)
            draws.append(to_numpy(noise).reshape(DIM) / sigma)
            return noise

    monkeypatch.setattr(local_module, "TangentGaussian", Recording)
    rng = np.random.default_rng(0)
    data = [rng.normal(size=(12, DIM)), rng.normal(size=(15, DIM))]
    PriRFed(Euclidean(DIM), epsilon=1.0, n_rounds=N_ROUNDS, n_sampled=2, local_steps=1,
            local_method="rgd", clip_norm=1.0, step_size=0.1, init_point=np.zeros(DIM),
            random_state=11).fit(data)
    # agents are trained in index order within a round: draws alternate 0, 1, 0, 1, ...
    per_agent = np.array(draws).reshape(N_ROUNDS, 2, DIM).transpose(1, 0, 2)
    dof = DIM * (N_ROUNDS - 1)
    low, high = stats.chi2.ppf([LEVEL / 2, 1 - LEVEL / 2], dof)
    for z in per_agent:
        spread = float(np.sum((z - z.mean(axis=0)) ** 2))
        assert low < spread < high, (spread, low, high)
    # across agents: the N_ROUNDS * DIM products have mean 0 and variance 1
    products = (per_agent[0] * per_agent[1]).ravel()
    bound = stats.norm.ppf(1 - LEVEL / 2) / np.sqrt(products.size)
    assert abs(products.mean()) < bound
