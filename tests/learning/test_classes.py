"""class_codes (learning._classes): the code of each label in the public classes, labels
outside them refused by index, a warning when the classes are read from private labels."""

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp.learning import PrivateMDM
from geomstats_dp.learning._classes import class_codes
from geomstats_dp.privacy import PrivacyLeakWarning

from .classifier_data import spd_classes


def test_mdm_refuses_labels_outside_the_classes_and_warns_on_inferred_classes():
    X, y = spd_classes(n_per_class=5)
    space = SPDMatrices(3)
    with pytest.raises(ValueError, match=r"y holds labels outside classes at indices \[10"):
        PrivateMDM(space, classes=[0, 1], random_state=0).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="classes were read"):
        PrivateMDM(space, random_state=0).fit(X, y)


def test_codes_index_the_classes_in_their_given_order():
    """classes ["b", "c", "a"]: "b" -> 0, "c" -> 1, "a" -> 2, whatever the sort order."""
    known, codes = class_codes(["a", "b", "a", "c"], ["b", "c", "a"], 4, private=True)
    assert known.tolist() == ["b", "c", "a"]
    assert codes.tolist() == [2, 0, 2, 1]
    assert np.asarray(known)[codes].tolist() == ["a", "b", "a", "c"]


@pytest.mark.parametrize("y, classes, message", [
    ([0, 1, 1], [0, 1], r"shape \[4\]"),
    ([0, 0, 0, 0], [0], "at least 2 classes"),
    ([0, 1, 1, 0], [0, 1, 1], "distinct"),
    ([0, 5, 1, 7], [0, 1], r"indices \[1, 3\]"),
])
def test_bad_labels_and_classes_are_named(y, classes, message):
    with pytest.raises(ValueError, match=message):
        class_codes(y, classes, 4, private=True)
