"""PCAGradientRelease built alone (no estimator): its events, its default step against
the documented formula, its public convergence warning, its release at a huge epsilon."""

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning.mechanisms.pca_gradient import (
    RGD_MAX_STEP,
    SCALE_SHARE,
    VARIANCE_SHARE,
    PCAGradientRelease,
    step_rule,
)
from geomstats_dp.testing import mechanism_case, parametrize_private_checks
from geomstats_dp.testing._case import subspace_distance
from tests.learning.mechanism_support import composed_mu, gdp_delta, stages_of

N, P, B = 400, 5, 2.0


def _spec(**fields):
    return PCAGradientRelease(**{"n_samples": N, "n_features": P, "n_components": 1,
                                 "data_norm": B, "epsilon": 1.0, "delta": 1e-5,
                                 **fields})


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("mean_share", [0.0, 0.1])
def test_events_compose_exactly_to_the_target(mean_share):
    spec = _spec(epsilon=2.0, mean_share=mean_share, n_iter=7)
    events = spec.events()
    *early, steps, variances = events
    assert len(early) == (2 if mean_share else 1) and steps.n_steps == 7
    assert early[-1].sensitivity == pytest.approx(B**2 / N)  # the trace
    assert steps.sensitivity == pytest.approx(2 * B**2 / N)  # gradients of norm <= B^2
    assert variances.sensitivity == pytest.approx(math.sqrt(2) * B**2 / N)
    mu2 = composed_mu(events) ** 2
    rest = 1 - mean_share
    for event, share in ((early[-1], rest * SCALE_SHARE), (variances, rest * VARIANCE_SHARE)):
        assert (1 / event.noise_multiplier**2) / mu2 == pytest.approx(share, rel=1e-6)
    assert gdp_delta(2.0, math.sqrt(mu2)) == pytest.approx(1e-5, rel=1e-4)


def test_default_step_is_the_documented_noise_aware_constant():
    """a s^2 / T, s = T / sqrt(T^2 + d sigma^2), T the private trace (floored)."""
    trace, sigma, dim = 0.7, 0.05, 4
    rule = step_rule(dim, 1, B**2, (sigma,), (trace, trace - 0.1))
    expected = RGD_MAX_STEP * trace / (trace**2 + dim * sigma**2)
    assert rule(0) == pytest.approx(expected, rel=1e-12) and rule(9) == rule(0)


def test_warns_from_public_quantities_when_the_default_schedule_cannot_converge():
    with pytest.warns(ConvergenceWarning, match="cannot converge"):
        _spec(n_samples=20, epsilon=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        _spec(n_samples=20, epsilon=0.05, step_size=0.1)  # a given schedule: no warning
        _spec(epsilon=1e6)


def _rows(seed=0):
    """Rows with a dominant first axis, scaled to norm <= B."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, P)) * [1.0, 0.4, 0.3, 0.2, 0.1]
    return X * B / np.linalg.norm(X, axis=1).max()


def test_a_huge_epsilon_releases_the_top_eigenvector_and_its_variance():
    X = _rows()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, fitted = stages_of(_spec(epsilon=1e8, n_iter=300), X, seed=0)
    values, vectors = np.linalg.eigh(X.T @ X / N)
    assert abs(float(np.dot(to_numpy(fitted["estimate_"]), vectors[:, -1]))) > 1 - 1e-4
    assert fitted["explained_variance_"][0] == pytest.approx(values[-1], rel=1e-3)


def _top_component(X, y=None):
    """The top eigenvector of X^T X (the uncentred second moment), [1, p]."""
    return np.linalg.eigh(to_numpy(X).T @ to_numpy(X))[1][:, -1:].T


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_private_checks([mechanism_case(
    _spec(n_iter=60), _rows(), reference=_top_component, distance=subspace_distance,
    tolerance=5e-2, skipped={"check_audit": "audited through PrivatePCA (test_audit.py)"})])
def test_every_check_on_the_mechanism_alone(estimator, check):
    check(estimator)
