"""Small fits shared by the tests of the ledger checks (test_accounting, test_touched): a
sphere cloud, a grid search over it, a PriRFed federation."""

import numpy as np
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.federated import PriRFed
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection import PrivateGridSearchCV

SPHERE = Hypersphere(2)


def sphere_data(n_samples, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, 3)) + np.array([0.0, 0.0, 3.0])
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def small_search(**params):
    settings = {"epsilon": 2.0, "delta": 1e-5, "loss_bound": 2.0, "mean_runs": 2, "refit": False}
    return PrivateGridSearchCV(PrivateFrechetMean(SPHERE, clip_norm=1.5),
                               {"step_size": [0.1, 0.5], "n_iter": [3]},
                               **{**settings, **params})


def federation(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(size, 3)) for size in sizes]


def prirfed(**params):
    settings = {"epsilon": 1.0, "n_rounds": 2, "n_sampled": 2, "local_steps": 2, "local_method": "rgd",
                    "clip_norm": 1.0, "step_size": 0.1, "init_point": np.zeros(3)}
    return PriRFed(Euclidean(3), **{**settings, **params})


