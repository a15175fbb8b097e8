"""A black-box audit with its power shown: the honest release passes, its broken twin fails.

``audit_release`` runs a release ``fit(data, seed)`` many times on two neighbouring
datasets through the library's auditor (``geomstats_dp.privacy.audit``: a threshold
event on a scalar statistic of the release, Clopper-Pearson bounds on its two
probabilities, so that with probability >= ``confidence`` the mechanism's epsilon is at
least the bound). A bound above the claim refutes the claim. A bound below it proves
nothing unless the same audit refutes a twin that is less private: ``halved_noise``
releases every stage (``privacy.stages``) with half its noise, which doubles a Gaussian
stage's mu and a Laplace stage's epsilon, so a claim near the honest mechanism's
privacy is far below its twin's. ``check_audit`` asserts both.

The power comes from the inputs (Nasr et al. 2021; Jagielski, Ullman & Oprea 2020):
worst-case neighbours under the stated adjacency (the differing record moves every
clipped statistic by its whole sensitivity), a statistic that projects the release onto
the direction in which that record pushes it (by default, the difference of the mean
releases on a pilot run, independent of the audited runs), few records, few
dimensions, and a claim whose twin a thousand runs resolve: for a Gaussian release
(epsilon, delta) = (2, 0.1), Gaussian-DP mu 1.37 against the twin's 2.74.
"""

import contextlib
import warnings

import numpy as np
from sklearn.base import clone

from geomstats_dp._backend import to_numpy
from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.privacy.audit import audit
from geomstats_dp.privacy.stages import observe_stages


def _halve(stage):
    if stage.law != "exponential":
        return stage.statistic + 0.5 * stage.noise
    if stage.dist is None:  # a choice among candidates
        return stage.choice
    # a continuous exponential mechanism centred on its statistic: the chord midpoint
    return stage.statistic + 0.5 * (stage.choice - stage.statistic)


@contextlib.contextmanager
def halved_noise():
    """Within the block every stage releases its statistic plus half its noise.

    The broken twin of every mechanism that releases through ``privacy.stages``. An
    exponential-mechanism stage over candidates keeps its choice; one centred on its
    statistic (a point, with a ``dist``: the Riemannian Laplace law) releases the
    midpoint of the chord from the statistic to its draw, the draw of the law with half
    the scale on a flat space (off the space on a curved one).
    """
    with observe_stages(_halve):
        yield


def audit_release(fit, dataset, neighbour, *, delta, n_runs, statistic=None,
                  confidence=0.99, calibration_fraction=0.5, random_state=0):
    """Audit the release ``fit(data, seed)`` on two neighbouring datasets.

    Parameters
    ----------
    fit : callable
        ``fit(data, seed) -> release``, an array of any shape (or a scalar); ``seed`` is
        an int drawn by the auditor, to pass as the mechanism's ``random_state``.
    dataset, neighbour : object
        Worst-case neighbours under the mechanism's adjacency, passed to ``fit``.
    delta : float
        The delta of the claim.
    n_runs : int
        Runs per dataset (calibration and evaluation splits together).
    statistic : callable, optional
        numpy array [n_runs, *release.shape] -> [n_runs]; None: the release must be one
        number.
    confidence : float
        Probability that the bound holds, in (0, 1).
    calibration_fraction : float
        Share of the runs choosing the event, in (0, 1).
    random_state : int or numpy.random.Generator
        Seed of the auditor.

    Returns
    -------
    result : geomstats_dp.privacy.audit.AuditResult
    """

    def mechanism(data, rng):
        return np.asarray(to_numpy(fit(data, int(rng.integers(2**31 - 1)))), dtype=float)

    return audit(mechanism, dataset, neighbour, n_runs=n_runs,
                 statistic=None if statistic is None else (
                     lambda outputs: statistic(np.asarray(to_numpy(outputs)))),
                 delta=delta, confidence=confidence,
                 calibration_fraction=calibration_fraction,
                 random_state=np.random.default_rng(random_state))


def projection_statistic(direction):
    """Statistic T(r) = <vec(r), direction>: the release's coordinate along a direction.

    Parameters
    ----------
    direction : array-like
        Same number of entries as a release.

    Returns
    -------
    statistic : callable
        numpy array [n, *release.shape] -> [n].
    """
    direction = np.asarray(direction, dtype=float).reshape(-1)

    def statistic(releases):
        return releases.reshape(len(releases), -1) @ direction

    return statistic


def pilot_direction(fit, dataset, neighbour, *, n_runs, random_state):
    """The difference of the mean releases on ``dataset`` and ``neighbour`` over a pilot.

    ``n_runs`` runs on each, seeded from ``random_state`` (use a seed the audit does not
    use, so that the audit's runs are independent of the statistic it is given).

    Returns
    -------
    direction : numpy array, shape=[release.size]
    """
    rng = np.random.default_rng(random_state)
    means = [np.mean([np.asarray(to_numpy(fit(data, int(rng.integers(2**31 - 1)))),
                                 dtype=float).reshape(-1) for _ in range(n_runs)], axis=0)
             for data in (dataset, neighbour)]
    return means[0] - means[1]


