"""The supervised cases' planted data and references: what each helper promises."""

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import tangent_frame
from geomstats_dp.learning.mechanisms.tangent_logistic import tangent_rows
from geomstats_dp.testing._supervised_cases import (
    geodesic_data,
    mdm_reference,
    supervised_cases,
    tangent_logistic_reference,
)
from tests.conftest import shifted


def test_supervised_cases_cover_the_classifiers_and_regression_unfitted():
    cases = supervised_cases()
    names = {type(case.estimator).__name__ for case in cases}
    assert names == {"PrivateMDM", "PrivateToTangentSpace", "PrivateTangentSpaceClassifier",
                     "PrivateGeodesicRegression"}
    for case in cases:
        with np.testing.assert_raises(NotFittedError):
            check_is_fitted(case.estimator)
        if case.y is not None and type(case.estimator).__name__ != "PrivateGeodesicRegression":
            assert np.bincount(np.asarray(case.y)).tolist() == [len(case.y) // 2] * 2


def test_noiseless_geodesic_data_lie_on_one_geodesic():
    space = Hypersphere(2)
    x, y = geodesic_data(space, 50, shifted(0), noise=0.0)
    order = np.argsort(to_numpy(x)[:, 0])
    first, middle, last = (y[order[i]] for i in (0, 25, 49))
    dist = space.metric.dist
    along = float(dist(first, middle)) + float(dist(middle, last))
    assert abs(along - float(dist(first, last))) < 1e-9


def test_mdm_reference_is_each_class_frechet_mean():
    space = SPDMatrices(2)
    case = next(case for case in supervised_cases()
                if type(case.estimator).__name__ == "PrivateMDM")
    means = to_numpy(mdm_reference(space)(case.X, case.y))
    labels = np.asarray(case.y)
    for label in (0, 1):
        members = to_backend(to_numpy(case.X)[labels == label])
        expected = to_numpy(FrechetMean(space).fit(members).estimate_)
        np.testing.assert_allclose(means[label], expected, atol=1e-6)


def test_tangent_logistic_reference_separates_the_two_clouds():
    space = SPDMatrices(2)
    case = next(case for case in supervised_cases()
                if type(case.estimator).__name__ == "PrivateTangentSpaceClassifier")
    coef = tangent_logistic_reference(space, 1.0, 0.1)(case.X, case.y)
    np.testing.assert_allclose(coef[0], -coef[1])
    frame = tangent_frame(space, to_numpy(FrechetMean(space).fit(case.X).estimate_))
    scores = tangent_rows(space, frame, 1.0, case.X) @ coef[1]
    assert np.mean((scores > 0) == (np.asarray(case.y) == 1)) > 0.9
