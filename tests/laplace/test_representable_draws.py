"""Draws that float64 cannot represent on the space raise instead of leaving it."""

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import RiemannianLaplace


def test_spd_draws_beyond_double_precision_raise_and_moderate_ones_are_spd():
    space = SPDMatrices(2)
    identity = to_backend(np.eye(2))
    draws = to_numpy(RiemannianLaplace(space, identity, 0.3).sample(500, random_state=0))
    assert np.all(np.linalg.eigvalsh(draws) > 0)
    # near the existence limit sqrt(2) the log-eigenvalue gaps exceed 37 (e^37 > 1e16)
    with pytest.raises(ValueError, match="beyond double precision"):
        RiemannianLaplace(space, identity, 1.3333).sample(2000, random_state=0)
