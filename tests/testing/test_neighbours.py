"""worst_case_neighbours: one record, user row or label changed, as each adjacency states."""

import numpy as np
import pytest

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning.mechanisms.choice import choose_point_method
from geomstats_dp.testing import built_in_cases, worst_case_neighbours
from geomstats_dp.testing._cases import threshold_epsilon


def _case(name):
    return next(case for case in built_in_cases() if case.name == name)


def _changed_rows(first, second):
    first, second = np.asarray(to_numpy(first)), np.asarray(to_numpy(second))
    same = np.isclose(first, second, equal_nan=True)
    return np.flatnonzero(~same.reshape(len(first), -1).all(axis=1))


@pytest.mark.parametrize("name", [
    "PrivateFrechetMean(method='rgd',space=sphere)",
    "PrivateFrechetMean(method='rgd',space=spd)",
    "PrivatePCA(method='rgd')",
    "PrivateMatrixCompletion(method='als')",
])
def test_replace_one_and_user_level_neighbours_change_one_row(name):
    case = _case(name)
    names = []
    for label, X2, y2 in worst_case_neighbours(case.estimator, case.X, case.y):
        assert list(_changed_rows(case.X, X2)) == [0], label
        assert y2 is case.y
        names.append(label)
    assert {"far", "inf", "huge"} <= set(names)


def test_points_off_the_space_are_off_it():
    case = _case("PrivateFrechetMean(method='rgd',space=spd)")
    space = case.estimator.space
    neighbours = {name: X2 for name, X2, _ in worst_case_neighbours(case.estimator, case.X)}
    assert not bool(space.belongs(neighbours["off_space"][0]))
    for name in ("opposite_at_bound", "far"):
        assert bool(space.belongs(neighbours[name][0], atol=1e-6)), name


def test_label_level_neighbours_change_one_target_only():
    case = _case("PrivateStructuredPrediction(method='labels',space=hyperboloid)")
    for label, X2, y2 in worst_case_neighbours(case.estimator, case.X, case.y):
        assert X2 is case.X
        assert list(_changed_rows(case.y, y2)) == [0], label


def test_federated_neighbours_change_one_record_of_one_agent():
    case = _case("PriRFed(engine='local',space=euclidean)")
    for label, X2, _ in worst_case_neighbours(case.estimator, case.X):
        assert label.startswith("agent 0: ")
        assert list(_changed_rows(case.X[0], X2[0])) == [0]
        assert all(a is b for a, b in zip(case.X[1:], X2[1:]))


def test_add_remove_neighbours_differ_by_one_record():
    case = _case("PrivateFrechetMean(method='rgd',space=sphere)")
    estimator = case.estimator.set_params(method="rsgd", sampling="poisson",
                                          dataset_size=50)
    sizes = {name: len(X2) for name, X2, _ in worst_case_neighbours(estimator, case.X)}
    assert sizes == {"removed": len(case.X) - 1, "added far": len(case.X) + 1}


@pytest.mark.backend_independent
@pytest.mark.parametrize(("n_samples", "dim"), [(40, 2), (100, 3)])
def test_threshold_epsilon_sits_on_the_auto_rule_threshold(n_samples, dim):
    epsilon = threshold_epsilon(n_samples, dim, 1e-5)
    assert choose_point_method(n_samples, dim, epsilon, 1e-5) == "two_stage"
    assert choose_point_method(n_samples - 1, dim, epsilon, 1e-5) == "rgd"


@pytest.mark.parametrize(("name", "relabelled"), [
    ("PrivateMDM(labels='private',space=spd)", True),
    ("PrivateTangentSpaceClassifier(space=spd)", True),
    ("PrivateMDM(labels='public',space=spd)", False),
])
def test_private_labels_change_with_the_record(name, relabelled):
    """A record is (x, y): with private labels every adversarial record also comes with
    its label changed, and the label alone changes; with public labels never."""
    case = _case(name)
    labels = np.asarray(to_numpy(case.y))
    changed = {}
    for label, X2, y2 in worst_case_neighbours(case.estimator, case.X, case.y):
        rows = list(_changed_rows(labels, y2))
        changed[label] = rows
        assert rows in ([], [0]), label
        assert list(_changed_rows(case.X, X2)) == ([] if label == "label changed"
                                                   else [0]), label
        if rows:
            assert y2[0] in labels and y2[0] != labels[0]
    names = {label for label, rows in changed.items() if rows}
    if relabelled:
        assert names == {"label changed"} | {f"{label}, label changed"
                                             for label in changed if not changed[label]}
        assert {"far, label changed", "opposite_at_bound, label changed"} <= names
    else:
        assert not names


def test_regression_neighbours_replace_the_covariate_the_response_or_both():
    case = _case("PrivateGeodesicRegression(space=sphere)")
    space = case.estimator.space
    seen = {}
    for label, X2, y2 in worst_case_neighbours(case.estimator, case.X, case.y):
        seen[label] = (list(_changed_rows(case.X, X2)), list(_changed_rows(case.y, y2)))
    assert seen["far"] == ([0], [])
    assert seen["response far"] == ([], [0])
    assert seen["far, response nan"] == ([0], [0])
    assert {"response off_space", "response huge", "response opposite_at_bound"} <= set(seen)
    _, far = next((X2, y2) for label, X2, y2 in worst_case_neighbours(
        case.estimator, case.X, case.y) if label == "response far")
    assert bool(space.belongs(far[0]))
