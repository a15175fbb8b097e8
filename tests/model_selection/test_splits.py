"""The search's split of one dataset's records: public sizes, a partition drawn from the
search's generator only, the held-out split of a score, errors naming the arrays."""

import numpy as np
import pytest

from geomstats_dp.federated import PriRFed
from geomstats_dp.federated.search_split import AgentSplit
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection.splits import RecordSplit, split_class


@pytest.mark.backend_independent
@pytest.mark.parametrize(("n_samples", "fraction", "n_validation"),
                         [(20, 0.25, 5), (10, 0.01, 1), (40, 0.3, 12)])
def test_the_split_is_a_partition_whose_sizes_are_public(n_samples, fraction, n_validation):
    data = np.random.default_rng(0).normal(size=(n_samples, 2))
    split = RecordSplit(data, None, fraction, np.random.default_rng(1))
    assert split.n_validation == len(split.validation) == n_validation
    assert sorted(np.concatenate([split.train, split.validation])) == list(range(n_samples))
    other = RecordSplit(data + 100.0, None, fraction, np.random.default_rng(1))
    np.testing.assert_array_equal(other.validation, split.validation)  # values unread
    X, y = split.part(split.validation)
    np.testing.assert_array_equal(X, data[split.validation])
    assert y is None


@pytest.mark.backend_independent
def test_targets_follow_their_records():
    X, y = np.arange(24.0).reshape(12, 2), np.arange(12.0)
    split = RecordSplit(X, y, 0.25, np.random.default_rng(2))
    part_X, part_y = split.part(split.train)
    np.testing.assert_array_equal(part_X[:, 0] / 2, part_y)


@pytest.mark.backend_independent
def test_held_out_scores_every_record():
    X = np.ones((7, 3))
    split = RecordSplit.held_out(X, shapes=((3,), None))
    assert split.n_validation == 7
    np.testing.assert_array_equal(split.part(split.validation)[0], X)
    assert len(split.part(split.train)[0]) == 0
    with pytest.raises(ValueError, match="X"):
        RecordSplit.held_out(X, shapes=((2,), None))


@pytest.mark.backend_independent
@pytest.mark.parametrize(("X", "y", "match"), [
    (np.ones((2, 2)), None, "X must hold enough records.*got 2"),
    (np.ones((10, 2)), np.ones(9), "y must hold one row per row of X \\(10\\), got 9"),
])
def test_bad_data_raise_naming_the_array(X, y, match):
    with pytest.raises(ValueError, match=match):
        RecordSplit(X, y, 0.25, np.random.default_rng(0))


@pytest.mark.backend_independent
def test_split_class_is_the_estimators_own_or_the_record_split():
    assert split_class(PrivateFrechetMean(None)) is RecordSplit
    assert split_class(PriRFed(None)) is AgentSplit
