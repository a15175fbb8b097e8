"""PriRFed's shrunk one-round release (``output="shrunk"``) on SPD(2), affine-invariant.

At the identity the affine-invariant metric is the Frobenius inner product and
Log_I = logm, Exp_I = expm: the tangent vectors are computed here independently with
numpy's eigh, and the errors are taken in the tangent space at the start, where the
release is the noisy weighted mean of the agents' clipped tangent means.
"""

import math
import warnings

import numpy as np
import pytest

from geomstats_dp._backend import to_numpy
from geomstats_dp.federated import PriRFed
from geomstats_dp.federated.defaults import resolve_settings
from geomstats_dp.privacy import PrivacyBudget

from .test_aggregation import expm, logm, spd2, symmetric

SIZES = (40, 55, 45, 60, 50, 42, 58, 47)
CLIP = 2.0
EPSILON = 0.2  # each agent's noise norm is larger than C: the rule keeps one round


def federation(seed=0):
    """Agents around different centres near the identity: the signal is small."""
    rng = np.random.default_rng(seed)
    agents = []
    for size in SIZES:
        centre = symmetric(rng, 1, 0.3)[0]
        agents.append(expm(centre + symmetric(rng, size, 0.3)))
    return agents


def noiseless_release(agents):
    """The size-weighted mean of the agents' clipped tangent means at the identity."""
    total = sum(len(points) for points in agents)
    mean = np.zeros((2, 2))
    for points in agents:
        logs = logm(points)
        norms = np.linalg.norm(logs, axis=(1, 2))
        mean += np.einsum("n,nij->ij", np.minimum(1.0, CLIP / norms), logs) / total
    return mean


@pytest.mark.backend_independent
@pytest.mark.parametrize(("epsilon", "radius", "expected"), [
    (0.2, math.inf, "shrunk"), (0.2, math.pi, "average"), (50.0, math.inf, "average"),
])
def test_the_rule_shrinks_only_one_round_on_an_infinite_injectivity_radius(epsilon, radius,
                                                                        expected):
    params = {"local_method": "auto", "n_rounds": "auto", "n_sampled": "auto",
              "local_steps": "auto", "output": "auto", "epsilon": epsilon, "delta": 1e-5,
              "clip_norm": CLIP, "batch_size": None}
    settings = resolve_settings(params, list(SIZES), 3, True, radius)
    assert settings.output == expected
    assert (settings.n_rounds == 1) == (epsilon < 1)
    given = resolve_settings(dict(params, output="last"), list(SIZES), 3, True, radius)
    assert given.output == "last"


def test_default_release_beats_the_unshrunk_one_round_release(seed_shift):
    agents = federation(seed_shift)
    target = noiseless_release(agents)
    space, gains = spd2(), []
    for seed in range(16):
        default = PriRFed(space, epsilon=EPSILON, clip_norm=CLIP,
                          random_state=seed_shift + seed).fit(agents)
        assert (default.n_rounds_, default.output_) == (1, "shrunk")
        unshrunk = PriRFed(space, epsilon=EPSILON, clip_norm=CLIP, output="last",
                           random_state=seed_shift + seed).fit(agents)
        gains.append(np.linalg.norm(logm(to_numpy(unshrunk.estimate_)) - target)
                     - np.linalg.norm(logm(to_numpy(default.estimate_)) - target))
    gains = np.array(gains)  # paired by seed
    assert gains.mean() > 3 * gains.std(ddof=1) / math.sqrt(len(gains))


def test_neighbouring_federations_give_identical_public_outputs():
    agents = federation()
    neighbour = [points.copy() for points in agents]
    neighbour[2][7] = expm(np.diag([4.0, -4.0]))  # one record replaced, far out
    fits = []
    for data in (agents, neighbour):
        budget = PrivacyBudget(1.0, 1e-5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = PriRFed(spd2(), epsilon=EPSILON, clip_norm=CLIP, budget=budget,
                          random_state=3).fit(data)
        fits.append((est, [str(w.message) for w in caught], budget.spent_epsilon))
    (first, first_warnings, first_spent), (second, second_warnings, second_spent) = fits
    assert first.output_ == "shrunk"
    assert first_warnings == second_warnings and first_spent == second_spent
    for name in ("local_method_", "n_rounds_", "n_sampled_", "local_steps_", "output_",
                 "local_epsilon_", "local_delta_", "guarantee_", "noise_multipliers_",
                 "events_", "clip_norm_"):
        assert getattr(first, name) == getattr(second, name), name
    # the round's point (released too) differs: the replaced record is read
    assert not np.allclose(first.history_[0]["point"], second.history_[0]["point"])
