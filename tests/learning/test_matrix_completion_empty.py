"""PrivateMatrixCompletion on a ratings matrix with no rating: a valid dataset, noise only.

Whether any user rated anything must not decide between an error and a release.
"""

import numpy as np

from geomstats_dp._backend import to_numpy
from geomstats_dp.distributions.grassmann_bases import GrassmannBases
from geomstats_dp.learning import PrivateERM, PrivateMatrixCompletion
from geomstats_dp.learning._completion_specs import start_basis
from geomstats_dp.privacy import PrivacyBudget
from tests.optim.spies import ZeroLoss

N_USERS, N_ITEMS, RANK = 30, 6, 2
SETTINGS = {"epsilon": 1.0, "delta": 1e-5, "clip_norm": 2.0, "method": "rgd", "n_iter": 5,
            "step_size": 0.3, "random_state": 11}


def _fit(ratings):
    return PrivateMatrixCompletion(RANK, budget=PrivacyBudget(1.0, 1e-5),
                                   **SETTINGS).fit(ratings)


def test_no_rating_releases_the_noise_only_trajectory():
    empty = _fit(np.full((N_USERS, N_ITEMS), np.nan))
    space = GrassmannBases(N_ITEMS, RANK)
    noise_only = PrivateERM(space, ZeroLoss(space), init_point=start_basis(N_ITEMS, RANK),
                            budget=PrivacyBudget(1.0, 1e-5), **SETTINGS)
    noise_only.fit(np.zeros((N_USERS, N_ITEMS)))
    np.testing.assert_allclose(to_numpy(empty.estimate_), to_numpy(noise_only.estimate_),
                               atol=1e-12)
    components = empty.components_
    np.testing.assert_allclose(components @ components.T, np.eye(RANK), atol=1e-10)
    assert empty.budget_.spent_epsilon > 0


def test_no_rating_and_one_rating_have_the_same_public_outputs():
    """User-level neighbours: user 0 rates nothing, or rates one item."""
    empty = np.full((N_USERS, N_ITEMS), np.nan)
    one = empty.copy()
    one[0, 3] = 4.0
    fits = [_fit(ratings) for ratings in (empty, one)]
    for name in ("noise_multiplier_", "n_iter_", "n_gradient_evaluations_", "clip_norm_",
                 "events_", "noise_ratio_", "n_features_in_"):
        assert getattr(fits[0], name) == getattr(fits[1], name)
    assert fits[0].budget_.spent_epsilon == fits[1].budget_.spent_epsilon
    # the one rating moved the release (it is not ignored)
    assert not np.allclose(to_numpy(fits[0].estimate_), to_numpy(fits[1].estimate_))
