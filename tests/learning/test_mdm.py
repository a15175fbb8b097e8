"""PrivateMDM: convergence to geomstats' MDM at a huge epsilon, its parameter checks."""

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.mdm import RiemannianMinimumDistanceToMean
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateMDM

from .classifier_data import HUGE, spd_classes


@pytest.mark.parametrize("labels", ["private", "public"])
def test_mdm_converges_to_geomstats_mdm(labels):
    space = SPDMatrices(3)
    X, y = spd_classes()
    model = PrivateMDM(space, epsilon=HUGE, labels=labels, classes=[0, 1, 2], n_iter=10,
                       clip_norm=2.0, random_state=0).fit(X, y)
    reference = RiemannianMinimumDistanceToMean(space).fit(X, to_backend(y))
    for k in range(3):
        assert float(space.metric.dist(model.centroids_[k],
                                       reference.mean_estimates_[k])) < 1e-3
    np.testing.assert_array_equal(model.predict(X), to_numpy(reference.predict(X)))
    distances = model.transform(X)
    assert distances.shape == (len(X), 3)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    expected = np.exp(-distances**2) / np.exp(-distances**2).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(proba, expected)


def test_mdm_refuses_a_bad_labels_parameter_and_predicts_only_when_fitted():
    X, y = spd_classes(n_per_class=5)
    space = SPDMatrices(3)
    with pytest.raises(InvalidParameterError, match="'labels' parameter"):
        PrivateMDM(space, labels="secret").fit(X, y)
    with pytest.raises(NotFittedError):
        PrivateMDM(space).predict(X)
