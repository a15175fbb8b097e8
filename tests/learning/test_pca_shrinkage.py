"""PrivatePCA's start_shrinkage: Analyze Gauss's matrix plus tau P0, post-processing."""

import math
import warnings

import numpy as np
import pytest
from sklearn.decomposition import PCA

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivatePCA
from geomstats_dp.learning.mechanisms.analyze_gauss import (
    SIGNAL_FRACTION,
    start_basis,
    start_shrunk_eigh,
)
from geomstats_dp.privacy.stages import observe_stages
from tests.conftest import shifted

P = 20


def _fit(X, k, epsilon, shrinkage, seed, n_features=P):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PrivatePCA(k, epsilon=epsilon, data_norm=math.sqrt(n_features),
                          start_shrinkage=shrinkage, random_state=seed).fit(X)


def _spiked_cube(n_samples, seed):
    """Rows in [0, 1]^P with three directions of variances 0.1 P, 0.05 P, 0.025 P."""
    rng = np.random.default_rng(seed)
    directions = np.linalg.qr(rng.standard_normal((P, 3)))[0]
    factors = rng.uniform(-1, 1, (n_samples, 3)) * np.sqrt(0.3 * P * np.array([1, 0.5, 0.25]))
    rows = 0.5 + factors @ directions.T + 0.05 * rng.standard_normal((n_samples, P))
    return np.clip(rows, 0, 1)


def _distance(first, second):
    """The largest principal angle's sine between two row spaces."""
    first, second = (np.linalg.qr(to_numpy(a).T)[0] for a in (first, second))
    return float(np.linalg.norm(first - second @ (second.T @ first), 2))


@pytest.mark.parametrize("k", [1, 3])
def test_at_a_huge_epsilon_the_shrunk_release_is_analyze_gauss(k):
    """tau scales with the noise: at epsilon 1e6 the shrunk components are Analyze
    Gauss's (same draws) and scikit-learn's, within Davis-Kahan's 2 tau / gap (Yu, Wang
    & Samworth 2015), tau = c 2 sigma sqrt(p) from the public noise ratio."""
    X = _spiked_cube(500, shifted(1))
    shrunk = _fit(X, k, 1e6, 2.0, shifted(0))
    plain = _fit(X, k, 1e6, 0.0, shifted(0))
    tau = 2.0 * shrunk.noise_ratio_ * SIGNAL_FRACTION * P
    exact = PCA(k + 1).fit(X)
    gap = exact.explained_variance_[k - 1] - exact.explained_variance_[k]
    assert 0 < _distance(shrunk.components_, plain.components_) < 2 * tau / gap < 1e-2
    assert _distance(shrunk.components_, exact.components_[:k]) < 1e-2


@pytest.mark.parametrize("k", [1, 3])
def test_on_pure_noise_a_large_shrinkage_releases_the_start(k):
    """No signal above the noise (uniform rows, n = 200, epsilon 0.1) and c = 10: the
    start is an outlier of M + tau P0 with squared overlap about 1 - (sigma sqrt(p) /
    tau)^2 = 1 - 1/400, while c = 0 releases a direction unrelated to it."""
    X = np.random.default_rng(shifted(2)).uniform(0, 1, (200, P))
    start = start_basis(P, k).reshape(P, k).T
    assert _distance(_fit(X, k, 0.1, 10.0, shifted(0)).components_, start) < 0.1
    assert _distance(_fit(X, k, 0.1, 0.0, shifted(0)).components_, start) > 0.5


def test_the_released_variances_are_those_of_the_noisy_matrix():
    """u^T M u along the components: the released total (trace of M, no variance floored
    at epsilon 10) does not move with tau, and a larger c captures less of M along its
    components."""
    X = _spiked_cube(300, shifted(3))
    fits = [_fit(X, 2, 10.0, c, shifted(0)) for c in (0.0, 0.5, 2.0)]
    assert all(np.min(to_numpy(f.explained_variance_)) > 0 < f.noise_variance_
               for f in fits)  # nothing floored
    totals = [float(np.sum(to_numpy(f.explained_variance_))) + (P - 2) * f.noise_variance_
              for f in fits]
    np.testing.assert_allclose(totals, totals[0], rtol=1e-9)
    captured = [float(np.sum(to_numpy(f.explained_variance_))) for f in fits]
    assert captured[0] >= captured[1] >= captured[2]


def test_start_shrunk_eigh_at_zero_weight_is_eigh():
    rng = np.random.default_rng(shifted(4))
    matrix = rng.standard_normal((6, 6))
    matrix = matrix + matrix.T
    values, vectors = start_shrunk_eigh(matrix, start_basis(6, 2), 0.0)
    expected_values, expected_vectors = np.linalg.eigh(matrix)
    np.testing.assert_array_equal(values, expected_values[::-1])
    np.testing.assert_array_equal(vectors, expected_vectors[:, ::-1])


def test_a_negative_shrinkage_is_refused_before_any_charge():
    pca = PrivatePCA(1, data_norm=1.0, start_shrinkage=-1.0)
    with pytest.raises(ValueError, match="start_shrinkage"):
        pca.fit(np.zeros((10, 3)))


def test_the_release_is_a_function_of_the_released_matrix_and_public_settings():
    """Post-processing only: the components are the top eigenvectors of the released
    matrix M (the stage observed) plus tau W0 W0^T, tau = c 2 sigma sqrt(p) with sigma
    the ledger event's noise, and the variances are u^T M u: nothing else of the data."""
    X = _spiked_cube(200, shifted(5))
    stages = []

    def spy(stage):
        stages.append(stage)
        return stage.release()

    with observe_stages(spy):
        pca = _fit(X, 2, 1.0, 1.5, shifted(0))
    matrix = np.asarray(to_numpy(stages[-1].release()))
    start = start_basis(P, 2)
    tau = 1.5 * 2 * pca.events_[-1].noise_std * math.sqrt(P)
    vectors = np.linalg.eigh(matrix + tau * start @ start.T)[1][:, ::-1][:, :2]
    components = to_numpy(pca.components_)
    np.testing.assert_allclose(np.abs(components @ vectors), np.eye(2), atol=1e-8)
    variances = np.maximum(np.diag(vectors.T @ matrix @ vectors), 0)
    np.testing.assert_allclose(to_numpy(pca.explained_variance_), variances, atol=1e-10)
