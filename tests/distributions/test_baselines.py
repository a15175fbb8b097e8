"""The exact baseline tangent samplers (explicit basis, Gram-Schmidt) draw the tangent
Gaussian on every family, and a metric without a registered transport falls back to
Gram-Schmidt. They draw iid vectors, checked with the exact standard errors of
``_statistics.py`` in the independent basis ``tangent_basis`` (family-wise false alarm 1e-6
per check). Each baseline's own properties are tested in the file named after its module.
"""

import numpy as np
import pytest

from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.baselines import GramSchmidt
from geomstats_dp.distributions.registry import find_transport

from ._baselines import (
    N_DRAWS,
    SIGMA,
    assert_tangent,
    batched_draws,
    cholesky_case,
    single_threaded,  # noqa: F401  (autouse fixture)
)
from ._statistics import (
    assert_gaussian_coordinates,
    assert_squared_norm_mean,
    inner_products,
    orthonormal_coordinates,
)


def _random_and_hardest(points):
    """The family's random point and its last (hardest) one, stacked [k, *shape]."""
    kinds = dict.fromkeys(["random", list(points)[-1]])
    return np.stack([points[kind] for kind in kinds])


@pytest.mark.parametrize("method", ["explicit_basis", "gram_schmidt"])
def test_exact_baselines_draw_the_tangent_gaussian(family_case, method):
    """Tangent, E||xi||^2 = d sigma^2, iid N(0, sigma^2) coordinates.

    At a random point and at the family's hardest one (ill-conditioned SPD, antipode of
    the sphere's reference, far hyperbolic points, frames orthogonal to the reference).
    """
    space, points = family_case.space, _random_and_hardest(family_case.points)
    draws = batched_draws(space, points, method, N_DRAWS)
    for index, point in enumerate(points):
        at_point = draws[:, index]
        assert_tangent(space, at_point, point)
        squared_norms = inner_products(space.metric, at_point, at_point, point)
        assert_squared_norm_mean(squared_norms, int(space.dim), SIGMA)
        assert_gaussian_coordinates(
            orthonormal_coordinates(space, space.metric, point, at_point), SIGMA
        )


def test_metric_without_transport_falls_back_to_gram_schmidt():
    space, points = cholesky_case()
    assert find_transport(space.metric) is None
    assert type(TangentGaussian(space).sampler) is GramSchmidt
    draws = batched_draws(space, points, "transport", N_DRAWS)
    for index, point in enumerate(points):
        squared_norms = inner_products(space.metric, draws[:, index], draws[:, index], point)
        assert_squared_norm_mean(squared_norms, int(space.dim), SIGMA)
        coords = orthonormal_coordinates(space, space.metric, point, draws[:, index])
        assert_gaussian_coordinates(coords, SIGMA)
