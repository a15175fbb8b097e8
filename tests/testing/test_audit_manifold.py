"""check_audit on the mechanisms of PrivateKMeans, PrivateTangentPCA and
PrivateGeometricMedian: the honest release passes, its halved-noise twin fails
(the settings of ``test_audit``: a claim of (2, 0.1), confidence 0.99).

- geometric median: one DP-RGD step of size 1 from 0 on R^1; the record at the iterate
  adds nothing and the other pulls by a unit vector, +1 or -1: the mean gradient moves
  by its whole sensitivity 2/n.
- tangent PCA: Analyze Gauss at the public base point 0 of R^2 (the orthonormal basis
  is the canonical one), the records of ``test_audit``'s PCA case; the release is the
  noisy second moment rebuilt from the component and its variances.
- k-means: one cluster with the public centre 0 on R^1, 200 records at 0 (their log-maps
  vanish, their count makes the count's noise negligible) and the differing record at
  +10 or -10 (clipped to +-1): the centre moves by the sum's noise over n, and only the
  sums' share of mu^2 (1 - 1/(1 + sqrt 2)) carries the signal, which 3,000 runs a dataset
  resolve.
"""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp.learning import (
    PrivateGeometricMedian,
    PrivateKMeans,
    PrivateTangentPCA,
)
from geomstats_dp.testing._audit import check_audit, projection_statistic
from tests.conftest import BACKEND, shifted
from tests.testing.test_audit import BALANCED, DELTA, EPSILON, FAR, first_coordinate

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(BACKEND != "numpy", reason="thousands of fits: numpy")]


def tangent_second_moment(fitted):
    """The noisy second moment of the tangent PCA on R^2 (``test_audit.second_moment``
    with the component as a tangent vector)."""
    v = np.asarray(fitted.components_).reshape(2, 1)
    (top,), (ratio,) = fitted.explained_variance_, fitted.explained_variance_ratio_
    return top * v @ v.T + (top / ratio - top) * (np.eye(2) - v @ v.T)


CENTRED = np.zeros((200, 1))
CASES = {
    "geometric_median": (
        PrivateGeometricMedian(Euclidean(1), epsilon=EPSILON, delta=DELTA, n_iter=1,
                               step_size=1.0, init_point=np.zeros(1)),
        [[0.0], [FAR]], [[0.0], [-FAR]], {"statistic": first_coordinate}),
    "tangent_pca": (
        PrivateTangentPCA(Euclidean(2), 1, epsilon=EPSILON, delta=DELTA, clip_norm=1.0,
                          base_point=np.zeros(2)),
        np.concatenate([BALANCED, [[1.0, 0.0]]]), np.concatenate([BALANCED, [[0.0, 1.0]]]),
        {"release": tangent_second_moment,
         "statistic": projection_statistic([1.0, 0.0, 0.0, -1.0])}),
    "kmeans": (
        PrivateKMeans(Euclidean(1), 1, epsilon=EPSILON, delta=DELTA, clip_norm=1.0,
                      n_iter=1, init=np.zeros((1, 1))),
        np.concatenate([CENTRED, [[FAR]]]), np.concatenate([CENTRED, [[-FAR]]]),
        {"release": lambda fitted: fitted.cluster_centers_, "statistic": first_coordinate,
         "n_runs": 3000}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_audit_refutes_only_the_halved_noise_twin(name):
    estimator, X, X2, options = CASES[name]
    check_audit(estimator, X, X2, random_state=shifted(0), **options)
