"""The Riemannian Laplace release as a spec of public quantities (``mechanisms.laplace``);
its statistical behaviour is tested in ``test_laplace_frechet_mean.py``."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning.mechanisms import LaplaceRelease, run_release
from geomstats_dp.optim import canonical_point
from geomstats_dp.privacy import PrivacyBudget, PureEvent
from geomstats_dp.testing._case import _cloud

SPHERE = Hypersphere(2)
CENTER = to_numpy(canonical_point(SPHERE))


def test_the_spec_settles_its_cost_when_built():
    spec = LaplaceRelease(SPHERE, 40, 2.0, 0.5, CENTER)
    (event,) = spec.events()
    assert isinstance(event, PureEvent)
    assert event.epsilon == 2.0
    assert event.sensitivity == spec.sensitivity > 0
    # the scale halves when epsilon doubles (sigma = Delta / epsilon)
    assert LaplaceRelease(SPHERE, 40, 1.0, 0.5, CENTER).scale == pytest.approx(2 * spec.scale)
    # and the sensitivity shrinks as 1 / n
    assert LaplaceRelease(SPHERE, 80, 2.0, 0.5, CENTER).sensitivity == pytest.approx(
        spec.sensitivity / 2)


def test_a_radius_beyond_the_proof_is_refused_before_any_budget():
    with pytest.raises(ValueError):
        LaplaceRelease(SPHERE, 40, 1.0, 1.5, CENTER)
    with pytest.raises(ValueError, match="radius must be finite and > 0"):
        LaplaceRelease(SPHERE, 40, 1.0, -0.5, CENTER)


def test_the_release_lies_on_the_space():
    X = to_numpy(_cloud(SPHERE, 40, 0.2, 0, offset=0.2))  # shape-checked records
    fitted = run_release(LaplaceRelease(SPHERE, 40, 1.0, 0.5, CENTER),
                         PrivacyBudget(1.0, 0.0), X, None, 0)
    assert bool(SPHERE.belongs(fitted["estimate_"], atol=1e-6))
    assert fitted["noise_multiplier_"] == pytest.approx(
        fitted["noise_multipliers_"]["laplace"])
    assert np.isfinite(to_numpy(fitted["estimate_"])).all()
