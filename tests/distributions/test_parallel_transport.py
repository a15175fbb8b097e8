"""The parallel-transport sampler draws N_w(0, sigma^2) exactly on SO(n), SE(n), the
pre-shape space and Kendall's shape space (no registered closed-form transport).

Statistical tolerances come from ``_statistics.py`` (exact standard errors, Bonferroni,
family-wise false alarm 1e-6 per check). Geometric identities hold up to rounding for the
closed forms; Kendall's transport is geomstats' RK4 integration, isometric to about 1e-11.

The laws of the draws are checked once, on numpy: a draw is seeded numpy coefficients in
the transported basis, and both (the basis orthonormal and tangent, the combination) are
checked on every backend.
"""

import math
from types import SimpleNamespace

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.full_rank_correlation_matrices import (
    EuclideanCholeskyMetric,
    FullRankCorrelationMatrices,
)
from geomstats.geometry.invariant_metric import InvariantMetric
from geomstats.geometry.open_hemisphere import OpenHemisphere
from geomstats.geometry.poincare_half_space import PoincareHalfSpace
from geomstats.geometry.pre_shape import PreShapeSpace
from geomstats.geometry.special_euclidean import SpecialEuclidean
from geomstats.geometry.special_orthogonal import SpecialOrthogonal

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.baselines import ExplicitBasis, GramSchmidt
from geomstats_dp.distributions.parallel_transport import (
    ParallelTransportSampler,
    has_exact_parallel_transport,
)
from tests.conftest import shifted

from ._statistics import (
    assert_gaussian_coordinates,
    assert_squared_norm_mean,
    critical_z,
    inner_products,
    orthonormal_coordinates,
)

N_DRAWS = 10_000
SIGMA = 0.7
ISOMETRY_ATOL = {"kendall": 1e-9, "kendall3d": 1e-9}  # RK4 integration; the closed forms get 1e-12


def _rotation(size, seed, angle=None):
    """A random rotation of R^size; with ``angle``, the rotation by it in a random plane."""
    rng = np.random.default_rng([7, seed])
    q, r = np.linalg.qr(rng.normal(size=(size, size)))
    q = q * np.sign(np.diag(r))
    q[:, 0] *= np.sign(np.linalg.det(q))
    if angle is None:
        return q
    plane = np.eye(size)
    plane[:2, :2] = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
    return q @ plane @ q.T


def _rigid(size, seed, angle=None):
    point = np.eye(size + 1)
    point[:size, :size] = _rotation(size, seed, angle)
    point[:size, size] = np.random.default_rng([8, seed]).normal(size=size)
    return point


def _kendall(ambient_dim=2):
    space = PreShapeSpace(5, ambient_dim, equip=True)
    space.equip_with_group_action("rotations")
    space.equip_with_quotient()
    return space.quotient


def _pre_shape(k_landmarks, ambient_dim, seed):
    config = np.random.default_rng([9, seed]).normal(size=(k_landmarks, ambient_dim))
    centred = config - config.mean(axis=0)
    return centred / np.linalg.norm(centred)


def _horizontal_view(space):
    """Kendall's shape space for ``tangent_basis``: its dimension (pre-shape minus the
    rotations) and geomstats' horizontal projection (test-side, not the sampler's)."""
    bundle = space.metric._fiber_bundle
    ambient_dim = space.shape[1]
    return SimpleNamespace(
        shape=space.shape,
        dim=int(space.dim) - ambient_dim * (ambient_dim - 1) // 2,
        to_tangent=lambda vec, point: bundle.horizontal_projection(
            space.to_tangent(vec, point), point
        ),
    )


# name -> (space factory, base points: a random one first, then the hard ones)
SPACES = {
    "so3": (lambda: SpecialOrthogonal(3),
            {"random": _rotation(3, 0), "angle_pi": _rotation(3, 1, math.pi),
             "near_pi": _rotation(3, 2, math.pi - 1e-6)}),
    "so4": (lambda: SpecialOrthogonal(4), {"random": _rotation(4, 3),
                                           "angle_pi": _rotation(4, 4, math.pi)}),
    "se2": (lambda: SpecialEuclidean(2),
            {"random": _rigid(2, 5), "angle_pi": _rigid(2, 6, math.pi)}),
    "se3": (lambda: SpecialEuclidean(3), {"random": _rigid(3, 7)}),
    "pre_shape": (lambda: PreShapeSpace(6, 3), {"random": _pre_shape(6, 3, 0)}),
    # a pullback of the sphere (its image), the other kind of PullbackDiffeoMetric
    "open_hemisphere": (lambda: OpenHemisphere(3),
                        {"random": np.array([0.3, -0.5, 0.7, 0.1]) / math.sqrt(0.84)}),
    "kendall": (_kendall, {"random": _pre_shape(5, 2, 1)}),
    # in 3-d the horizontal spaces differ along a fiber: the aligned representative the
    # geodesic reaches must be rotated back onto the given one
    "kendall3d": (lambda: _kendall(3), {"random": _pre_shape(5, 3, 2)}),
}
CASES = [  # Kendall's transport integrates an ODE (2 s a case): slow, and 3-d only (the
    # 2-d space is covered by the law test)
    pytest.param(name, kind, id=f"{name}-{kind}",
                 marks=[pytest.mark.slow] if name.startswith("kendall") else [])
    for name, (_, points) in SPACES.items()
    if name != "kendall"
    for kind in points
]


