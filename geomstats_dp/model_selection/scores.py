"""A private score: the clipped mean validation loss, released with Laplace or Gaussian noise.

Adjacency: replace-one on the records of the scored data (n public). Query: the mean of the
per-record losses clipped to [0, B] (a non-finite loss counts as B), B = ``loss_bound`` a
public bound; replacing one record moves it by at most B / n, its sensitivity. The release
is minus the noisy mean (higher is better, as scikit-learn scores):

- "laplace" (the default): discrete Laplace noise on a public grid (Canonne, Kamath &
  Steinke 2020; ``privacy.discrete_noise``), floating-point safe: the clipped mean is
  rounded exactly to the grid of step gamma (a power of two below 2^-10 of B / n and of
  the scale), which moves it by at most k = floor((B / n) / gamma) + 1 grid units between
  neighbours; an exact integer draw of scale k / epsilon is added. The release is on the
  grid, every grid point has positive probability from every dataset, and it is exactly
  epsilon-DP: a ``PureEvent`` of sensitivity gamma k (the adjusted one);
- "gaussian": Gaussian noise of standard deviation z B / n, z calibrated to (epsilon,
  delta) by the exact Gaussian-DP accountant (a ``GaussianEvent``), in floating point
  (the guarantee is that of the real-valued mechanism). Under ``secure=True`` it is a
  discrete Gaussian on the grid of step gamma (a power of two below 2^-10 of B / n and of
  z B / n) of standard deviation z k' grid units, stated as a ``GaussianEvent`` of
  sensitivity gamma k', k' = floor((B / n) / gamma) + 2: one grid unit beyond the
  largest move of the rounded mean, since the discrete Gaussian's (epsilon, delta) curve
  is marginally above the continuous one at the same integer sensitivity (its Renyi
  divergences are those of the continuous Gaussian; Canonne, Kamath & Steinke 2020).

The loss is computed from the estimator's released quantities (``record_losses``); the
estimator's own release is charged by the estimator.

The scored data are the validation part of the estimator's split protocol
(``model_selection.splits``) holding every record (``held_out``). A fitted ``PriRFed`` is
scored on a federation, a list of the agents' validation arrays: n = sum_i n_i (public,
as the agents' sizes), each agent adds its own draw of the noise above (sensitivity
B / n) to its clipped loss sum divided by n, and the server sums (the agents' noise is
added where PriRFed adds its own: the server is not trusted). A record is in one agent's
release only, so the score is one event of that sensitivity; its noise is the sum of the
N agents' draws (``federated.search_split``).
"""

from fractions import Fraction

import numpy as np
from sklearn.utils.validation import check_is_fitted

from geomstats_dp._backend import get_rng
from geomstats_dp._validation import check_positive_finite, check_probability
from geomstats_dp.model_selection.splits import split_class
from geomstats_dp.model_selection.validation_losses import record_shapes
from geomstats_dp.privacy import (
    GaussianEvent,
    PureEvent,
    calibrate_gaussian,
    resolve_budget,
)
from geomstats_dp.privacy.discrete_noise import (
    RandomBits,
    discrete_gaussian,
    discrete_laplace,
    grid_sensitivity,
    grid_step,
    rounded_to_grid,
)
from geomstats_dp.privacy.stages import noisy_stage


class GridScore:
    """A score released on a public grid (module notes); subclasses define ``parameter``
    (epsilon or z), ``grid``, ``events``, ``scale`` and ``draw``.

    ``sensitivity`` in the methods is B / n, the clipped mean's; the events state the
    adjusted one (the rounded mean's, on the grid).
    """

    def noise(self, event, sensitivity, rng):
        """gamma Z: the grid step times an exact integer draw (an exact float)."""
        step, units = self.grid(self.parameter(event), sensitivity)
        return step * self.draw(event, units, RandomBits(rng))

    def release(self, clipped, count, sensitivity, event, rng):
        """gamma (round(sum(clipped) / (count gamma)) + Z), exact (a ``noisy_stage``).

        Parameters
        ----------
        clipped : numpy.ndarray, shape=[n]
            The clipped losses.
        count : int
            The public divisor n of the score.
        sensitivity : float
            B / n.
        event : PureEvent or GaussianEvent
            From ``events``.
        rng : numpy.random.Generator or SecureGenerator

        Returns
        -------
        released : float
        """
        step, _ = self.grid(self.parameter(event), sensitivity)
        return noisy_stage(step * rounded_to_grid(clipped, count, step),
                           self.noise(event, sensitivity, rng), label=event.label,
                           law=self.law, scale=self.scale(event),
                           sensitivity=event.sensitivity)


class LaplaceScore(GridScore):
    """Discrete Laplace noise on a public grid: exact pure epsilon-DP (module notes)."""

    law = "discrete_laplace"

    @staticmethod
    def parameter(event):
        """The event's epsilon."""
        return event.epsilon

    @staticmethod
    def grid(epsilon, sensitivity):
        """(gamma, k): the grid step and the rounded mean's sensitivity in grid units."""
        step = grid_step(sensitivity, sensitivity / epsilon)
        return step, grid_sensitivity(sensitivity, step)

    def events(self, epsilon, delta, sensitivity, label):
        """The one ``PureEvent`` of a score: sensitivity gamma k, scale gamma k / epsilon
        (delta unused)."""
        step, units = self.grid(epsilon, sensitivity)
        return (PureEvent(epsilon, sensitivity=step * units,
                          noise_scale=step * units / epsilon, label=label),)

    @staticmethod
    def scale(event):
        """The noise scale gamma k / epsilon."""
        return event.noise_scale

    @staticmethod
    def draw(event, units, bits):
        """An exact discrete Laplace draw of scale k / epsilon grid units."""
        return discrete_laplace(Fraction(units) / Fraction(event.epsilon), bits)


