"""From an estimator's settings to a calibrated optimiser strategy and its privacy events.

This is where the optimiser (which knows how its noisy queries are built) meets the
accountant (which knows what a query's noise buys): each ``NoisyQuery`` of a strategy
becomes one ``GaussianEvent``, so the noise drawn and the noise accounted come from one
configuration. It is the one home of the gradient families (``FAMILIES``: what "rgd",
"rsgd" and "rsvrg" are); the clipped-sum sensitivity's is
``optim.clipping.clipped_sum_sensitivity``.
"""

from collections.abc import Callable
from dataclasses import dataclass

from geomstats_dp.optim import FullBatch, MiniBatch, VarianceReduced
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.optim.strategies import weight_factor
from geomstats_dp.privacy import GaussianEvent, calibrate_gaussian, calibrate_svrg

EVENT_SAMPLING = {"none": "full", "without_replacement": "without_replacement",
                  "poisson": "poisson"}


@dataclass(frozen=True)
class GradientPlan:
    """A calibrated run: what to give ``minimize`` and what to charge the budget.

    Attributes
    ----------
    strategy : FullBatch, MiniBatch or VarianceReduced
    events : tuple of GaussianEvent
        One per noisy query of the run, with sensitivity and noise stated.
    noise_multipliers : dict
        Query name -> noise standard deviation / sensitivity of that query.
    """

    strategy: object
    events: tuple
    noise_multipliers: dict


def _full_batch(epsilon, delta, n_samples, n_iter, clip_norm, factor, **settings):
    z = calibrate_gaussian(epsilon, delta, n_iter)
    return FullBatch(clip_norm, clipped_sum_sensitivity(clip_norm, n_samples, factor,
                                                        multiplier=z))


def _mini_batch(epsilon, delta, n_samples, n_iter, clip_norm, factor, batch_size, sampling,
                sampling_rate, **settings):
    strategy = MiniBatch(batch_size, clip_norm, 1.0, sampling, sampling_rate)
    rate = strategy.rate(n_samples)
    adjacency = "add_remove" if sampling == "poisson" else "replace_one"
    z = calibrate_gaussian(epsilon, delta, n_iter, rate, sampling, adjacency)
    noise_std = clipped_sum_sensitivity(clip_norm, batch_size, factor, adjacency, z)
    return MiniBatch(batch_size, clip_norm, noise_std, sampling, sampling_rate)


def _variance_reduced(epsilon, delta, n_samples, n_iter, clip_norm, factor, inner_steps,
                      clip_norm_single, **settings):
    calibration = calibrate_svrg(epsilon, delta, n_samples, n_iter, inner_steps,
                                 clip_full=clip_norm * factor,
                                 clip_single=clip_norm_single * factor)
    return VarianceReduced(inner_steps, clip_norm, clip_norm_single,
                           calibration.sigma_full, calibration.sigma_single)


@dataclass(frozen=True)
class GradientFamily:
    """What a gradient method is, decided here once: its label, whether it samples
    batches (Poisson sampling applies), whether an iteration is an epoch of inner steps,
    its default output and the calibrated strategy it runs.

    Attributes
    ----------
    name : str
    label : str
    batched : bool
    epochs : bool
    default_output : str
    strategy : callable
        ``strategy(epsilon, delta, n_samples, n_iter, clip_norm, factor, **settings)``:
        the calibrated ``optim`` strategy.
    """

    name: str
    label: str
    batched: bool
    epochs: bool
    default_output: str
    strategy: Callable

    def n_manifold_steps(self, n_iter, inner_steps):
        """Manifold steps of a run: n_iter, or n_iter x inner_steps for epochs."""
        return n_iter * (inner_steps if self.epochs else 1)


FAMILIES = {
    "rgd": GradientFamily("rgd", "DP-RGD", False, False, "last", _full_batch),
    "rsgd": GradientFamily("rsgd", "DP-RSGD", True, False, "weighted_average", _mini_batch),
    "rsvrg": GradientFamily("rsvrg", "DP-RSVRG", False, True, "last", _variance_reduced),
}
GRADIENT_METHODS = tuple(FAMILIES)


def n_manifold_steps(method, n_iter, inner_steps):
    """Manifold steps of a run of ``method`` (``GradientFamily.n_manifold_steps``)."""
    return FAMILIES[method].n_manifold_steps(n_iter, inner_steps)


def plan_gradient_release(method, epsilon, delta, n_samples, n_iter, clip_norm,
                          batch_size=None, inner_steps=None, clip_norm_single=None,
                          sampling="without_replacement", label="", weights=None,
                          sampling_rate=None):
    """Calibrate the noise of a DP-RGD / DP-RSGD / DP-RSVRG run to (epsilon, delta).

    Parameters
    ----------
    method : {"rgd", "rsgd", "rsvrg"}
    epsilon, delta : float
        Target of this run alone.
    n_samples : int
        n (replace-one: public); for Poisson sampling, the declared public size.
    n_iter : int
        Steps (rgd, rsgd) or epochs (rsvrg).
    clip_norm : float
        C, in the Riemannian norm (C0 of the full gradient for rsvrg).
    batch_size, inner_steps : int, optional
        For rsgd and rsvrg.
    clip_norm_single : float, optional
        rsvrg: C1, the clip norm of the single-sample gradients.
    sampling : {"without_replacement", "poisson"}
        rsgd batches: replace-one adjacency, or Poisson with add/remove adjacency.
    label : str
        Prefix of the event labels.
    weights : numpy.ndarray, shape=[n_samples], optional
        Normalised public sample weights; sensitivities scale with n max_i w_i. None is
        uniform.
    sampling_rate : float, optional
        Poisson: the public probability that a record enters a batch.

    Returns
    -------
    plan : GradientPlan
    """
    family = FAMILIES[method]
    label = f"{label} {family.label}".strip()
    factor = weight_factor(weights, n_samples)  # exactly 1 for uniform weights
    strategy = family.strategy(epsilon, delta, n_samples, n_iter, clip_norm, factor,
                               batch_size=batch_size, inner_steps=inner_steps,
                               clip_norm_single=clip_norm_single, sampling=sampling,
                               sampling_rate=sampling_rate)
    return _plan(strategy, n_samples, weights, n_iter, label)


def _plan(strategy, n_samples, weights, n_iter, label):
    """Turn each query of ``strategy`` into the event that accounts for it."""
    events, multipliers = [], {}
    for query in strategy.queries(n_samples, n_iter, weights):
        sensitivity = query.sensitivity / 2 if query.sampling == "poisson" else query.sensitivity
        event = GaussianEvent.from_noise(
            query.noise_std,
            sensitivity,
            n_steps=query.n_releases,
            sampling_rate=query.sampling_rate,
            sampling=EVENT_SAMPLING[query.sampling],
            adjacency="add_remove" if query.sampling == "poisson" else "replace_one",
            label=f"{label}: {query.name}",
        )
        events.append(event)
        multipliers[query.name] = event.noise_multiplier
    return GradientPlan(strategy, tuple(events), multipliers)