def _space(name):
    return SPACES[name][0]()


def _dim(name, space):
    return _horizontal_view(space).dim if name.startswith("kendall") else int(space.dim)


def _basis_space(name, space):
    return _horizontal_view(space) if name.startswith("kendall") else space


def _gram(metric, vecs, point):
    return np.stack([inner_products(metric, vecs, vec, point) for vec in vecs])


def _assert_tangent(space, vecs, point, atol=1e-9):
    points = np.array(np.broadcast_to(point, vecs.shape))
    tangent = to_numpy(space.is_tangent(to_backend(vecs), to_backend(points), atol=atol))
    assert np.all(tangent.astype(bool)), f"{np.sum(~tangent.astype(bool))} vectors not tangent"


@pytest.mark.parametrize("name", sorted(SPACES))
def test_spaces_without_closed_form_get_the_parallel_transport_sampler(name):
    space = _space(name)
    assert type(TangentGaussian(space).sampler) is ParallelTransportSampler
    assert type(TangentGaussian(space, "gram_schmidt").sampler) is GramSchmidt
    assert type(TangentGaussian(space, "explicit_basis").sampler) is ExplicitBasis


def test_a_space_without_a_basis_at_the_reference_still_builds():
    """Correlation matrices: the pullback metric transports exactly, but on numpy geomstats'
    ``to_tangent`` spans 1 of 3 dimensions, so no basis exists at the reference; the
    sampler is not chosen there (Gram-Schmidt, which raises only when sampling)."""
    space = FullRankCorrelationMatrices(3, equip=False)
    space.equip_with_metric(EuclideanCholeskyMetric)
    assert has_exact_parallel_transport(space.metric)
    sampler = TangentGaussian(space).sampler
    assert type(sampler) in (GramSchmidt, ParallelTransportSampler)


def test_metrics_whose_transport_is_an_ode_keep_gram_schmidt():
    """A left-invariant, not bi-invariant, metric on SO(3) (an ODE in the Lie algebra) and
    the Poincare half-space (pulled back from a ball transported by a ladder scheme)."""
    rotations = SpecialOrthogonal(3)
    rotations.equip_with_metric(InvariantMetric,
                                metric_mat_at_identity=gs.array(np.diag([1.0, 2.0, 3.0])))
    for space in (rotations, PoincareHalfSpace(2)):
        assert not has_exact_parallel_transport(space.metric)
        assert type(TangentGaussian(space).sampler) is GramSchmidt


@pytest.mark.parametrize("name, kind", CASES)
def test_transported_basis_is_orthonormal_tangent_and_inverted_by_transport_back(name, kind):
    """Includes rotations by pi from the reference (the cut locus: the detour is taken)."""
    space = _space(name)
    sampler = TangentGaussian(space).sampler
    point = SPACES[name][1][kind]
    reference = sampler.reference_basis()
    dim = _dim(name, space)
    assert reference.shape == (dim,) + tuple(space.shape)
    np.testing.assert_allclose(_gram(space.metric, reference, sampler.reference), np.eye(dim),
                               atol=1e-12)
    coefficients = np.random.default_rng(shifted(12)).normal(size=(3, dim))
    np.testing.assert_allclose(sampler.to_coordinates(sampler.from_coordinates(coefficients)),
                               coefficients, atol=1e-12)
    moved = sampler.transport(point[None], reference[:, None])[:, 0]
    _assert_tangent(space, moved, point)
    atol = ISOMETRY_ATOL.get(name, 1e-12)
    np.testing.assert_allclose(_gram(space.metric, moved, point), np.eye(dim), atol=atol)
    back = sampler.transport_back(point[None], moved[:, None])[:, 0]
    np.testing.assert_allclose(back, reference, atol=atol)


@pytest.mark.parametrize("name", ["so3", "so4", "se2", "se3"])
def test_schur_log_is_geomstats_log(name):
    """The log computed by real Schur decomposition matches geomstats' (scipy's logm)."""
    space = _space(name)
    points = SPACES[name][1]
    start, end = points["random"], _rigid(space.shape[0] - 1, 11) if name.startswith(
        "se") else _rotation(space.shape[0], 11)
    sampler = TangentGaussian(space).sampler
    ours, valid = sampler._log(end[None], start[None])
    expected = to_numpy(space.metric.log(to_backend(end), to_backend(start)))
    assert valid.all()
    np.testing.assert_allclose(ours[0], expected, atol=1e-10)


