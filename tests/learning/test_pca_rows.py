"""PrivatePCA's per-record maps and small Gaussian releases: rows bounded one at a time, and
the stated sensitivities of the mean, trace and (projected) second moments held on
neighbouring rows and attained where the closed form says."""

import math
import warnings

import numpy as np
import pytest

from geomstats_dp.learning._pca_rows import (
    bounded_rows,
    noisy_mean,
    noisy_projected_moments,
    noisy_second_moment,
    noisy_trace,
    second_moment_sensitivity,
    symmetric_noise,
    upper_triangle_norm,
)
from tests.conftest import shifted

pytestmark = pytest.mark.backend_independent

BOUND, N, P = 2.0, 10, 4
STAGE = {"label": "test", "sensitivity": 1.0}


def neighbours(seed):
    """Two [N, P] row sets of norm <= BOUND differing in row 3."""
    rng = np.random.default_rng(seed)
    rows = bounded_rows(rng.normal(scale=2.0, size=(N, P)), BOUND)
    other = rows.copy()
    other[3] = bounded_rows(rng.normal(scale=3.0, size=(1, P)), BOUND)[0]
    return rows, other


def release_difference(release, rows, other, seed):
    """release(rows) - release(other) with the same noise (the same generator state)."""
    first = release(rows, np.random.default_rng(seed))
    second = release(other, np.random.default_rng(seed))
    return np.subtract(first, second)


def test_rows_are_bounded_one_at_a_time():
    """A row whose squared norm overflows counts as non-finite: zeroed, like NaN and inf."""
    X = np.array([[0.3, 0.4], [3.0, 4.0], [np.inf, 1.0], [np.nan, 0.0], [1e200, 1e200]])
    given = X.copy()
    rows = bounded_rows(X, 1.0)
    np.testing.assert_allclose(rows, [[0.3, 0.4], [0.6, 0.8], [0, 0], [0, 0], [0, 0]])
    np.testing.assert_array_equal(X, given)  # the input is not modified
    inside = np.array([[0.3, 0.4], [0.0, 1.0]])
    assert bounded_rows(inside, 1.0) is inside  # no copy when nothing is mapped


def test_second_moment_sensitivity_is_attained_at_orthogonal_rows():
    rows = np.zeros((N, P))
    rows[0, 0] = BOUND
    other = rows.copy()
    other[0] = [0.0, BOUND, 0.0, 0.0]
    gap = upper_triangle_norm((rows.T @ rows - other.T @ other) / N)
    assert gap == pytest.approx(second_moment_sensitivity(BOUND, N))


@pytest.mark.parametrize("seed", range(20))
def test_no_neighbours_move_a_release_beyond_its_sensitivity(seed):
    rows, other = neighbours(seed)
    basis = np.linalg.qr(np.random.default_rng(seed).normal(size=(P, 2)))[0]
    mean = release_difference(lambda r, g: noisy_mean(r, 0.1, g, **STAGE), rows, other, seed)
    assert np.linalg.norm(mean) <= 2 * BOUND / N + 1e-12
    trace = release_difference(lambda r, g: noisy_trace(r, 0.1, g, **STAGE), rows, other, seed)
    assert abs(trace) <= BOUND**2 / N + 1e-12
    moment = release_difference(lambda r, g: noisy_second_moment(r, 0.1, g, **STAGE),
                                rows, other, seed)
    assert upper_triangle_norm(moment) <= second_moment_sensitivity(BOUND, N) + 1e-12

    def projected(r, g):
        moments, residual = noisy_projected_moments(r, basis, 0.1, g, **STAGE)
        return np.append(moments[np.triu_indices(2)], residual)

    joint = release_difference(projected, rows, other, seed)
    assert np.linalg.norm(joint) <= second_moment_sensitivity(BOUND, N) + 1e-12


def test_noiseless_statistics_are_the_row_moments():
    rows, _ = neighbours(0)
    rng = np.random.default_rng(1)
    mean = noisy_mean(rows, 1e-300, rng, **STAGE)
    np.testing.assert_allclose(mean, rows.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(noisy_second_moment(rows, 1e-300, rng, **STAGE),
                               rows.T @ rows / N, atol=1e-12)
    assert noisy_trace(rows, 1e-300, rng, **STAGE) == pytest.approx(np.sum(rows**2) / N)


def test_symmetric_noise_has_iid_upper_triangle_of_the_given_std():
    """20,000 draws of a 3 x 3 matrix: each upper entry's sample variance is within 5%
    (its relative standard error is 1%)."""
    rng = np.random.default_rng(shifted(3))
    draws = np.stack([symmetric_noise(0.5, 3, rng) for _ in range(20000)])
    np.testing.assert_array_equal(draws, np.transpose(draws, (0, 2, 1)))
    upper = draws[:, *np.triu_indices(3)]
    np.testing.assert_allclose(upper.var(axis=0), 0.25, rtol=0.05)
    correlation = np.corrcoef(upper.T) - np.eye(6)
    assert np.abs(correlation).max() < 5 / math.sqrt(20000)


def _mapped(row, bound):
    """One row as ``bounded_rows`` maps it, written out: zero if not finite (or if its
    norm overflows), else scaled to norm min(|x|, B)."""
    with np.errstate(over="ignore"):
        norm = math.sqrt(math.fsum(row**2)) if np.isfinite(row).all() else math.inf
    if not math.isfinite(norm):
        return np.zeros_like(row)
    return row if norm <= bound else row * (bound / norm)


def _awkward_rows(seed):
    """Rows far from the origin for their spread, with NaN, inf, an overflowing, a huge
    finite and a zero row, and half the rows beyond a bound at the median norm."""
    rng = np.random.default_rng(seed)
    X = rng.normal(loc=3.0, size=(1003, 6)) * [1.0, 0.5, 2.0, 0.1, 1.0, 3.0]
    X[5, 2], X[8, 0], X[9], X[11], X[40] = np.nan, -np.inf, 1e200, X[11] * 1e150, 0.0
    return X, float(np.median(np.linalg.norm(X[:5], axis=1)))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("centred", [False, True])
def test_blocked_passes_equal_the_mapped_rows_moments(monkeypatch, seed, centred):
    """bounded_mean and bounded_second_moment (blocks of 64 rows and a partial last
    block, no copy of X) equal the mean and second moment of the rows mapped one at a
    time, centred on a mean m and mapped again, to the rounding of the sums (50 machine
    epsilons times B^2; a few were seen), with no warning and X unchanged; m large
    against B too."""
    from geomstats_dp.learning import _pca_rows

    monkeypatch.setattr(_pca_rows, "BLOCK_ENTRIES", 64 * 6)
    monkeypatch.setattr(_pca_rows, "MIN_BLOCK_ROWS", 64)
    X, bound = _awkward_rows(shifted(seed))
    given = X.copy()
    rows = np.array([_mapped(row, bound) for row in X])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mean, squared = _pca_rows.bounded_mean(X, bound)
        np.testing.assert_allclose(mean, rows.mean(axis=0), rtol=0, atol=1e-14 * bound)
        for m in ([None] if not centred else [mean, mean + 5 * bound]):
            moment = _pca_rows.bounded_second_moment(  # the norms given, or not
                X, bound, m, None if m is None else squared)
            mapped = rows if m is None else np.array([_mapped(row - m, bound)
                                                      for row in rows])
            expected = mapped.T @ mapped / len(mapped)
            np.testing.assert_allclose(moment, expected, rtol=0, atol=1e-14 * bound**2)
    np.testing.assert_array_equal(X, given)
