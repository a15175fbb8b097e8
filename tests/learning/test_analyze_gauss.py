"""AnalyzeGaussRelease built alone (no estimator): its events, its stages' sensitivities
on worst-case neighbours, and what it releases."""

import math

import numpy as np
import pytest

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning.mechanisms.analyze_gauss import (
    LABEL,
    MEAN_LABEL,
    AnalyzeGaussRelease,
)
from geomstats_dp.testing import mechanism_case, parametrize_private_checks
from geomstats_dp.testing._case import subspace_distance
from tests.learning.mechanism_support import composed_mu, gdp_delta, stages_of

N, P, B = 50, 4, 2.0


def _spec(mean_share=0.0, epsilon=1.0):
    return AnalyzeGaussRelease(n_samples=N, n_components=1, data_norm=B, epsilon=epsilon,
                               delta=1e-5, mean_share=mean_share)


@pytest.mark.parametrize("mean_share", [0.0, 0.1])
def test_events_compose_exactly_to_the_target_and_state_the_sensitivities(mean_share):
    events = _spec(mean_share, epsilon=2.0).events()
    assert len(events) == (2 if mean_share else 1)
    matrix = events[-1]
    assert matrix.sensitivity == pytest.approx(math.sqrt(2) * B**2 / N, rel=1e-12)
    assert matrix.noise_std == pytest.approx(matrix.noise_multiplier * matrix.sensitivity)
    if mean_share:
        assert events[0].sensitivity == pytest.approx(2 * B / N, rel=1e-12)
        mu = composed_mu(events)  # the mean's share of mu^2 is its own
        assert (1 / events[0].noise_multiplier**2) / mu**2 == pytest.approx(mean_share)
    assert gdp_delta(2.0, composed_mu(events)) == pytest.approx(1e-5, rel=1e-4)


def _neighbours():
    """Every row B e1; the neighbours replace row 0 by B e2 (a worst case of the second
    moment), by -B e1 (of the mean) or by a non-finite row."""
    X = np.zeros((N, P))
    X[:, 0] = B
    moved, flipped, missing = X.copy(), X.copy(), X.copy()
    moved[0] = [0.0, B, 0.0, 0.0]
    flipped[0, 0] = -B
    missing[0, 1] = np.nan
    return X, moved, flipped, missing


@pytest.mark.parametrize("mean_share", [0.0, 0.1])
def test_worst_case_neighbours_move_each_stage_by_at_most_its_sensitivity(mean_share):
    spec = _spec(mean_share)
    X, moved, flipped, missing = _neighbours()
    stages, _ = stages_of(spec, X, seed=0)
    far = X.copy()
    far[0] = [0.0, 1e6, -1e6, 0.0]
    for neighbour in (moved, flipped, far, missing):
        others, _ = stages_of(spec, neighbour, seed=0)
        for label, stage in stages.items():
            assert stage.distance(others[label]) <= stage.sensitivity * (1 + 1e-9), label
    attained = {"PrivatePCA: " + LABEL: moved}
    if mean_share:
        attained = {"PrivatePCA: " + MEAN_LABEL: flipped}
    for label, neighbour in attained.items():  # the stated sensitivity is tight
        others, _ = stages_of(spec, neighbour, seed=0)
        assert stages[label].distance(others[label]) == pytest.approx(
            stages[label].sensitivity, rel=1e-9)


def _rows(seed=0):
    """Rows with a dominant first axis, scaled to norm <= B."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, P)) * [1.0, 0.3, 0.2, 0.1]
    return X * B / np.linalg.norm(X, axis=1).max()


def _top_component(X, y=None):
    """The top eigenvector of X^T X (uncentred: the spec's second moment), [1, p]."""
    return np.linalg.eigh(to_numpy(X).T @ to_numpy(X))[1][:, -1:].T


def test_release_is_the_top_eigenvector_at_a_huge_epsilon():
    X = _rows()
    _, fitted = stages_of(_spec(epsilon=1e8), X, seed=0)
    top = np.linalg.eigh(X.T @ X)[1][:, -1]
    assert abs(float(np.dot(to_numpy(fitted["estimate_"]), top))) == pytest.approx(1.0,
                                                                                 abs=1e-8)
    assert fitted["n_iter_"] == 1 and fitted["clip_norm_"] is None


@parametrize_private_checks([mechanism_case(
    _spec(), _rows(), reference=_top_component, distance=subspace_distance, tolerance=5e-2,
    skipped={"check_audit": "audited through PrivatePCA (test_audit.py)"})])
def test_every_check_on_the_mechanism_alone(estimator, check):
    check(estimator)