def estimator_fit(estimator, release=None):
    """``fit((X, y), seed)``: ``release(fitted)`` (default ``estimate_``) of a new copy of
    ``estimator`` fitted on (X, y) (y None: on X) with ``random_state=seed`` and a fresh
    budget of its own (epsilon, delta).

    Each run builds a new estimator from the parameters of one clone made here (what
    ``sklearn.base.clone`` does, less its deep copy of every parameter on every run: a fit
    writes none of its parameters, scikit-learn's ``check_estimators_overwrite_params``),
    so that no fitted state passes from one run to the next.
    """
    template = clone(estimator)
    params = template.get_params(deep=False)
    release = release or (lambda fitted: fitted.estimate_)

    def fit(data, seed):
        X, y = data
        settings = {**params, "random_state": seed}
        if "budget" in params:
            settings["budget"] = PrivacyBudget(params["epsilon"], params.get("delta") or 0.0)
        model = type(template)(**settings)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tiny data: the noise dominates, by design
            fitted = model.fit(X) if y is None else model.fit(X, y)
        return release(fitted)

    return fit


def audit_twins(fit, X, X2, *, delta, n_runs=1000, statistic=None, confidence=0.99,
                calibration_fraction=0.5, random_state=0):
    """The same audit of the release ``fit`` and of its twin under ``halved_noise``.

    Parameters and defaults as in ``check_audit``; ``fit(data, seed) -> release``,
    X and X2 passed to it as they are.

    Returns
    -------
    honest, broken : geomstats_dp.privacy.audit.AuditResult
    """
    if statistic is None:
        statistic = projection_statistic(pilot_direction(
            fit, X, X2, n_runs=max(n_runs // 10, 20), random_state=random_state + 1))
    settings = {"delta": delta, "n_runs": n_runs, "statistic": statistic,
                "confidence": confidence, "calibration_fraction": calibration_fraction,
                "random_state": random_state}
    honest = audit_release(fit, X, X2, **settings)
    with halved_noise():
        broken = audit_release(fit, X, X2, **settings)
    return honest, broken


def check_audit(estimator, X, X2, y=None, y2=None, *, statistic=None, release=None,
                epsilon=None, delta=None, n_runs=1000, confidence=0.99,
                calibration_fraction=0.5, random_state=0):
    """The audit on (X, y) and its neighbour (X2, y2) does not refute the estimator's
    (epsilon, delta) claim, and refutes it for the twin drawing half the noise.

    The property: an honest mechanism is (epsilon, delta)-DP, so the audit's lower
    bound exceeds epsilon with probability at most 1 - ``confidence``; the twin
    (``halved_noise``) is not, and an audit with power refutes it.

    Parameters
    ----------
    estimator : estimator of geomstats_dp
        Unfitted template with ``epsilon``, ``delta`` (optional), ``random_state`` and
        ``budget`` parameters.
    X, X2 : array-like (or what ``fit`` takes)
        Worst-case neighbouring datasets under the estimator's adjacency.
    y, y2 : array-like, optional
        Their targets.
    statistic : callable, optional
        numpy array [n, *release.shape] -> [n]; default ``projection_statistic`` on
        ``pilot_direction`` (n_runs / 10 pilot runs a dataset, seeds apart from the
        audit's).
    release : callable, optional
        ``release(fitted) -> array``; default the fitted ``estimate_``.
    epsilon, delta : float, optional
        The claim; default the estimator's parameters (delta 0 when it has none).
    n_runs : int
        Runs per dataset and per audit.
    confidence : float
        Of each audit's bound.
    calibration_fraction : float
        Share of the runs choosing the event.
    random_state : int
        Seed of the audits (the pilot uses the next one).

    Raises
    ------
    AssertionError
        Naming the estimator, the bounds and the claim, when the honest release is
        refuted or the twin is not.
    """
    params = estimator.get_params()
    epsilon = params["epsilon"] if epsilon is None else epsilon
    delta = (params.get("delta") or 0.0) if delta is None else delta
    honest, broken = audit_twins(
        estimator_fit(estimator, release), (X, y), (X2, y2),
        delta=delta, n_runs=n_runs, statistic=statistic, confidence=confidence,
        calibration_fraction=calibration_fraction, random_state=random_state)
    assert_twins(honest, broken, epsilon, type(estimator).__name__)


def assert_twins(honest, broken, epsilon, name):
    """Raise AssertionError, naming ``name``, the bounds and the claim, unless the honest
    audit does not refute ``epsilon`` and the broken twin's does."""
    assert not honest.refutes(epsilon), (
        f"check_audit: the audit refutes {name}'s claim ({epsilon}, {honest.delta}): "
        f"epsilon >= {honest.epsilon_lower_bound:.3f} at confidence {honest.confidence} "
        f"({honest})")
    assert broken.refutes(epsilon), (
        f"check_audit: no power: the twin of {name} with half its noise is not refuted "
        f"at epsilon {epsilon} (bound {broken.epsilon_lower_bound:.3f}, honest "
        f"{honest.epsilon_lower_bound:.3f}, {2 * broken.n_evaluation} runs evaluated; "
        f"{broken})")
