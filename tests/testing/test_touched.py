"""check_touched_stages (testing._touched): the stages one record reaches cost no more
than the ledger claims; it fails on a record that reaches both parts of a split."""

import numpy as np
import pytest

from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection import splits as splits_module
from geomstats_dp.testing._neighbours import replaced_records
from geomstats_dp.testing._touched import check_touched_stages

from .ledger_fits import SPHERE, federation, prirfed, small_search, sphere_data


def test_search_records_reach_one_part_of_the_split():
    check_touched_stages(small_search(runs="geometric"), sphere_data(8), random_state=1)


def test_a_record_in_both_parts_of_the_split_fails(monkeypatch):
    """A training record also in the validation part reaches the run's fit and its score,
    which the SelectionEvent composes in parallel."""
    original = splits_module.RecordSplit.__init__

    def overlapping(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.validation = np.sort(np.append(self.validation[1:], self.train[0]))

    monkeypatch.setattr(splits_module.RecordSplit, "__init__", overlapping)
    with pytest.raises(AssertionError, match="check_touched_stages.*below"):
        check_touched_stages(small_search(runs="geometric"), sphere_data(8), random_state=1)


def test_prirfed_record_reaches_its_own_agent_only():
    data = federation([6, 9])
    check_touched_stages(prirfed(accountant="end_to_end"), data, random_state=1,
                         neighbours=list(replaced_records(data, indices=[0, 3])))


@pytest.mark.parametrize("params", [{"method": "rgd", "n_iter": 3},
                                    {"method": "rsgd", "n_iter": 3, "batch_size": 4}])
def test_touched_stages_of_a_plain_fit_fit_its_ledger(params):
    estimator = PrivateFrechetMean(SPHERE, epsilon=1.0, clip_norm=1.5, **params)
    check_touched_stages(estimator, sphere_data(10), random_state=0,
                         neighbours=list(replaced_records(sphere_data(10), indices=[0, 7])))
