"""Events state their adjacency, sensitivity and noise consistently, or refuse."""

import dataclasses

import pytest

from geomstats_dp.privacy import GaussianEvent, PureEvent

pytestmark = pytest.mark.backend_independent


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"noise_multiplier": 0.0}, ValueError, "noise_multiplier"),
        ({"noise_multiplier": float("nan")}, ValueError, "noise_multiplier"),
        ({"noise_multiplier": "1"}, TypeError, "noise_multiplier"),
        ({"noise_multiplier": 1.0, "n_steps": 0}, ValueError, "n_steps"),
        ({"noise_multiplier": 1.0, "n_steps": 2.5}, TypeError, "n_steps"),
        ({"noise_multiplier": 1.0, "sampling": "shuffle"}, ValueError, "sampling"),
        ({"noise_multiplier": 1.0, "adjacency": "swap"}, ValueError, "adjacency"),
        ({"noise_multiplier": 1.0, "sampling_rate": 0.5}, ValueError, "sampling_rate"),
        (
            {"noise_multiplier": 1.0, "sampling_rate": 1.5, "sampling": "without_replacement"},
            ValueError,
            "sampling_rate",
        ),
        (
            {"noise_multiplier": 1.0, "sampling_rate": 0.1, "sampling": "poisson"},
            ValueError,
            "add_remove",
        ),
        (
            {
                "noise_multiplier": 1.0,
                "sampling_rate": 0.1,
                "sampling": "without_replacement",
                "adjacency": "add_remove",
            },
            ValueError,
            "replace_one",
        ),
        (
            {"noise_multiplier": 2.0, "sensitivity": 0.1, "noise_std": 0.3},
            ValueError,
            "noise_multiplier",
        ),
        ({"noise_multiplier": 1.0, "label": 3}, TypeError, "label"),
    ],
)
def test_gaussian_event_rejects_bad_fields(kwargs, error, name):
    with pytest.raises(error, match=name):
        GaussianEvent(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"epsilon": 1.0, "noise_scale": 0.0}, ValueError, "noise_scale"),
        ({"epsilon": 1.0, "adjacency": "other"}, ValueError, "adjacency"),
    ],
)
def test_pure_event_rejects_bad_fields(kwargs, error, name):
    with pytest.raises(error, match=name):
        PureEvent(**kwargs)


def test_from_noise_states_one_configuration():
    event = GaussianEvent.from_noise(0.3, 0.1, n_steps=5, label="step")
    assert event.noise_multiplier == pytest.approx(3.0, rel=1e-15)
    assert (event.sensitivity, event.noise_std, event.n_steps) == (0.1, 0.3, 5)
    assert event.mu == pytest.approx(5**0.5 / 3.0, rel=1e-15)


def test_events_are_frozen_and_hashable():
    event = GaussianEvent(2.0, n_steps=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.noise_multiplier = 1.0
    assert {event, GaussianEvent(2.0, n_steps=3)} == {event}
    assert hash(PureEvent(1.0)) == hash(PureEvent(1.0))


def test_sampling_rate_one_is_not_subsampled():
    assert not GaussianEvent(1.0, sampling="without_replacement").subsampled
    assert GaussianEvent(1.0, sampling_rate=0.5, sampling="without_replacement").subsampled
