"""``orthonormal_basis``: a metric-orthonormal basis of the tangent space by Gram-Schmidt,
on every family and on a metric without a registered transport."""

import pytest

from geomstats_dp._backend import to_backend
from geomstats_dp.distributions.baselines import orthonormal_basis

from ._baselines import (
    assert_orthonormal_tangent_basis,
    cholesky_case,
    single_threaded,  # noqa: F401  (autouse fixture)
)


def test_orthonormal_basis_is_tangent_and_orthonormal(case):
    """At every family's hard points too (ill-conditioned SPD, antipode, far points)."""
    basis = orthonormal_basis(case.space, case.space.metric, to_backend(case.base_point))
    assert_orthonormal_tangent_basis(case.space, basis, case.base_point)


def test_orthonormal_basis_without_a_registered_transport():
    space, points = cholesky_case()
    for point in points:
        basis = orthonormal_basis(space, space.metric, point)
        assert_orthonormal_tangent_basis(space, basis, point)


def test_orthonormal_basis_rejects_a_batch():
    space, points = cholesky_case()
    with pytest.raises(ValueError, match="base_point must have shape"):
        orthonormal_basis(space, space.metric, points)
