"""Audits with power of the estimators built on the private core: PrivatePCA.

As in ``test_mechanism_audits``: one step from a fixed start with step size 1, so the
release is a monotone function of the noisy clipped gradient; worst-case replace-one
neighbours; the claim (2, 1e-2) holds for the honest mechanism and is refuted for a twin
drawing half the calibrated noise.
"""

import math
import warnings

import numpy as np
import pytest

from geomstats_dp.learning import PrivatePCA
from geomstats_dp.learning.pca import start_basis
from geomstats_dp.privacy import PrivacyBudget
from tests.conftest import BACKEND, shifted

from .auditing import audit_fit, halved_gaussian_noise

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BACKEND != "numpy", reason="audits run thousands of fits: numpy only"),
]

EPSILON, DELTA, N_RUNS = 2.0, 1e-2, 2000


def _check(fit, dataset, neighbour, broken_context):
    seed = shifted(0)
    honest = audit_fit(fit, dataset, neighbour, DELTA, n_runs=N_RUNS, seed=seed)
    with broken_context:
        broken = audit_fit(fit, dataset, neighbour, DELTA, n_runs=N_RUNS, seed=seed)
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
