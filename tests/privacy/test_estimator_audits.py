"""Audits with power of the estimators built on the private core: PrivatePCA and PriRFed.

As in ``test_mechanism_audits``: one step from a fixed start with step size 1, so the
release is a monotone function of the noisy clipped gradient; worst-case replace-one
neighbours; the claim (2, 1e-2) holds for the honest mechanism and is refuted for a twin
drawing half the calibrated noise.
"""

import contextlib
import math
import warnings

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp.federated import PriRFed
from geomstats_dp.learning import PrivatePCA
from geomstats_dp.learning.pca import start_basis
from geomstats_dp.privacy import PrivacyBudget
from tests.conftest import BACKEND

from .auditing import _HalvedTangentGaussian, audit_fit, halved_gaussian_noise

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BACKEND != "numpy", reason="audits run thousands of fits: numpy only"),
]

EPSILON, DELTA, N_RUNS = 2.0, 1e-2, 2000


def _check(fit, dataset, neighbour, broken_context):
    honest = audit_fit(fit, dataset, neighbour, DELTA, n_runs=N_RUNS)
    with broken_context:
        broken = audit_fit(fit, dataset, neighbour, DELTA, n_runs=N_RUNS)
    assert not honest.refutes(EPSILON), honest
    assert broken.refutes(EPSILON), broken


def test_private_pca_audit(monkeypatch):
    """S^1: rows at +-45 degrees from the start pull it with gradients of norm B^2 = 1
    in opposite directions, the whole sensitivity; the release is the angle moved."""
    start = start_basis(2, 1)
    angle = math.atan2(start[1], start[0])

    def row(offset):
        return [math.cos(angle + offset), math.sin(angle + offset)]

    def fit(data, seed):
        pca = PrivatePCA(1, epsilon=EPSILON, delta=DELTA, data_norm=1.0, method="rgd",
                         n_iter=1, step_size=1.0, random_state=seed,
                         budget=PrivacyBudget(EPSILON, DELTA))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w = pca.fit(np.asarray(data)).estimate_
        return np.array([math.atan2(w[1], w[0]) - angle])

    dataset = [[0.0, 0.0], row(math.pi / 4)]
    neighbour = [[0.0, 0.0], row(-math.pi / 4)]
    _check(fit, dataset, neighbour, halved_gaussian_noise(monkeypatch))


def test_prirfed_audit(monkeypatch):
    """One agent, one round, one local DP-RGD step on R^1 (record-level replace-one)."""
    from geomstats_dp.federated import local

    def fit(data, seed):
        estimator = PriRFed(Euclidean(1), epsilon=EPSILON, delta=DELTA, n_rounds=1,
                            n_sampled=1, local_steps=1, local_method="rgd", clip_norm=1.0,
                            step_size=1.0, init_point=np.zeros(1), random_state=seed,
                            budget=PrivacyBudget(EPSILON, DELTA))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return estimator.fit([np.asarray(data)]).estimate_

    dataset, neighbour = [[0.0], [10.0]], [[0.0], [-10.0]]
    _check(fit, dataset, neighbour, _halved_local_noise(monkeypatch, local))


@contextlib.contextmanager
def _halved_local_noise(monkeypatch, module):
    """The federated local training draws half its calibrated noise."""
    with monkeypatch.context() as patch:
        patch.setattr(module, "TangentGaussian", _HalvedTangentGaussian)
        yield
