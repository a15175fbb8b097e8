"""The gradient release as a spec of public quantities (``mechanisms.gradient``)."""

import dataclasses

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.mechanisms import (
    AutoClip,
    GradientRelease,
    Preliminary,
    run_release,
)
from geomstats_dp.optim import ConstantStep, SquaredDistanceLoss, canonical_point
from geomstats_dp.privacy import GaussianEvent, PrivacyBudget
from geomstats_dp.testing._case import _cloud

SPHERE = Hypersphere(2)
X = _cloud(SPHERE, 30, 0.5, 0)


def _spec(**fields):
    return GradientRelease(**{"space": SPHERE, "loss": SquaredDistanceLoss(SPHERE, 1e-6),
                              "n_samples": 30, "epsilon": 1.0, "delta": 1e-5,
                              "n_iter": 5, "clip_norm": 1.0, **fields})


def _run(spec, seed=0, budget=None):
    return run_release(spec, budget or PrivacyBudget(10.0, 1e-5), X, None, seed)


def test_a_spec_is_frozen_and_refuses_what_it_cannot_run():
    spec = _spec()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.n_iter = 3
    with pytest.raises(ValueError, match="method must be one of"):
        _spec(method="tangent")
    with pytest.raises(ValueError, match="batch_size must be <= the number of samples 30"):
        _spec(method="rsgd", batch_size=31)


def test_the_estimator_is_a_thin_wrapper_of_the_spec():
    fitted = PrivateFrechetMean(SPHERE, clip_norm=1.0, method="rgd", n_iter=5,
                                random_state=3, budget=PrivacyBudget(10.0, 1e-5)).fit(X)
    released = _run(_spec(init_point=canonical_point(SPHERE), label="PrivateFrechetMean"),
                    seed=3)
    np.testing.assert_array_equal(to_numpy(released["estimate_"]),
                                  to_numpy(fitted.estimate_))
    assert released["events_"] == fitted.events_


def test_the_noise_multipliers_do_not_depend_on_the_clip_norm():
    fixed = _spec(clip_norm=1.0)
    released = _spec(clip_norm=AutoClip(0.5, 0.1))
    assert [e.noise_multiplier for e in fixed.events()] == [
        e.noise_multiplier for e in released.events()[1:]]
    fitted = _run(released)
    assert fitted["noise_multipliers_"] == fixed.plan.noise_multipliers
    assert fitted["clip_norm_"] != 1.0  # the released quantile
    noise_std = fitted["events_"][-1].noise_std
    assert noise_std == pytest.approx(fixed.plan.events[0].noise_std * fitted["clip_norm_"])


def test_preliminary_releases_come_first_and_feed_the_step_rule():
    event = GaussianEvent(5.0, label="preliminary")
    seen = {}

    def prepare(data, rng):
        return data, {"scale_": 2.0}, "context"

    def step_rule(inner_steps, clip_norm, noise_stds, context):
        seen["context"] = context
        return ConstantStep(0.1)

    spec = _spec(preliminary=Preliminary((event,), prepare), step_rule=step_rule)
    assert spec.events()[0] is event
    fitted = _run(spec)
    assert fitted["scale_"] == 2.0
    assert seen["context"] == "context"
    assert fitted["events_"][0] is event


def test_the_budget_is_checked_before_the_data_is_read():
    class Unreadable:
        def __len__(self):
            return 30

        def __getattr__(self, name):
            raise AssertionError("the data was read")

    from geomstats_dp.privacy import BudgetExceededError

    with pytest.raises(BudgetExceededError):
        run_release(_spec(), PrivacyBudget(0.5, 1e-5), Unreadable(), None, 0)
