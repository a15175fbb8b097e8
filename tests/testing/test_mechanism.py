"""Every conformance check on the mechanisms built alone, without an estimator
(``geomstats_dp.testing.mechanism_case``)."""

import dataclasses

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning.mechanisms import (
    AutoClip,
    ExtrinsicRelease,
    GradientRelease,
    LaplaceRelease,
    TangentRelease,
    TwoStageRelease,
)
from geomstats_dp.optim import FullBatch, SquaredDistanceLoss, canonical_point
from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.testing import (
    MechanismEstimator,
    check_private_estimator,
    mechanism_case,
    parametrize_private_checks,
)
from geomstats_dp.testing._case import (
    N_SAMPLES,
    SEED,
    _cloud,
    frechet_mean_reference,
    riemannian_distance,
)
from geomstats_dp.testing._cases import extrinsic_mean_reference
from geomstats_dp.testing._mechanism import composed_epsilon
from tests.conftest import shifted

SPHERE = Hypersphere(2)
X = _cloud(SPHERE, N_SAMPLES, 0.5, SEED)
START = canonical_point(SPHERE)
MEAN = {"reference": frechet_mean_reference(SPHERE),
        "distance": riemannian_distance(SPHERE), "tolerance": 5e-2,
        "skipped": {"check_audit": "audited through the estimators (test_audit.py)"}}


def _point_spec(kind, **fields):
    common = {"space": SPHERE, "loss": SquaredDistanceLoss(SPHERE, 1e-6),
              "n_samples": N_SAMPLES, "epsilon": 1.0, "delta": 1e-5, "clip_norm": 1.0,
              "init_point": START}
    return kind(**{**common, **fields})


def _cases():
    flat = Euclidean(2)
    rows = to_backend(np.random.default_rng(SEED).uniform(-0.5, 0.5, (N_SAMPLES, 2)))
    small = _cloud(SPHERE, N_SAMPLES, 0.2, SEED, offset=0.2)
    return [
        mechanism_case(_point_spec(GradientRelease, method="rgd"), X,
                       name="GradientRelease(rgd)", **MEAN),
        mechanism_case(_point_spec(GradientRelease, method="rsgd", batch_size=8,
                                   n_iter=30), X, name="GradientRelease(rsgd)", **MEAN),
        mechanism_case(_point_spec(GradientRelease, method="rsvrg",
                                   clip_norm=AutoClip(0.9, 0.1)), X,
                       name="GradientRelease(rsvrg,auto clip)", **MEAN),
        mechanism_case(_point_spec(TangentRelease, steps_epsilon=1.0), X, **MEAN),
        mechanism_case(_point_spec(TwoStageRelease, steps_epsilon=1.0), X, **MEAN),
        mechanism_case(_point_spec(ExtrinsicRelease, steps_epsilon=1.0), X,
                       **{**MEAN, "reference": extrinsic_mean_reference}),
        mechanism_case(LaplaceRelease(SPHERE, N_SAMPLES, 1.0, 0.5, to_numpy(START)),
                       small, **MEAN),
        mechanism_case(GradientRelease(flat, SquaredDistanceLoss(flat, 1e-6), N_SAMPLES,
                                       1.0, 1e-5, n_iter=10, clip_norm=1.0), rows,
                       name="GradientRelease(rgd,euclidean)",
                       reference=frechet_mean_reference(flat), tolerance=5e-2,
                       skipped=MEAN["skipped"]),
    ]


@parametrize_private_checks(_cases())
def test_mechanism_alone(estimator, check):
    if getattr(check, "func", check).__name__ == "check_noise_drawn":
        check(estimator, random_state=shifted(0))
    else:
        check(estimator)


class _HalvedNoise(GradientRelease):
    """A planted fault: the noise is calibrated to half the queries' sensitivity (to
    C / 2) while the gradients are clipped at C and the ledger charges the calibrated
    multiplier."""

    def plan_for(self, clip_norm):
        plan = super().plan_for(clip_norm)
        half = super().plan_for(clip_norm / 2).strategy
        return dataclasses.replace(plan, strategy=FullBatch(clip_norm, half.noise_std))


@pytest.mark.parametrize("check", ["check_noise_drawn", "check_ledger_composition"])
def test_a_mechanism_with_half_its_noise_fails(check):
    spec = _point_spec(GradientRelease, method="rgd", n_iter=5)
    fields = {field.name: getattr(spec, field.name) for field in dataclasses.fields(spec)}
    with pytest.raises(AssertionError):
        check_private_estimator(MechanismEstimator(_HalvedNoise(**fields)), X,
                                checks=[check])


def test_the_adapter_refuses_another_number_of_records():
    estimator = MechanismEstimator(_point_spec(GradientRelease),
                                   budget=PrivacyBudget(2.0, 1e-5))
    with pytest.raises(ValueError, match="n_samples=40 records, got 39"):
        estimator.fit(X[:-1])
    assert estimator.budget.events == ()


def test_rescaled_epsilon_reaches_every_share():
    spec = _point_spec(TwoStageRelease, steps_epsilon=0.9, clip_norm=AutoClip(0.5, 0.1))
    own = MechanismEstimator(spec, random_state=0, budget=PrivacyBudget(8.0, 1e-5)).fit(X)
    total = composed_epsilon(spec)
    fitted = MechanismEstimator(spec, epsilon=4 * total, random_state=0,
                                budget=PrivacyBudget(8.0, 1e-5)).fit(X)
    assert fitted.events_[0].epsilon == pytest.approx(4 * own.events_[0].epsilon)
    assert fitted.noise_multiplier_ < own.noise_multiplier_