class GaussianScore:
    """Gaussian noise of standard deviation z * sensitivity, z calibrated to (epsilon, delta)."""

    law = "gaussian"

    def events(self, epsilon, delta, sensitivity, label):
        """The one ``GaussianEvent`` of a score with this ``sensitivity``."""
        z = calibrate_gaussian(epsilon, check_probability(delta, "delta"), 1)
        return (GaussianEvent.from_noise(z * sensitivity, sensitivity, label=label),)

    def noise(self, event, sensitivity, rng):
        """One Gaussian draw of the event's standard deviation."""
        return event.noise_std * float(np.asarray(rng.standard_normal()))

    @staticmethod
    def scale(event):
        """The noise standard deviation."""
        return event.noise_std

    def release(self, clipped, count, sensitivity, event, rng):
        """sum(clipped) / count plus one draw (a ``noisy_stage``); parameters as
        ``GridScore.release``."""
        return noisy_stage(float(clipped.sum()) / count, self.noise(event, sensitivity, rng),
                           label=event.label, law=self.law, scale=self.scale(event),
                           sensitivity=event.sensitivity)


class DiscreteGaussianScore(GridScore, GaussianScore):
    """The "gaussian" score under ``secure=True``: a discrete Gaussian on a public grid."""

    law = "discrete_gaussian"

    @staticmethod
    def parameter(event):
        """The event's noise multiplier z."""
        return event.noise_multiplier

    @staticmethod
    def grid(z, sensitivity):
        """(gamma, k'): the grid step and the stated sensitivity in grid units, one more
        than the rounded mean's (module notes)."""
        step = grid_step(sensitivity, z * sensitivity)
        return step, grid_sensitivity(sensitivity, step) + 1

    def events(self, epsilon, delta, sensitivity, label):
        """The one ``GaussianEvent`` of multiplier z, sensitivity gamma k'."""
        (continuous,) = super().events(epsilon, delta, sensitivity, label)
        z = continuous.noise_multiplier
        step, units = self.grid(z, sensitivity)
        return (GaussianEvent(z, sensitivity=step * units, noise_std=z * step * units,
                              label=label),)

    @staticmethod
    def draw(event, units, bits):
        """An exact discrete Gaussian draw of standard deviation z k' grid units."""
        return discrete_gaussian((Fraction(event.noise_multiplier) * units) ** 2, bits)


SCORE_METHODS = ("laplace", "gaussian")


def score_mechanism(method, secure=False):
    """The score mechanism named ``method`` ("laplace" or "gaussian"); with ``secure``, the
    "gaussian" one is the discrete Gaussian on a grid."""
    if method not in SCORE_METHODS:
        raise ValueError(f"method must be one of {SCORE_METHODS}, got {method!r}")
    if method == "laplace":
        return LaplaceScore()
    return DiscreteGaussianScore() if secure else GaussianScore()


def private_score(estimator, X, y=None, *, epsilon, loss_bound, delta=0.0, method="laplace",
                  budget=None, random_state=None, secure=False):
    """Release minus the clipped mean loss of a fitted estimator on (X, y), privately.

    The budget is checked before any value of X or y is read; the score is then charged.
    Adjacency, sensitivity and accountant: see the module notes.

    Parameters
    ----------
    estimator : estimator of geomstats_dp
        Fitted (see ``record_losses`` for the loss of each estimator).
    X : array-like, shape=[n_samples, ...]; for PriRFed a list of array-like, each
        shape=[n_i, ...]
        Held-out records (n_samples public); for PriRFed, each agent's.
    y : array-like, shape=[n_samples, ...], optional
        Their targets, for estimators fitted on (X, y).
    epsilon : float
        Of this score, > 0.
    loss_bound : float
        B, the public bound the per-record losses are clipped to.
    delta : float
        In (0, 1) for "gaussian"; unused by "laplace".
    method : {"laplace", "gaussian"}
        The noise (module notes): "laplace" is discrete and floating-point safe.
    budget : PrivacyBudget, optional
        Charged; default the active one (``with budget:``), else a fresh budget (epsilon,
        delta) recorded in the default ledger.
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw from the operating system's entropy (``random_state`` must then be None);
        "gaussian" is then a discrete Gaussian on a grid (module notes).

    Returns
    -------
    score : float
        -(clipped mean loss + noise); for PriRFed the noise is the sum of the agents'.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        ``estimator`` is not fitted.
    TypeError, ValueError
        X or y holds strings, or records of another shape than the estimator's
        (``validation_losses.record_shapes``); before the budget is checked.
    """
    mechanism = score_mechanism(method, secure)
    rng = get_rng(random_state, secure)
    epsilon = check_positive_finite(epsilon, "epsilon")
    loss_bound = check_positive_finite(loss_bound, "loss_bound")
    check_is_fitted(estimator)
    # shapes only: n_validation is public
    scored = split_class(estimator).held_out(X, y, shapes=record_shapes(estimator))
    events = mechanism.events(epsilon, delta, loss_bound / scored.n_validation,
                              f"private score of {type(estimator).__name__}")
    budget = resolve_budget(budget, epsilon, delta)
    budget.check(*events)
    noisy_loss = scored.noisy_loss(scored.validation_losses(estimator), loss_bound,
                                   mechanism, events[0], rng)
    budget.spend(*events)
    return -noisy_loss
