"""geomstats' EMG recordings as covariance matrices: windows inside runs of one gesture,
each window's sample covariance (against numpy's ``cov`` of the raw signals)."""

import numpy as np
import pytest
from geomstats.datasets.utils import load_emg

from geomstats_dp._backend import to_numpy
from geomstats_dp.datasets import EMG_GESTURES, load_emg_covariances
from geomstats_dp.datasets.emg import _window_starts

pytestmark = pytest.mark.backend_independent


def test_windows_stay_inside_runs_after_the_margins():
    run_ids = np.array([0] * 10 + [1] * 7 + [2] * 12)
    starts = _window_starts(run_ids, n_steps=3, margin=1)
    # run 0 keeps 1..8: windows at 1, 4 (7 would end at 9 > 8); run 1 keeps 11..15: 11;
    # run 2 keeps 18..27: 18, 21, 24
    np.testing.assert_array_equal(starts, [1, 4, 11, 18, 21, 24])


def test_covariances_of_the_first_windows_are_numpy_s():
    covariances, labels = load_emg_covariances(n_steps=100, margin=1000)
    covariances = to_numpy(covariances)
    assert covariances.shape[1:] == (8, 8) and labels.shape == (covariances.shape[0],)
    assert set(labels) == set(range(len(EMG_GESTURES)))
    assert np.all(np.linalg.eigvalsh(covariances) > 0)
    frame = load_emg()
    frame = frame[frame.label != "rest"]
    first = frame[(frame.label == EMG_GESTURES[labels[0]])
                  & (frame.exp == frame.exp.iloc[0])]
    signals = first[[f"c{i}" for i in range(8)]].to_numpy(dtype=np.float64)
    np.testing.assert_allclose(covariances[0], np.cov(signals[1000:1100].T), rtol=1e-12)


def test_one_gesture_keeps_its_windows_only():
    every, labels = load_emg_covariances()
    rock, rock_labels = load_emg_covariances("rock")
    assert np.all(rock_labels == EMG_GESTURES.index("rock"))
    np.testing.assert_array_equal(to_numpy(rock), to_numpy(every)[labels == 0])


@pytest.mark.parametrize(("kwargs", "name"), [({"gesture": "rest"}, "gesture"),
                                              ({"n_steps": 8}, "n_steps"),
                                              ({"margin": -1}, "margin")])
def test_bad_arguments_are_refused(kwargs, name):
    with pytest.raises(ValueError, match=name):
        load_emg_covariances(**kwargs)
