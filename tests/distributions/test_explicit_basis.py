"""``ExplicitBasis``: the transport's implicit basis, built explicitly at each base point."""

import numpy as np
import pytest

from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.baselines import ExplicitBasis
from geomstats_dp.distributions.registry import find_transport
from tests.conftest import shifted

from ._baselines import (
    ROUNDING,
    assert_orthonormal_tangent_basis,
    cholesky_case,
    single_threaded,  # noqa: F401  (autouse fixture)
)


def test_explicit_basis_is_the_transported_basis(family_case):
    """Coordinates combined in the explicit basis equal their transport (linearity)."""
    space = family_case.space
    transport = find_transport(space.metric)(space, space.metric)
    explicit = ExplicitBasis(transport)
    coefficients = np.random.default_rng(shifted(4)).normal(size=(5, int(space.dim)))
    for point in family_case.points.values():
        basis = explicit.basis(point)
        assert_orthonormal_tangent_basis(space, basis, point)
        moved = transport.transport(point[None], transport.from_coordinates(coefficients)[:, None])
        np.testing.assert_allclose(
            np.tensordot(coefficients, basis, axes=1), moved[:, 0], atol=ROUNDING
        )


def test_explicit_basis_needs_a_transport():
    space, _ = cholesky_case()
    with pytest.raises(ValueError, match="explicit_basis"):
        TangentGaussian(space, method="explicit_basis")
