"""Helpers of the mechanism tests: an independent Gaussian-DP composition (not the
package's accountant: a release of noise multiplier z is (1/z)-GDP, and mu-GDP releases
compose to sqrt(sum mu_i^2)-GDP, Dong, Roth & Su 2022) and the stages of one release."""

import math

import numpy as np
from scipy.stats import norm

from geomstats_dp.privacy.stages import observe_stages


def gdp_delta(epsilon, mu):
    """delta(epsilon) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    return float(norm.cdf(-epsilon / mu + mu / 2)
                 - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2))


def composed_mu(events):
    """sqrt(sum_i n_steps_i / z_i^2) of Gaussian events (full batches)."""
    return math.sqrt(sum(event.n_steps / event.noise_multiplier**2 for event in events))


def stages_of(mechanism, data, seed):
    """The stages of one release of ``mechanism`` on ``data`` (label -> stage), released
    unchanged, and the release."""
    stages = {}

    def keep(stage):
        stages[stage.label] = stage
        return stage.release()

    with observe_stages(keep):
        fitted = mechanism.release(data, None, np.random.default_rng(seed))
    return stages, fitted
