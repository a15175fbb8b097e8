"""The clip bound of the gradient and tangent releases (``mechanisms.clip_bound``)."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_backend
from geomstats_dp.learning.mechanisms.clip_bound import (
    AutoClip,
    clip_events,
    resolve_clip_norm,
)
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.privacy import PrivacyLeakWarning, PureEvent

SPACE = Euclidean(2)
LOSS = SquaredDistanceLoss(SPACE, 1e-6)
START = to_backend(np.zeros(2))


def _data(radii):
    angles = np.linspace(0, 2 * np.pi, len(radii), endpoint=False)
    return to_backend(np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1))


def test_a_public_clip_norm_is_used_as_given_and_charges_nothing():
    assert clip_events(2.5, "L") == ()
    assert clip_events(None, "L") == ()
    assert resolve_clip_norm(2.5, LOSS, _data(np.ones(5)), START, None, "L") == 2.5


def test_auto_clip_is_one_pure_event_labelled_by_the_release():
    (event,) = clip_events(AutoClip(0.5, 0.2), "PrivateERM")
    assert isinstance(event, PureEvent)
    assert event.epsilon == pytest.approx(0.2)
    assert event.label == "PrivateERM: clip_norm='auto'"
    assert AutoClip(0.5, 0.2).event("").label == "clip_norm='auto'"


def test_inferred_clip_norm_is_the_largest_norm_with_a_leak_warning():
    radii = np.array([0.5, 1.0, 3.0, 2.0])
    with pytest.warns(PrivacyLeakWarning, match="not private"):
        found = resolve_clip_norm(None, LOSS, _data(radii), START, None, "L")
    assert found == pytest.approx(3.0)


def test_auto_clip_releases_near_the_quantile_at_a_large_epsilon():
    radii = np.linspace(0.1, 4.0, 200)  # the gradient norms at the start: the radii
    rng = np.random.default_rng(0)
    found = resolve_clip_norm(AutoClip(0.5, 1e4), LOSS, _data(radii), START, rng, "L")
    assert abs(found - np.quantile(radii, 0.5)) < 0.25 * np.quantile(radii, 0.5)
