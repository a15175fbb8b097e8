"""The orthonormal tangent frame (learning._tangent_frame): its coordinates are an isometry
of the tangent space and map back to the logs."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDLogEuclideanMetric, SPDMatrices

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning._tangent_frame import (
    coordinates,
    tangent_frame,
    tangent_vector,
)

from .classifier_data import spd_classes

LOG_EUCLIDEAN = SPDMatrices(3)
LOG_EUCLIDEAN.equip_with_metric(SPDLogEuclideanMetric)


@pytest.mark.parametrize("space", [SPDMatrices(3), LOG_EUCLIDEAN, Hypersphere(3)],
                         ids=["ai", "le", "sphere"])
def test_frame_coordinates_are_an_isometry(space):
    """<c_i, c_j> = <Log_p x_i, Log_p x_j>_p, and the coordinates map back to the logs."""
    X = (spd_classes(n_per_class=4)[0] if isinstance(space, SPDMatrices)
         else space.random_riemannian_normal(mean=space.random_point(), n_samples=12))
    point = X[1]
    frame = tangent_frame(space, to_numpy(point))
    rows = coordinates(space, frame, X)
    logs = space.metric.log(X, point)
    gram = np.stack([to_numpy(space.metric.inner_product(logs, log, point)) for log in logs])
    np.testing.assert_allclose(rows @ rows.T, gram, atol=1e-8)
    np.testing.assert_allclose(to_numpy(tangent_vector(space, frame, rows)), to_numpy(logs),
                               atol=1e-8)
