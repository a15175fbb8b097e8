"""TangentLabelRelease built alone (no estimator): its events, its stages on label-level
neighbours, and the release at a huge epsilon."""

import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets.wordnet import poincare_to_hyperboloid
from geomstats_dp.learning.mechanisms.tangent_labels import (
    BASE_LABEL,
    BASE_SHARE,
    LABELS_LABEL,
    TangentLabelRelease,
)
from geomstats_dp.testing import mechanism_case, parametrize_private_checks
from tests.conftest import shifted
from tests.learning.mechanism_support import composed_mu, gdp_delta, stages_of

SPACE = Hyperboloid(2)
ORIGIN = np.array([1.0, 0.0, 0.0])
N, D = 30, 1.5


def _targets(seed=0):
    rng = np.random.default_rng(shifted(seed))
    return poincare_to_hyperboloid(to_backend(rng.uniform(-0.4, 0.4, (N, 2))))


def _spec(base_point=None, epsilon=1.0):
    return TangentLabelRelease(SPACE, N, D, epsilon, 1e-5, base_point)


@pytest.mark.parametrize("base_point", [ORIGIN, None])
def test_events_compose_exactly_to_the_target(base_point):
    events = _spec(base_point, epsilon=2.0).events()
    assert events[-1].sensitivity == pytest.approx(2 * D, rel=1e-12)
    if base_point is None:  # the private base point: sensitivity 2D / n, its share
        base, _ = events
        assert base.sensitivity == pytest.approx(2 * D / N, rel=1e-12)
        share = (1 / base.noise_multiplier**2) / composed_mu(events) ** 2
        assert share == pytest.approx(BASE_SHARE, rel=1e-9)
    else:
        assert len(events) == 1
    assert gdp_delta(2.0, composed_mu(events)) == pytest.approx(1e-5, rel=1e-4)


def test_a_replaced_target_moves_the_coordinates_by_at_most_2d():
    """With a public base point the coordinates' query is fixed: replacing y_3 by a far
    point, by its mirror image or by a point off by rounding moves the block by <= 2D,
    and by 2D exactly for two far targets in opposite directions."""
    spec = _spec(ORIGIN)
    Y = _targets()
    far = poincare_to_hyperboloid(to_backend(np.array([[0.99, 0.0], [-0.99, 0.0]])))
    first, second = to_numpy(Y).copy(), to_numpy(Y).copy()
    first[3], second[3] = to_numpy(far[0]), to_numpy(far[1])
    stages, _ = stages_of(spec, to_backend(first), seed=0)
    mirrored = first.copy()
    mirrored[3, 1] = -first[3, 1]
    for neighbour in (second, to_numpy(Y), mirrored):
        others, _ = stages_of(spec, to_backend(neighbour), seed=0)
        moved = stages[LABELS_LABEL].distance(others[LABELS_LABEL])
        assert moved <= stages[LABELS_LABEL].sensitivity * (1 + 1e-9)
    others, _ = stages_of(spec, to_backend(second), seed=0)
    assert stages[LABELS_LABEL].distance(others[LABELS_LABEL]) == pytest.approx(
        2 * D, rel=1e-6)


def test_the_private_base_point_moves_by_at_most_its_sensitivity():
    spec = _spec(None)
    Y = to_numpy(_targets(1))
    stages, _ = stages_of(spec, to_backend(Y), seed=0)
    other = Y.copy()
    other[0] = to_numpy(poincare_to_hyperboloid(to_backend(np.array([0.999, 0.0]))))
    others, _ = stages_of(spec, to_backend(other), seed=0)
    assert stages[BASE_LABEL].distance(others[BASE_LABEL]) <= (
        stages[BASE_LABEL].sensitivity * (1 + 1e-9))


def test_a_huge_epsilon_releases_the_clipped_log_coordinates():
    Y = _targets(2)
    spec = _spec(ORIGIN, epsilon=1e9)
    _, fitted = stages_of(spec, Y, seed=0)
    logs = to_numpy(SPACE.metric.log(Y, to_backend(ORIGIN)))  # within D: not clipped
    # the accountant's noise at epsilon = 1e9 is small but not zero: 6 of its sigmas
    assert spec.sigma < 1e-3
    np.testing.assert_allclose(to_numpy(fitted["labels_"]), logs, atol=6 * spec.sigma)
    np.testing.assert_allclose(to_numpy(fitted["base_point_"]), ORIGIN)


@parametrize_private_checks([
    mechanism_case(_spec(base_point), _targets(3), name=f"TangentLabelRelease({name})",
                   skipped={"check_audit": "audited through PrivateStructuredPrediction"})
    for name, base_point in (("public base", ORIGIN), ("private base", None))])
def test_every_check_on_the_mechanism_alone(estimator, check):
    check(estimator)
