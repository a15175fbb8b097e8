"""The ambient tangent projections and norms (sphere, Euclidean) agree with geomstats' maps;
other spaces and metrics get geomstats' own."""

import warnings

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim.tangent_ops import (
    AmbientTangentOps,
    TangentOps,
    tangent_ops_for,
)


@pytest.mark.parametrize("space", [Hypersphere(4), Euclidean(5)], ids=["sphere", "euclidean"])
def test_ambient_tangent_ops_match_geomstats(space):
    ops = tangent_ops_for(space)
    assert isinstance(ops, AmbientTangentOps)
    base = space.random_point()
    vectors = to_backend(np.random.default_rng(6).normal(size=(7, *base.shape)))
    tangent = ops.to_tangent(vectors, base)
    np.testing.assert_allclose(to_numpy(tangent), to_numpy(space.to_tangent(vectors, base)),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(to_numpy(ops.norms(tangent, base)),
                               to_numpy(space.metric.norm(tangent, base)), rtol=1e-12)


def test_ambient_norms_of_non_finite_records_are_non_finite_without_warning():
    ops = tangent_ops_for(Hypersphere(2))
    base = to_backend(np.array([1.0, 0.0, 0.0]))
    vectors = to_backend(np.array([[0.0, 1e200, 0.0], [0.0, np.inf, 1.0], [np.nan, 0, 1]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        norms = to_numpy(ops.norms(ops.to_tangent(vectors, base), base))
    assert not np.isfinite(norms).any()


def scaled_euclidean(dim, scale):
    space = Euclidean(dim)
    return space.equip_with_metric(ScalarProductMetric(space, scale))


@pytest.mark.parametrize("space", [SPDMatrices(2), scaled_euclidean(3, 4.0)],
                         ids=["spd", "scaled-euclidean"])
def test_other_spaces_and_metrics_get_geomstats_maps(space):
    ops = tangent_ops_for(space)
    assert type(ops) is TangentOps
    base = space.random_point()
    vectors = to_backend(np.random.default_rng(7).normal(size=(3, *base.shape)))
    tangent = ops.to_tangent(vectors, base)
    np.testing.assert_allclose(to_numpy(tangent), to_numpy(space.to_tangent(vectors, base)))
    np.testing.assert_allclose(to_numpy(ops.norms(tangent, base)),
                               to_numpy(space.metric.norm(tangent, base)))
