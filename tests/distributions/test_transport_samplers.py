"""The closed-form transport samplers draw N_w(mu, sigma^2) exactly, for every family.

Statistical tolerances are derived in ``_statistics.py`` (exact standard errors,
Bonferroni-corrected, family-wise false alarm 1e-6 per check). Geometric identities
(isometry, inverse, tangency) hold up to rounding: tolerances are a small multiple of
machine precision times the size of the numbers involved.
"""

import numpy as np
import pytest
from geomstats.geometry.scalar_product_metric import ScalarProductMetric

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.grassmann import GrassmannTransport
from geomstats_dp.distributions.hyperbolic import HyperboloidTransport, PoincareBallTransport
from geomstats_dp.distributions.spd import (
    SPDAffineTransport,
    SPDBuresWassersteinTransport,
    SPDEuclideanTransport,
    SPDLogEuclideanTransport,
)
from geomstats_dp.distributions.sphere import HypersphereTransport
from geomstats_dp.distributions.stiefel import StiefelTransport

from ._statistics import (
    assert_gaussian_coordinates,
    assert_squared_norm_mean,
    inner_products,
    orthonormal_coordinates,
    tangent_basis,
)
from .conftest import FAMILIES, make_case

N_DRAWS = 10_000
SIGMA = 0.7
ROUNDING = 1e-10

EXPECTED_TRANSPORT = {
    "spd_affine": SPDAffineTransport,
    "spd_bures_wasserstein": SPDBuresWassersteinTransport,
    "spd_log_euclidean": SPDLogEuclideanTransport,
    "spd_euclidean": SPDEuclideanTransport,
    "hypersphere": HypersphereTransport,
    "hyperboloid": HyperboloidTransport,
    "poincare_ball": PoincareBallTransport,
    "stiefel": StiefelTransport,
    "grassmannian": GrassmannTransport,
}


def _draw(space, base_point, n_samples, mean=None, seed=0):
    """Public-API draws at one base point, as numpy [n_samples, *shape]."""
    draws = TangentGaussian(space).sample(
        to_backend(base_point),
        n_samples=n_samples,
        sigma=SIGMA,
        mean=None if mean is None else to_backend(mean),
        random_state=seed,
    )
    return to_numpy(draws)


def _assert_tangent(space, vecs, base_point):
    """Every vector [n, *shape] is tangent at base_point (atol scaled by their sizes)."""
    scale = max(1.0, np.abs(base_point).max()) * max(1.0, np.abs(vecs).max())
    points = np.array(np.broadcast_to(base_point, vecs.shape))
    tangent = to_numpy(
        space.is_tangent(to_backend(vecs), to_backend(points), atol=ROUNDING * scale)
    )
    assert np.all(tangent.astype(bool)), f"{np.sum(~tangent.astype(bool))} vectors not tangent"


def _assert_squared_norm(space, draws, point):
    """E||xi||_w^2 = d sigma^2 in ``space.metric``."""
    squared_norms = inner_products(space.metric, draws, draws, point)
    assert_squared_norm_mean(squared_norms, int(space.dim), SIGMA)


def _assert_tangent_with_standard_norm(space, draws, point):
    _assert_tangent(space, draws, point)
    _assert_squared_norm(space, draws, point)


def _assert_standard_coordinates(space, draws, point):
    """Coordinates in an independent orthonormal basis of T_w are iid N(0, sigma^2)."""
    assert_gaussian_coordinates(orthonormal_coordinates(space, space.metric, point, draws), SIGMA)


def _transport(space):
    return TangentGaussian(space).sampler


def _gram(metric, vecs, base_point):
    """Gram matrix [d, d] of vectors [d, *shape] in ``metric`` at base_point."""
    return np.stack([inner_products(metric, vecs, vec, base_point) for vec in vecs])


def _non_reference_point(points):
    return points["random"]


@pytest.mark.parametrize("family", sorted(EXPECTED_TRANSPORT))
def test_each_family_has_its_closed_form_transport(family):
    assert type(_transport(make_case(family).space)) is EXPECTED_TRANSPORT[family]


def test_draws_are_the_tangent_gaussian(case):
    """Tangent, E||xi||^2 = d sigma^2, iid N(0, sigma^2) coordinates in an independent basis."""
    space, point = case.space, case.base_point
    draws = _draw(space, point, N_DRAWS)
    _assert_tangent_with_standard_norm(space, draws, point)
    _assert_standard_coordinates(space, draws, point)


