"""Clipping in the Riemannian norm: norms <= C after, vectors below C unchanged."""

import numpy as np
import pytest

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import (
    FullBatch,
    SquaredDistanceLoss,
    clip_tangent_vectors,
    minimize,
)
from geomstats_dp.optim.clipping import clipped_sum_sensitivity

from .data import MEAN_SPACES, cloud, random_tangent
from .spaces import SPACE_FACTORIES

CLIP_NORM = 1.0


@pytest.mark.parametrize("name", ["spd_affine", "sphere", "hyperboloid", "poincare_ball"])
def test_clipped_norms_are_at_most_c_and_short_vectors_are_unchanged(name):
    space = SPACE_FACTORIES[name]()
    rng = np.random.default_rng(60)
    point = cloud(space, 1, radius=0.8, seed=61)[0]
    lengths = np.array([0.1, 0.5, 0.999, 1.0, 1.5, 4.0, 30.0])
    vectors = random_tangent(space, point, lengths, rng)
    clipped = clip_tangent_vectors(space.metric, vectors, point, CLIP_NORM)
    norms = to_numpy(space.metric.norm(clipped, point))
    np.testing.assert_allclose(norms, np.minimum(lengths, CLIP_NORM), rtol=1e-10)
    short = lengths <= CLIP_NORM
    np.testing.assert_array_equal(to_numpy(clipped)[short], to_numpy(vectors)[short])
    # long vectors keep their direction: clipped = (C / |v|) v
    ratio = (CLIP_NORM / lengths[~short]).reshape((-1,) + (1,) * len(space.shape))
    np.testing.assert_allclose(to_numpy(clipped)[~short], ratio * to_numpy(vectors)[~short],
                               rtol=1e-10, atol=1e-14)


def test_non_finite_vectors_become_zero():
    space = SPACE_FACTORIES["sphere"]()
    point = to_backend(np.array([1.0, 0, 0, 0]))
    vectors = to_backend(np.array([[0, np.nan, 0, 0], [0, 0.5, 0, 0]]))
    clipped = to_numpy(clip_tangent_vectors(space.metric, vectors, point, CLIP_NORM))
    np.testing.assert_array_equal(clipped, [[0, 0, 0, 0], [0, 0.5, 0, 0]])


@pytest.mark.parametrize("name", sorted(MEAN_SPACES))
def test_a_clipped_step_moves_by_step_times_c(name):
    """One sample at distance 2 > C: the first step moves eta * C along the geodesic."""
    space = MEAN_SPACES[name]()
    sample = cloud(space, 1, radius=0.01, seed=62, offset=2.0)
    result = minimize(SquaredDistanceLoss(space), sample, FullBatch(0.7, 0), 1, 0.5,
                      keep_iterates=True)
    start = result.iterates[0]
    assert float(space.metric.dist(result.point, start)) == pytest.approx(0.35, rel=1e-8)


def _clipped_mean(vectors, clip_norm, denominator):
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors * np.minimum(1, clip_norm / norms)).sum(axis=0) / denominator


@pytest.mark.parametrize(("adjacency", "per_record"), [("replace_one", 2.0),
                                                       ("add_remove", 1.0)])
def test_sensitivity_is_the_largest_move_of_a_clipped_mean(adjacency, per_record):
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((10, 3)) * 5
    clip_norm, n = 1.5, len(vectors)
    bound = clipped_sum_sensitivity(clip_norm, n, adjacency=adjacency)
    assert bound == pytest.approx(per_record * clip_norm / n)
    # the worst neighbour: a record at the bound replaced by its opposite, or removed
    worst = vectors.copy()
    worst[0] = -vectors[0]
    neighbour = worst if adjacency == "replace_one" else vectors[1:]
    moved = np.linalg.norm(_clipped_mean(vectors, clip_norm, n)
                           - _clipped_mean(neighbour, clip_norm, n))
    assert moved == pytest.approx(bound)
    for _ in range(50 if adjacency == "replace_one" else 0):  # replacements: no more
        other = vectors.copy()
        other[0] = rng.standard_normal(3) * 100
        assert np.linalg.norm(_clipped_mean(vectors, clip_norm, n)
                              - _clipped_mean(other, clip_norm, n)) <= bound + 1e-12


def test_sensitivity_scales_with_the_weight_factor_and_the_multiplier():
    assert clipped_sum_sensitivity(2.0, 8, factor=3.0) == pytest.approx(2 * 2 * 3 / 8)
    assert clipped_sum_sensitivity(2.0, 8, multiplier=5.0) == pytest.approx(5 * 4 / 8)
