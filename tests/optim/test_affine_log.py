"""The one-eigh route of clipped sums on SPD (affine-invariant) equals geomstats' log + norm."""

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.optim.affine_log import AffineLogSums, known_factors

from .spies import CountingLoss


def _points(n_points, dim=4):
    space = SPDMatrices(dim)
    gs.random.seed(1)
    return space, space.random_point(n_points), space.random_point()


def _reference(space, data, point, coefficients):
    """Norms and sum_i c_i (-Log_P X_i) through geomstats' log and metric norm."""
    grads = -space.metric.log(data, point)
    norms = space.metric.norm(grads, point)
    return to_numpy(norms), np.einsum("k,kij->ij", to_numpy(coefficients), to_numpy(grads))


def _check_against_geomstats(sums, space, data, point, coefficients):
    norms, weighted_sum = sums(data)
    expected_norms, expected_sum = _reference(space, data, point, coefficients)
    np.testing.assert_allclose(to_numpy(norms), expected_norms, rtol=1e-10)
    np.testing.assert_allclose(to_numpy(weighted_sum(coefficients)), expected_sum,
                               rtol=1e-9, atol=1e-12)


DIMS = pytest.mark.parametrize("dim", [2, 4])  # 2: the closed form, no eigh


@DIMS
def test_norms_and_sums_match_geomstats(dim):
    space, data, point = _points(9, dim)
    coefficients = to_backend(np.linspace(-1.0, 2.0, 9))
    _check_against_geomstats(AffineLogSums(point), space, data, point, coefficients)


@DIMS
def test_scaled_metric_scales_norms_only(dim):
    space, data, point = _points(5, dim)
    space.equip_with_metric(ScalarProductMetric(space, 2.5))
    sums = SquaredDistanceLoss(space).gradient_sums(point)
    assert isinstance(sums, AffineLogSums)
    _check_against_geomstats(sums, space, data, point, to_backend(np.ones(5)))


@DIMS
def test_non_positive_sample_has_infinite_norm_and_adds_nothing(dim):
    space, data, point = _points(4, dim)
    broken = to_numpy(data).copy()
    broken[2] = -np.eye(dim)  # not positive definite: log of negative eigenvalues
    norms, weighted_sum = AffineLogSums(point)(to_backend(broken))
    finite = np.isfinite(to_numpy(norms))
    assert finite.tolist() == [True, True, False, True]
    coefficients = to_backend(np.array([1.0, 1.0, 5.0, 1.0]))
    keep = [0, 1, 3]
    _, expected = _reference(space, data[keep], point, coefficients[keep])
    np.testing.assert_allclose(to_numpy(weighted_sum(coefficients)), expected,
                               rtol=1e-9, atol=1e-12)


def test_route_kept_for_overridden_gradients_and_other_losses():
    space, _, _ = _points(1)
    point = to_backend(np.eye(4))
    assert isinstance(SquaredDistanceLoss(space).gradient_sums(point), AffineLogSums)
    assert not isinstance(CountingLoss(space).gradient_sums(point), AffineLogSums)


@DIMS
def test_sums_at_a_point_with_a_known_factor_use_it_and_match_geomstats(dim):
    """Inside ``known_factors`` (as in ``minimize``) the factor a lookup returns is the
    one whitened with; a non-symmetric factor F = S O gives the same logarithms."""
    space, data, point = _points(6, dim)
    rotation = np.linalg.qr(np.random.default_rng(4).standard_normal((dim, dim)))[0]
    eigvals, eigvecs = np.linalg.eigh(to_numpy(point))
    factor = eigvecs @ np.diag(np.sqrt(eigvals)) @ eigvecs.T @ rotation  # S O
    asked = []

    def lookup(base_point):
        asked.append(base_point)
        return to_backend(factor), to_backend(np.linalg.inv(factor))

    with known_factors(lookup):
        sums = AffineLogSums(point)
    assert len(asked) == 1 and asked[0] is point
    np.testing.assert_allclose(to_numpy(sums.factor), factor)
    _check_against_geomstats(sums, space, data, point, to_backend(np.linspace(0.5, 1.5, 6)))
    assert AffineLogSums(point).factor is not sums.factor  # outside the block: its own
