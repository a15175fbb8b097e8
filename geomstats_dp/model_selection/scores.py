"""A private score: the clipped mean validation loss, released with Laplace or Gaussian noise.

Adjacency: replace-one on the records of the scored data (n public). Query: the mean of the
per-record losses clipped to [0, B] (a non-finite loss counts as B), B = ``loss_bound`` a
public bound; replacing one record moves it by at most B / n, its sensitivity. The release
is minus the noisy mean (higher is better, as scikit-learn scores):

- "laplace": Laplace noise of scale (B / n) / epsilon, epsilon-DP (a ``PureEvent``);
- "gaussian": Gaussian noise of standard deviation z B / n, z calibrated to (epsilon,
  delta) by the exact Gaussian-DP accountant (a ``GaussianEvent``).

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


class LaplaceScore:
    """Laplace noise of scale sensitivity / epsilon: pure epsilon-DP."""

    def events(self, epsilon, delta, sensitivity, label):
        """The one ``PureEvent`` of a score with this ``sensitivity`` (delta unused)."""
        return (PureEvent(epsilon, sensitivity=sensitivity, noise_scale=sensitivity / epsilon,
                          label=label),)

    def noise(self, event, rng):
        """One Laplace draw of the event's scale (by inverse transform of ``rng.random``)."""
        uniform = float(rng.random()) - 0.5  # in [-1/2, 1/2): keep |uniform| < 1/2
        magnitude = -np.log1p(-2 * min(abs(uniform), 0.5 - 2.0**-54))
        return event.noise_scale * np.sign(uniform) * magnitude


class GaussianScore:
    """Gaussian noise of standard deviation z * sensitivity, z calibrated to (epsilon, delta)."""

    def events(self, epsilon, delta, sensitivity, label):
        """The one ``GaussianEvent`` of a score with this ``sensitivity``."""
        z = calibrate_gaussian(epsilon, check_probability(delta, "delta"), 1)
        return (GaussianEvent.from_noise(z * sensitivity, sensitivity, label=label),)

    def noise(self, event, rng):
        """One Gaussian draw of the event's standard deviation."""
        return event.noise_std * float(np.asarray(rng.standard_normal()))


SCORE_METHODS = {"laplace": LaplaceScore(), "gaussian": GaussianScore()}


def score_mechanism(method):
    """The score mechanism named ``method`` ("laplace" or "gaussian")."""
    if method not in SCORE_METHODS:
        raise ValueError(f"method must be one of {tuple(SCORE_METHODS)}, got {method!r}")
    return SCORE_METHODS[method]


def private_score(estimator, X, y=None, *, epsilon, loss_bound, delta=0.0, method="laplace",
                  budget=None, random_state=None):
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
    budget : PrivacyBudget, optional
        Charged; default the active one (``with budget:``), else a fresh budget (epsilon,
        delta) recorded in the default ledger.
    random_state : None, int or numpy.random.Generator

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
    mechanism = score_mechanism(method)
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
                                   mechanism, events[0], get_rng(random_state))
    budget.spend(*events)
    return -noisy_loss
