"""PrivateERM against an attacker: non-tangent gradients, and records that break the loss.

A user-supplied "riemannian" gradient is projected onto the tangent space before it is
clipped, so a huge vector whose (indefinite) norm is near 0 cannot pass unclipped; a record
whose loss or gradient overflows, is NaN or raises changes nothing public.
"""

import math
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateERM
from geomstats_dp.optim import PerSampleLoss, canonical_point
from geomstats_dp.optim.oracle import GradientOracle
from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.testing._audit import audit_release
from tests.conftest import BACKEND
from tests.learning.public_outputs import public_outputs

CLIP = 1.0


def record_as_gradient(point, sample):
    """The attacker's closed form: the record itself, declared Riemannian."""
    return sample


def inner_loss(point, sample):
    return gs.sum(point * sample)


def _spd_attack():
    """SPD(2), affine-invariant, at I: V = S + K with S = diag(1000, 0), K antisymmetric
    with tr(K K) = 1 - 10^6, so tr(V V) = 1: norm 1 < C, Frobenius size 1400."""
    space = SPDMatrices(2)
    off = math.sqrt((1e6 - 1) / 2)
    attack = np.array([[1000.0, off], [-off, 0.0]])
    rng = np.random.default_rng(0)
    benign = rng.normal(scale=0.1, size=(10, 2, 2))
    benign = (benign + np.transpose(benign, (0, 2, 1))) / 2
    return space, benign, attack


def _hyperboloid_attack():
    """H^2 at e0: V = (1000, 1000, 0) is light-like, Minkowski norm 0 < C."""
    space = Hyperboloid(2)
    rng = np.random.default_rng(1)
    benign = np.concatenate([np.zeros((10, 1)), rng.normal(scale=0.1, size=(10, 2))], 1)
    return space, benign, np.array([1000.0, 1000.0, 0.0])


ATTACKS = {"spd_affine": _spd_attack, "hyperboloid": _hyperboloid_attack}


