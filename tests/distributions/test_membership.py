"""Closed-form membership and tangency tests agree with geomstats' ``belongs``/``is_tangent``.

Every family's checks (one pass over the point; a randomised probe on the Grassmannian)
are compared with geomstats on the conftest base points, on points pushed off the space
by a perturbation far above atol, on far-away ambient points, and on tangent vectors and
perturbed ones.
"""

import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian, TangentSampler

from .conftest import FAMILIES, LARGE_FAMILIES, make_case

ATOL = 1e-6
PERTURBATION = 1e-3
CLOSED_FORM = sorted(set(FAMILIES) - {"euclidean", "matrices"})


def _geomstats_belongs(space, points):
    return np.atleast_1d(to_numpy(space.belongs(to_backend(points), atol=ATOL))).astype(bool)


def _geomstats_tangent(space, vectors, points):
    found = space.is_tangent(to_backend(vectors), to_backend(points), atol=ATOL)
    return np.atleast_1d(to_numpy(found)).astype(bool)


def _checker(space):
    checker = TangentGaussian(space)._checker
    assert type(checker).belongs is not TangentSampler.belongs  # a closed form
    return checker


def _candidates(points, rng):
    """On-space points, perturbed ones (off by 1e-3) and far-away ambient points."""
    on = np.stack(list(points.values()))
    perturbed = on + PERTURBATION * rng.standard_normal(on.shape)
    far = 10.0 * rng.standard_normal(on.shape)
    return np.concatenate([on, perturbed, far])


@pytest.mark.parametrize("family", CLOSED_FORM)
def test_belongs_agrees_with_geomstats(family):
    case = make_case(family)
    rng = np.random.default_rng(0)
    candidates = _candidates(case.points, rng)
    if family == "hyperboloid":  # geomstats accepts the lower sheet, see the next test
        candidates = candidates[candidates[:, 0] > 0]
    ours = _checker(case.space).belongs(candidates, ATOL)
    np.testing.assert_array_equal(ours, _geomstats_belongs(case.space, candidates))
    assert ours[: len(case.points)].all()
    if family != "poincare_ball":  # a 1e-3 move stays inside the open ball
        assert not ours[len(case.points) :].any()


@pytest.mark.parametrize("family", sorted(LARGE_FAMILIES))
def test_belongs_agrees_with_geomstats_in_larger_dimensions(family):
    make_space, point = LARGE_FAMILIES[family]
    space = make_space()
    candidates = _candidates({"hard": point}, np.random.default_rng(1))
    ours = _checker(space).belongs(candidates, ATOL)
    np.testing.assert_array_equal(ours, _geomstats_belongs(space, candidates))


def test_hyperboloid_lower_sheet_is_rejected():
    """geomstats' test ignores the sheet; the transport from e1 needs w_0 > 0."""
    space = Hyperboloid(3)
    lower = -np.array([[np.cosh(1.0), np.sinh(1.0), 0.0, 0.0]])
    assert _geomstats_belongs(space, lower).all()
    assert not _checker(space).belongs(lower, ATOL).any()
    with pytest.raises(ValueError, match="not on Hyperboloid"):
        TangentGaussian(space).sample(to_backend(lower[0]), random_state=0)


@pytest.mark.parametrize("family", CLOSED_FORM)
def test_is_tangent_agrees_with_geomstats(family):
    case = make_case(family)
    rng = np.random.default_rng(2)
    points = np.stack(list(case.points.values()))
    ambient = rng.standard_normal(points.shape)  # not symmetric: off Sym(m) for SPD
    projected = ambient
    if family.startswith("spd") or family == "grassmannian":
        projected = ambient + np.swapaxes(ambient, -1, -2)  # the embedding is Sym(m)
    tangent = to_numpy(case.space.to_tangent(to_backend(projected), to_backend(points)))
    off = tangent + PERTURBATION * rng.standard_normal(points.shape)
    vectors = np.concatenate([tangent, off, ambient])
    at = np.concatenate([points] * 3)
    ours = _checker(case.space).is_tangent(vectors, at, ATOL)
    np.testing.assert_array_equal(ours, _geomstats_tangent(case.space, vectors, at))
    assert ours[: len(points)].all()
    if family != "poincare_ball":  # every vector is tangent to the open ball
        assert not ours[len(points) :].any()