def test_rotation_by_pi_is_reached_through_the_second_reference():
    space = _space("so3")
    sampler = TangentGaussian(space).sampler
    points = np.stack([SPACES["so3"][1][kind] for kind in ("random", "angle_pi", "near_pi")])
    starts = np.broadcast_to(sampler.reference, points.shape)
    _, reached = sampler._move(sampler.reference_basis()[:, None].repeat(3, axis=1), starts, points)
    assert reached.tolist() == [True, False, True]


def test_a_point_at_the_cut_locus_of_both_references_raises():
    """A half-turn about an axis orthogonal to the second reference's rotation axis is a
    rotation by pi from both references (a half-turn composed with a rotation about an
    orthogonal axis is a half-turn)."""
    space = _space("so3")
    sampler = TangentGaussian(space).sampler
    skew = sampler.second_reference - sampler.second_reference.T  # 2 sin(angle) [b]_x
    axis_b = np.array([skew[2, 1], skew[0, 2], skew[1, 0]])
    axis_a = np.cross(axis_b, [1.0, 0.0, 0.0])
    axis_a /= np.linalg.norm(axis_a)
    half_turn = 2 * np.outer(axis_a, axis_a) - np.eye(3)
    basis = sampler.reference_basis()[:, None]
    with pytest.raises(ValueError, match=r"indices \[0\] are at the cut locus of both"):
        sampler.transport(half_turn[None], basis)


@pytest.mark.parametrize("n_samples", [2, 40])
def test_draws_combine_the_seeded_coefficients_with_the_transported_basis(n_samples):
    """Both routes (transporting the draws, or the basis when n_samples >= d) give the same
    vectors: the seeded N(0, 1) coefficients in the transported orthonormal basis."""
    space = _space("so4")
    sampler = TangentGaussian(space).sampler
    points = np.stack(list(SPACES["so4"][1].values()))
    draws = sampler.sample(points, n_samples, np.random.default_rng(shifted(3)))
    coefficients = np.random.default_rng(shifted(3)).standard_normal((n_samples, 2, 6))
    basis = sampler.transport(points, sampler.reference_basis()[:, None].repeat(2, axis=1))
    expected = np.einsum("nkd,dkij->nkij", coefficients, basis)
    np.testing.assert_allclose(draws, expected, atol=1e-12)


def _draw(space, point, method="transport", seed=0):
    draws = TangentGaussian(space, method).sample(to_backend(point), n_samples=N_DRAWS,
                                                  sigma=SIGMA, random_state=shifted(seed))
    return to_numpy(draws)


@pytest.mark.slow
@pytest.mark.backend_independent
@pytest.mark.parametrize("name, kind", [("so3", "random"), ("so3", "angle_pi"),
                                        ("se2", "random"), ("pre_shape", "random"),
                                        ("open_hemisphere", "random"),
                                        ("kendall", "random"), ("kendall3d", "random")])
def test_draws_are_the_tangent_gaussian(name, kind):
    """Tangent, E||xi||^2 = d sigma^2, iid N(0, sigma^2) coordinates in an orthonormal basis
    of T_w built independently (eigen-decomposition of a Gram matrix at w)."""
    space = _space(name)
    point = SPACES[name][1][kind]
    draws = _draw(space, point)
    _assert_tangent(space, draws, point, atol=1e-8)
    squared_norms = inner_products(space.metric, draws, draws, point)
    assert_squared_norm_mean(squared_norms, _dim(name, space), SIGMA)
    coords = orthonormal_coordinates(_basis_space(name, space), space.metric, point, draws)
    assert_gaussian_coordinates(coords, SIGMA)


@pytest.mark.slow
@pytest.mark.backend_independent
@pytest.mark.parametrize("name", ["so3", "se3"])
def test_draws_agree_in_law_with_the_gram_schmidt_fallback(name):
    """Two-sample test of the coordinate second moments: each entry of the difference of
    the two sample covariances has standard error sigma^2 sqrt(2 (1 + delta_ab) / n)."""
    space = _space(name)
    point = SPACES[name][1]["random"]
    second_moments = []
    for method, seed in (("transport", 4), ("gram_schmidt", 5)):
        draws = _draw(space, point, method, seed)
        coords = orthonormal_coordinates(space, space.metric, point, draws)
        second_moments.append(coords.T @ coords / N_DRAWS)
    dim = int(space.dim)
    std_errors = SIGMA**2 * np.sqrt(2 * (1 + np.eye(dim)) / N_DRAWS)
    z_scores = np.abs(second_moments[0] - second_moments[1]) / std_errors
    assert z_scores.max() < critical_z(dim * (dim + 1) // 2), z_scores