def _first_query(space, data):
    """The mean of the clipped gradients at the start, as DP-RGD's first step sees it."""
    loss = PrivateERM(space, inner_loss, gradient=record_as_gradient)._make_loss()
    n_samples = len(data)
    oracle = GradientOracle(loss, loss.check_data(data),
                            to_backend(np.full(n_samples, 1 / n_samples)), None, None)
    start = to_backend(canonical_point(space))
    return start, oracle.clipped_sum(start, CLIP)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_non_tangent_gradient_is_clipped_to_the_sensitivity(name):
    space, benign, attack = ATTACKS[name]()
    neighbour = benign.copy()
    neighbour[3] = attack
    start, query = _first_query(space, benign)
    _, attacked = _first_query(space, neighbour)
    difference = attacked - query
    assert bool(space.is_tangent(difference, start, atol=1e-9))
    norm = float(to_numpy(space.metric.norm(difference, start)))
    assert norm <= 2 * CLIP / len(benign) * (1 + 1e-9)
    # the attacker's record is clipped to C, not dropped: it moves the query
    assert norm > CLIP / len(benign)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_release_with_non_tangent_gradients_stays_on_the_manifold(name):
    space, _, attack = ATTACKS[name]()
    data = np.repeat(attack[None], 10, axis=0)
    estimator = PrivateERM(space, inner_loss, gradient=record_as_gradient, clip_norm=CLIP,
                           epsilon=1.0, n_iter=3, step_size=1.0, random_state=0,
                           budget=PrivacyBudget(1.0, 1e-5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimate = estimator.fit(data).estimate_
    assert bool(space.belongs(estimate, atol=1e-6))


@pytest.mark.slow
@pytest.mark.skipif(BACKEND != "numpy", reason="audits run thousands of fits: numpy only")
def test_audit_of_non_tangent_gradients_does_not_refute_the_claim():
    """One unit step on H^2 from e0; D has a record pulling at -C e1, D' the light-like
    attacker (its tangent part is +1000 e1: clipped to +C e1). The statistic is the
    release's e1 coordinate; before the projection it was refuted at epsilon >= 5."""
    space, _, attack = _hyperboloid_attack()
    epsilon, delta = 1.0, 1e-5
    dataset = np.array([[0.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    neighbour = np.array([[0.0, 0.0, 0.0], attack])

    def fit(data, seed):
        estimator = PrivateERM(space, inner_loss, gradient=record_as_gradient,
                               clip_norm=CLIP, epsilon=epsilon, delta=delta, n_iter=1,
                               step_size=1.0, random_state=seed,
                               budget=PrivacyBudget(epsilon, delta))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return to_numpy(estimator.fit(data).estimate_)[1:2]

    result = audit_release(fit, dataset, neighbour, delta=delta, n_runs=1000,
                           confidence=0.95, calibration_fraction=0.3)
    assert not result.refutes(epsilon), result


# -- records that break the loss --------------------------------------------------------

def fragile_loss(point, sample):
    """|w - x|^2 / 2 weighted by sqrt(3 + x_0): NaN for x_0 < -3; overflows for huge x;
    raises for a coordinate above 1e250. Broadcasts over paired rows."""
    if bool(gs.any(sample > 1e250)):
        raise FloatingPointError("record out of range")
    return gs.sum((point - sample) ** 2, axis=-1) / 2 * gs.sqrt(3 + sample[..., 0])


BAD_RECORDS = {
    "overflow": [0.0, -1e300],
    "nan": [-10.0, 0.0],
    "raises": [0.0, 1e300],
}


def _public_outputs(data):
    estimator = PrivateERM(Euclidean(2), fragile_loss, epsilon=1.0, clip_norm=CLIP,
                           n_iter=4, random_state=3, budget=PrivacyBudget(1.0, 1e-5))
    public = public_outputs(estimator, data)
    assert np.all(np.isfinite(to_numpy(estimator.estimate_)))
    return public


@pytest.mark.parametrize("bad", sorted(BAD_RECORDS))
@pytest.mark.parametrize("row", [0, 57])
def test_a_record_breaking_the_loss_changes_nothing_public(bad, row):
    data = np.random.default_rng(4).normal(scale=0.5, size=(80, 2))
    neighbour = data.copy()
    neighbour[row] = BAD_RECORDS[bad]
    assert _public_outputs(neighbour) == _public_outputs(data)


class FragileBatchLoss(PerSampleLoss):
    """A batched loss whose ``gradients`` raises on the whole batch for one bad record."""

    def values(self, point, data):
        return gs.sum((point - data) ** 2, axis=-1) / 2

    def gradients(self, point, data):
        if bool(gs.any(data > 1e250)):
            raise FloatingPointError("record out of range")
        return point - data


@pytest.mark.parametrize("row", [0, 57])
def test_a_record_raising_in_a_batched_loss_counts_as_zero(row):
    data = np.random.default_rng(5).normal(scale=0.5, size=(80, 2))
    neighbour = data.copy()
    neighbour[row] = BAD_RECORDS["raises"]

    def fit(records, loss):
        estimator = PrivateERM(Euclidean(2), loss, epsilon=1.0, clip_norm=CLIP, n_iter=4,
                               random_state=3, budget=PrivacyBudget(1.0, 1e-5))
        return public_outputs(estimator, records), to_numpy(estimator.estimate_)

    public, estimate = fit(neighbour, FragileBatchLoss(Euclidean(2)))
    assert public == fit(data, FragileBatchLoss(Euclidean(2)))[0]
    # the batch is evaluated record by record: the bad record's gradient is NaN (zeroed
    # by the clipping), the others are those of the batch without it
    loss = FragileBatchLoss(Euclidean(2))
    start = to_backend(np.zeros(2))
    grads = to_numpy(loss.tangent_gradients(start, to_backend(neighbour)))
    expected = to_numpy(loss.gradients(start, to_backend(np.delete(neighbour, row, 0))))
    assert np.all(np.isnan(grads[row]))
    np.testing.assert_array_equal(np.delete(grads, row, 0), expected)
    assert np.all(np.isfinite(estimate))
