"""Case (testing._case): a sampled case's accounting check replaces only its sampled
records; the shared references measure what they claim."""

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_numpy
from geomstats_dp.testing import Case
from geomstats_dp.testing._case import (
    SAMPLED_RECORDS,
    riemannian_distance,
    subspace_distance,
)


def test_a_sampled_case_replaces_its_sampled_records_only():
    X = np.arange(20.0).reshape(10, 2)
    neighbours = Case("sampled", None, X).options["check_touched_stages"]["neighbours"]
    assert len(neighbours) == len(SAMPLED_RECORDS)
    for index, (_, X2, _) in zip(SAMPLED_RECORDS, neighbours):
        changed = np.flatnonzero(np.any(to_numpy(X2) != X, axis=1))
        assert changed.tolist() == [index]
    assert Case("every record", None, X, sampled=False).options == {}


def test_riemannian_distance_is_the_great_circle_angle():
    """On the unit sphere the distance between e_0 and (cos t, sin t, 0) is t."""
    angle = 0.7
    distance = riemannian_distance(Hypersphere(2))
    answer = np.array([np.cos(angle), np.sin(angle), 0.0])
    assert abs(distance(np.array([1.0, 0.0, 0.0]), answer) - angle) < 1e-9


def test_subspace_distance_is_the_sine_of_the_principal_angle():
    """span(e_0, e_2) against span(cos t e_0 + sin t e_1, e_2), each given by another basis:
    the largest principal angle is t, whatever the bases."""
    angle = 0.4
    release = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0]])
    answer = np.array([[0.0, 0.0, 2.0, 0.0], [np.cos(angle), np.sin(angle), 0.0, 0.0]])
    assert abs(subspace_distance(release, answer) - np.sin(angle)) < 1e-12
    assert subspace_distance(release, release[::-1]) < 1e-12
