"""The metric-class registry: MRO lookup, subspaces sharing a metric class, validation."""

import numpy as np
import pytest
from geomstats.geometry.symmetric_matrices import SymmetricMatrices
from geomstats.geometry.matrices import Matrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.baselines import GramSchmidt
from geomstats_dp.distributions.euclidean import EuclideanTransport


def test_subspace_sharing_the_frobenius_metric_falls_back_to_gram_schmidt():
    space = SymmetricMatrices(3)
    sampler = TangentGaussian(space)
    assert isinstance(sampler.sampler, GramSchmidt)
    assert isinstance(TangentGaussian(Matrices(2, 3)).sampler, EuclideanTransport)
    draws = to_numpy(sampler.sample(to_backend(np.eye(3)), n_samples=4000, random_state=0))
    assert np.allclose(draws, np.swapaxes(draws, 1, 2))
    # E||xi||_F^2 = d = 6 for a standard Gaussian on Sym(3); its variance is 2 d.
    squared = (draws**2).sum(axis=(1, 2))
    assert abs(squared.mean() - 6) < 5 * np.sqrt(12 / 4000)


def test_validate_false_skips_the_membership_check_only():
    from geomstats.geometry.hypersphere import Hypersphere

    space = Hypersphere(2)
    off = to_backend(np.array([0.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match="not on Hypersphere"):
        TangentGaussian(space).sample(off, random_state=0)
    TangentGaussian(space, validate=False).sample(off, random_state=0)
    with pytest.raises(ValueError, match="non-finite"):
        TangentGaussian(space, validate=False).sample(
            to_backend(np.array([np.nan, 0.0, 1.0])), random_state=0
        )
