"""ExtrinsicLabelRelease built alone (no estimator): its events, its stages on label-level
neighbours, its public share rule and the release at a huge epsilon."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning.mechanisms.extrinsic_labels import (
    MEAN_LABEL,
    TARGETS_LABEL,
    ExtrinsicLabelRelease,
    mean_share,
)
from geomstats_dp.privacy import calibrate_gaussian
from geomstats_dp.testing import mechanism_case, parametrize_private_checks
from tests.conftest import shifted
from tests.learning.mechanism_support import composed_mu, gdp_delta, stages_of

SPACE = Hypersphere(2)
N = 30


def _targets(seed=0):
    rng = np.random.default_rng(shifted(seed))
    rows = rng.standard_normal((N, 3)) + np.array([2.0, 0.0, 0.0])
    return to_backend(rows / np.linalg.norm(rows, axis=1, keepdims=True))


def _spec(epsilon=1.0, share=None):
    return ExtrinsicLabelRelease(SPACE, N, epsilon, 1e-5, share)


@pytest.mark.parametrize("epsilon", [0.1, 2.0, 50.0])
def test_events_compose_exactly_to_the_target_with_the_public_share(epsilon):
    spec = _spec(epsilon)
    mean, targets = spec.events()
    assert mean.sensitivity == pytest.approx(2 / N, rel=1e-12)
    assert targets.sensitivity == pytest.approx(2.0, rel=1e-12)
    share = (1 / mean.noise_multiplier**2) / composed_mu((mean, targets)) ** 2
    # the rule, recomputed here: r = (d + 1) (2 z)^2 / n, share r within [0.1, 0.9]
    ratio = 3 * (2 * calibrate_gaussian(epsilon, 1e-5, 1)) ** 2 / N
    assert share == pytest.approx(min(0.9, max(0.1, ratio)), rel=1e-9)
    assert gdp_delta(epsilon, composed_mu((mean, targets))) == pytest.approx(1e-5, rel=1e-4)


def test_the_mean_gets_more_of_the_budget_as_the_noise_grows():
    shares = [mean_share(N, 2, epsilon, 1e-5) for epsilon in (100.0, 10.0, 1.0, 0.1)]
    assert shares[0] == 0.1 and shares[-1] == 0.9
    assert np.all(np.diff(shares) >= 0) and shares[1] < shares[2]
    # more targets, less noise per target: a smaller share at the same epsilon
    assert mean_share(10 * N, 2, 1.0, 1e-5) < mean_share(N, 2, 1.0, 1e-5)


def test_a_replaced_target_moves_each_stage_by_at_most_its_sensitivity():
    """Replacing y_3 by its antipode moves the targets' block by 2 exactly and the mean
    by 2 / n exactly: the stated sensitivities are attained."""
    spec = _spec(1.0)
    Y = to_numpy(_targets(1))
    other = Y.copy()
    other[3] = -Y[3]
    stages, _ = stages_of(spec, to_backend(Y), seed=0)
    others, _ = stages_of(spec, to_backend(other), seed=0)
    for label, expected in ((TARGETS_LABEL, 2.0), (MEAN_LABEL, 2 / N)):
        moved = stages[label].distance(others[label])
        assert moved <= stages[label].sensitivity * (1 + 1e-9)
        assert moved == pytest.approx(expected, rel=1e-9)


def test_a_target_off_the_sphere_by_rounding_counts_as_norm_one():
    spec = _spec(1.0)
    Y = to_numpy(_targets(2))
    longer = Y.copy()
    longer[0] *= 1 + 2e-7  # within the tolerance of the check
    stages, _ = stages_of(spec, to_backend(longer), seed=0)
    statistic = np.asarray(to_numpy(stages[TARGETS_LABEL].statistic))
    assert np.linalg.norm(statistic[0]) == pytest.approx(1.0, abs=1e-12)


def test_a_huge_epsilon_releases_the_targets_and_their_mean():
    Y = _targets(3)
    spec = _spec(1e9)
    _, fitted = stages_of(spec, Y, seed=0)
    sigma = spec.events()[0].noise_std
    assert spec.sigma < 1e-3 and sigma < 1e-3
    np.testing.assert_allclose(to_numpy(fitted["labels_"]), to_numpy(Y), atol=6 * spec.sigma)
    mean = to_numpy(Y).mean(axis=0)
    np.testing.assert_allclose(to_numpy(fitted["mean_"]), mean, atol=6 * sigma)
    np.testing.assert_allclose(to_numpy(fitted["base_point_"]), mean / np.linalg.norm(mean),
                               atol=1e-3)


@parametrize_private_checks([
    mechanism_case(_spec(), _targets(4), name="ExtrinsicLabelRelease",
                   skipped={"check_audit": "audited through PrivateStructuredPrediction"})])
def test_every_check_on_the_mechanism_alone(estimator, check):
    check(estimator)