def test_a_tangent_mean_shifts_the_coordinates(family_case):
    space = family_case.space
    point = _non_reference_point(family_case.points)
    basis = tangent_basis(space, space.metric, point)
    mean_coords = np.linspace(-1.0, 2.0, basis.shape[0])
    mean = np.tensordot(mean_coords, basis, axes=1)
    draws = _draw(space, point, N_DRAWS, mean=mean, seed=1)
    _assert_tangent(space, draws, point)
    coords = orthonormal_coordinates(space, space.metric, point, draws)
    assert_gaussian_coordinates(coords, SIGMA, mean=mean_coords)


def test_transport_is_an_isometry_inverted_by_transport_back(case):
    """The transported reference basis is orthonormal and tangent at w; back is inverse."""
    space, point = case.space, case.base_point
    transport = _transport(space)
    reference = transport.reference_basis()
    dim = int(space.dim)
    np.testing.assert_allclose(transport.to_coordinates(reference), np.eye(dim), atol=1e-15)
    moved = transport.transport(point[None], reference[:, None])[:, 0]
    _assert_tangent(space, moved, point)
    np.testing.assert_allclose(_gram(space.metric, moved, point), np.eye(dim), atol=1e-9)
    back = transport.transport_back(point[None], moved[:, None])[:, 0]
    np.testing.assert_allclose(back, reference, atol=ROUNDING)


def test_vector_transport_preserves_inner_products(family_case):
    """Between every pair of the family's base points, in both directions."""
    space = family_case.space
    transport = _transport(space)
    rng = np.random.default_rng(5)
    points = list(family_case.points.values())
    for start in points:
        vecs = transport.sample(start[None], 3, rng)[:, 0]
        for end in points:
            moved = transport.vector_transport(
                vecs, np.broadcast_to(start, vecs.shape), np.broadcast_to(end, vecs.shape)
            )
            _assert_tangent(space, moved, end)
            np.testing.assert_allclose(
                _gram(space.metric, moved, end), _gram(space.metric, vecs, start), atol=1e-9
            )


@pytest.mark.parametrize(
    "family, kinds",
    [
        ("spd_affine", ["random", "ill_conditioned"]),
        ("spd_log_euclidean", ["random", "ill_conditioned"]),
        ("spd_bures_wasserstein", ["random"]),
        ("hypersphere", ["random", "near_antipode"]),
        ("hyperboloid", ["random", "far"]),
    ],
)
def test_transport_is_geomstats_parallel_transport_from_the_reference(family, kinds):
    """Sphere points with w_0 < 0 are reached from the pole -e1; Bures-Wasserstein is
    checked against geomstats' RK4 integration (40 steps: error far below 1e-6)."""
    case = make_case(family)
    space = case.space
    transport = _transport(space)
    vecs = transport.from_coordinates(np.random.default_rng(6).normal(size=(2, int(space.dim))))
    reference = case.points["reference"]
    steps = {"n_steps": 40} if family == "spd_bures_wasserstein" else {}
    for kind in kinds:
        point = case.points[kind]
        pole = reference * np.sign(point[0]) if family == "hypersphere" else reference
        expected = space.metric.parallel_transport(
            to_backend(vecs),
            to_backend(np.array(np.broadcast_to(pole, vecs.shape))),
            end_point=to_backend(np.array(np.broadcast_to(point, vecs.shape))),
            **steps,
        )
        ours = transport.transport(point[None], vecs[:, None])[:, 0]
        np.testing.assert_allclose(ours, to_numpy(expected), atol=1e-6 * np.abs(ours).max())


def test_scaled_metric_gets_noise_standard_in_the_scaled_metric(family_case):
    """scale * metric: the draws shrink by 1/sqrt(scale) (growing them would fail too)."""
    space = family_case.space
    point = _non_reference_point(family_case.points)
    space.equip_with_metric(3.0 * space.metric)
    assert isinstance(space.metric, ScalarProductMetric)
    draws = _draw(space, point, N_DRAWS, seed=2)
    _assert_squared_norm(space, draws, point)
    _assert_standard_coordinates(space, draws, point)


def test_larger_spaces(large_case):
    """Smoke test in larger dimensions: tangent, squared norm, exact inverse."""
    space, point = large_case.space, large_case.base_point
    draws = _draw(space, point, 200, seed=3)
    _assert_tangent_with_standard_norm(space, draws, point)
    transport = _transport(space)
    coords = transport.to_coordinates(transport.transport_back(point[None], draws[:, None]))
    redrawn = transport.transport(point[None], transport.from_coordinates(coords))
    np.testing.assert_allclose(redrawn[:, 0], draws, atol=ROUNDING * np.abs(draws).max())


@pytest.mark.backend_independent
def test_every_family_is_covered():
    assert set(EXPECTED_TRANSPORT) | {"euclidean", "matrices"} == set(FAMILIES)
