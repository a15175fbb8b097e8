"""A black-box audit with power of PriRFed over several rounds and agents.

Three agents on R^1, one sampled per round, four rounds, one local DP-RGD step of size 1,
the end-to-end accountant (the tightest), record-level replace-one neighbours in agent 0:
{-10, 10} (clipped gradients +-C, mean 0) against {10, 10} (mean -C), so that each round
where agent 0 is sampled moves the point by the whole sensitivity 2C / n_0, independently
of the point. Agents 1 and 2 hold 500 records in balanced pairs (mean clipped gradient 0,
noise 2C z / 500): their rounds add almost nothing. The claim (2, 1e-2) holds for the
honest run and is refuted for its twin (``testing._audit.halved_noise``: every local
step's noise halved), at confidence 0.99.

The calibration depends on public quantities only, so it is done once, by ``fit``; each
audited run replays the same ``RunSpec`` with a fresh root seed through the in-process
engine (a few ms instead of a fit's calibration), and the replay is checked to be the
release ``fit`` gives for that seed.

8,000 runs a dataset: at 4,000 the twin escaped at ``--seed-shift`` 2 (bound 1.72); at
6,000 its bounds at shifts 0 to 3 were 2.09 / 2.37 / 2.23 / 2.37, at 8,000 2.31 / 3.29 /
2.88 / 2.54, at 10,000 2.07 / 2.92 / 2.63 / 2.12: between shifts the twin's bound varies
by up to 1 at any of these counts, and its margin over the claim stays thin.
"""

import dataclasses
import warnings

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_numpy
from geomstats_dp.federated import PriRFed
from geomstats_dp.federated.engine import run_local
from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.testing._audit import assert_twins, audit_twins
from tests.conftest import BACKEND, shifted

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BACKEND != "numpy", reason="audits run thousands of fits: numpy only"),
]

EPSILON, DELTA, N_RUNS = 2.0, 1e-2, 8000
BALANCED = np.array([[-10.0], [10.0]])
OTHERS = [np.repeat(BALANCED, 250, axis=0)] * 2
DATASET = [BALANCED] + OTHERS
NEIGHBOUR = [np.array([[10.0], [10.0]])] + OTHERS


def estimator(seed):
    return PriRFed(Euclidean(1), epsilon=EPSILON, delta=DELTA, n_rounds=4, n_sampled=1,
                   local_steps=1, local_method="rgd", clip_norm=1.0, step_size=1.0,
                   output="last", init_point=np.zeros(1), accountant="end_to_end",
                   random_state=seed, budget=PrivacyBudget(EPSILON, DELTA))


def fit(data, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return to_numpy(estimator(seed).fit(data).estimate_)


def replayer():
    """``replay(data, seed)``: the release of the run ``fit`` calibrates, with that seed."""
    fitted = estimator(0)
    fitted.fit(DATASET)
    sizes = [len(data) for data in DATASET]
    run = fitted.run_spec(sizes, fitted.clip_norm_)

    def replay(data, seed):
        return run_local(dataclasses.replace(run, entropy=seed), data)[-1]["point"]  # "last"

    return replay


def test_prirfed_audit_over_rounds_and_agents():
    replay = replayer()
    for data in (DATASET, NEIGHBOUR):
        for seed in (3, 4):
            np.testing.assert_array_equal(replay(data, seed), fit(data, seed))
    honest, broken = audit_twins(replay, DATASET, NEIGHBOUR, delta=DELTA, n_runs=N_RUNS,
                                 statistic=lambda releases: releases[:, 0],
                                 random_state=shifted(0))
    assert_twins(honest, broken, EPSILON, "PriRFed")
