"""check_stage_sensitivity: holds on the package's mechanisms under worst-case
neighbours of their adjacency; fails on the faults it exists for (a refinement clipped at
C with noise sized for C2, public weights left out of the sensitivity, DP-ALS weighting
a user by s_u instead of s_u / sqrt(k_u))."""

import numpy as np
import pytest

from geomstats_dp.learning.mechanisms import alternating_least_squares as als
from geomstats_dp.learning.mechanisms import tangent
from geomstats_dp.optim.oracle import GradientOracle
from geomstats_dp.testing._sensitivity import check_stage_sensitivity
from tests.conftest import shifted

from .stage_cases import (
    NORTH,
    frechet_mean,
    label_data,
    label_neighbours,
    matrix_completion,
    pca,
    pca_data,
    pca_neighbours,
    ratings_data,
    ratings_neighbours,
    sphere_data,
    sphere_neighbours,
    structured_prediction,
)

# two_stage where the localisation radius C2 lies far below C: concentrated data
LOCALISED = {"clip_norm": 1.5, "init_point": NORTH, "epsilon": 20.0}


def weights(n_samples=30):
    """Public weights, the largest (3 times the others) on record 0, the one replaced."""
    return {"sample_weight": np.where(np.arange(n_samples) == 0, 3.0, 1.0)}


def _sphere(method, weighted=False, spread=0.3, **params):
    X = sphere_data(spread=spread)
    return (frechet_mean(method, **params), X, None, list(sphere_neighbours(X)),
            weights() if weighted else None)


CASES = {
    "rgd": lambda: _sphere("rgd"),
    "rgd weighted": lambda: _sphere("rgd", weighted=True),
    "rsgd": lambda: _sphere("rsgd", batch_size=25),
    "rsvrg": lambda: _sphere("rsvrg"),
    "tangent weighted": lambda: _sphere("tangent", weighted=True),
    "two_stage localised": lambda: _sphere("two_stage", spread=0.02, **LOCALISED),
    "two_stage auto": lambda: _sphere("two_stage", clip_norm="auto"),
    "laplace": lambda: _sphere("laplace", spread=0.1, radius=0.5, center=NORTH,
                               clip_norm=None),
    "analyze_gauss": lambda: (pca("analyze_gauss"), pca_data(), None,
                              list(pca_neighbours(pca_data())), None),
    "pca rgd": lambda: (pca("rgd", n_iter=5, centering="none"), pca_data(), None,
                        list(pca_neighbours(pca_data())), None),
    "als": lambda: (matrix_completion(), ratings_data(), None,
                    list(ratings_neighbours(ratings_data())), None),
    "labels": lambda: (structured_prediction(), *label_data(),
                       list(label_neighbours(*label_data())), None),
    "labels public base": lambda: (
        structured_prediction(base_point=np.array([1.0, 0.0, 0.0])), *label_data(),
        list(label_neighbours(*label_data())), None),
}


def _check(case, **options):
    estimator, X, y, neighbours, fit_params = CASES[case]()
    check_stage_sensitivity(estimator, X, y, neighbours=neighbours,
                            random_state=shifted(0), fit_params=fit_params, **options)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", CASES)
def test_the_mechanisms_keep_their_stated_sensitivity(case):
    _check(case)


@pytest.mark.filterwarnings("ignore")
def test_a_refinement_clipped_at_c_with_noise_for_c2_fails(monkeypatch):
    """two_stage's unit steps after the localisation clip at C, noise sized for C2."""
    clipped_sum = GradientOracle.clipped_sum
    monkeypatch.setattr(GradientOracle, "clipped_sum",
                        lambda self, point, clip_norm, *args: clipped_sum(
                            self, point, LOCALISED["clip_norm"], *args))
    with pytest.raises(AssertionError, match="two_stage: step [2-9]"):
        _check("two_stage localised")


@pytest.mark.filterwarnings("ignore")
def test_public_weights_left_out_of_the_sensitivity_fail(monkeypatch):
    monkeypatch.setattr(tangent, "weight_factor", lambda weights, n_samples: 1.0)
    with pytest.raises(AssertionError, match=r"tangent: step 0.*ratio 2\.81"):
        _check("tangent weighted")


@pytest.mark.filterwarnings("ignore")
def test_a_user_weighted_by_s_u_fails(monkeypatch):
    """DP-ALS with w_u = s_u: a user with k_u ratings moves the statistics by
    sqrt(k_u) times the bound."""
    statistics = als.clipped_user_statistics

    def unscaled(*args):
        weights, features, residuals, observed = statistics(*args)
        return weights * np.sqrt(np.maximum(observed.sum(axis=1), 1)), features, \
            residuals, observed

    monkeypatch.setattr(als, "clipped_user_statistics", unscaled)
    with pytest.raises(AssertionError, match="every item at the ends.*item statistics"):
        _check("als")


def test_a_missing_neighbour_list_needs_the_harness():
    """Without ``neighbours`` the default is the harness's worst-case neighbours."""
    pytest.importorskip("geomstats_dp.testing._neighbours")
    estimator, X, y, _, _ = CASES["rgd"]()
    check_stage_sensitivity(estimator, X, y, random_state=shifted(0))
