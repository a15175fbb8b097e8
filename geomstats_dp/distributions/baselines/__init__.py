"""Baseline tangent samplers of Utpala et al. (2023): explicit basis, Gram-Schmidt, MCMC.

They draw the same law N_w(0, I) as the closed-form transports, at a cost of order d (the
intrinsic dimension) basis vectors or Markov-chain steps per base point; ``GramSchmidt`` is
also the generic fallback for metrics without a registered transport.
"""

from geomstats_dp.distributions.baselines.basis import BasisSampler
from geomstats_dp.distributions.baselines.explicit_basis import ExplicitBasis
from geomstats_dp.distributions.baselines.gram_schmidt import GramSchmidt, orthonormal_basis
from geomstats_dp.distributions.baselines.metropolis_hastings import MetropolisHastings

__all__ = [
    "BasisSampler",
    "ExplicitBasis",
    "GramSchmidt",
    "MetropolisHastings",
    "orthonormal_basis",
]
